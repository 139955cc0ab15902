"""A page's character encoding, chosen as browsers choose it (WHATWG Encoding and HTML).

:func:`page_encoding` follows the HTML standard's sniffing order: a byte-order mark,
then the ``Content-Type`` charset, then :func:`prescan` of the first
:data:`PRESCAN_BYTES` bytes, and without any of them UTF-8 if the bytes are valid UTF-8,
else windows-1252 (the default browsers use for Western locales).  Only the labels of
the WHATWG Encoding Standard count: ``utf-7``, ``utf-32``, ``rot13`` and other names
Python knows but browsers refuse are ignored like unknown names (a ``charset=utf-7``
page could otherwise smuggle ``+ADw-a href...`` markup past a browser-faithful reading).
Single-byte pages decode every byte (bytes windows-1252 leaves undefined map to the C1
control of the same number, as in WHATWG's index), so they never produce U+FFFD.

:func:`prescan` is the standard's "prescan a byte stream to determine its encoding"
(HTML 13.2.3.2, with "get an attribute", "get an XML encoding" and the "algorithm for
extracting a character encoding from a meta element"): it skips comments and reads
every tag's attributes, so a ``<meta charset>`` inside a comment or an attribute value
counts for nothing, and a ``content=...charset=...`` counts only beside
``http-equiv=content-type``; a ``<meta>`` naming UTF-16 means UTF-8 and one naming
x-user-defined windows-1252.  A declaration the HTML parser would meet only after the
first 1024 bytes (its "change the encoding") is not looked for.

:func:`url_encoding` is the encoding a page's URL queries are percent-encoded in
(UTF-8 for UTF-16 and replacement pages, as the URL standard says).
"""

from __future__ import annotations

import codecs
import functools
import re

__all__ = ["PRESCAN_BYTES", "decode_page", "lookup_label", "page_encoding", "prescan",
           "url_encoding"]

# WHATWG Encoding Standard labels -> Python codecs (encodings Python lacks are omitted
# and so treated as unknown: x-user-defined, x-mac-cyrillic variants Python names alike).
_LABELS: dict[str, tuple[str, ...]] = {
    "utf-8": ("unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8",
              "x-unicode20utf8"),
    "cp866": ("866", "cp866", "csibm866", "ibm866"),
    "iso8859-2": ("csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592",
                  "iso_8859-2", "iso_8859-2:1987", "l2", "latin2"),
    "iso8859-3": ("csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593",
                  "iso_8859-3", "iso_8859-3:1988", "l3", "latin3"),
    "iso8859-4": ("csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594",
                  "iso_8859-4", "iso_8859-4:1988", "l4", "latin4"),
    "iso8859-5": ("csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso8859-5",
                  "iso88595", "iso_8859-5", "iso_8859-5:1988"),
    "iso8859-6": ("arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic",
                  "ecma-114", "iso-8859-6", "iso-8859-6-e", "iso-8859-6-i", "iso-ir-127",
                  "iso8859-6", "iso88596", "iso_8859-6", "iso_8859-6:1987"),
    "iso8859-7": ("csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7",
                  "iso-ir-126", "iso8859-7", "iso88597", "iso_8859-7", "iso_8859-7:1987",
                  "sun_eu_greek"),
    "iso8859-8": ("csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-8859-8-e",
                  "iso-ir-138", "iso8859-8", "iso88598", "iso_8859-8", "iso_8859-8:1988",
                  "visual", "csiso88598i", "iso-8859-8-i", "logical"),
    "iso8859-10": ("csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910",
                   "l6", "latin6"),
    "iso8859-13": ("iso-8859-13", "iso8859-13", "iso885913"),
    "iso8859-14": ("iso-8859-14", "iso8859-14", "iso885914"),
    "iso8859-15": ("csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15",
                   "l9"),
    "iso8859-16": ("iso-8859-16",),
    "koi8-r": ("cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"),
    "koi8-u": ("koi8-ru", "koi8-u"),
    "mac-roman": ("csmacintosh", "mac", "macintosh", "x-mac-roman"),
    "cp874": ("dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"),
    "cp1250": ("cp1250", "windows-1250", "x-cp1250"),
    "cp1251": ("cp1251", "windows-1251", "x-cp1251"),
    "cp1252": ("ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819",
               "iso-8859-1", "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1",
               "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252"),
    "cp1253": ("cp1253", "windows-1253", "x-cp1253"),
    "cp1254": ("cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599",
               "iso_8859-9", "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254"),
    "cp1255": ("cp1255", "windows-1255", "x-cp1255"),
    "cp1256": ("cp1256", "windows-1256", "x-cp1256"),
    "cp1257": ("cp1257", "windows-1257", "x-cp1257"),
    "cp1258": ("cp1258", "windows-1258", "x-cp1258"),
    "mac-cyrillic": ("x-mac-cyrillic", "x-mac-ukrainian"),
    "gb18030": ("chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80",
                "gbk", "iso-ir-58", "x-gbk", "gb18030"),
    "big5hkscs": ("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"),
    "euc_jp": ("cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"),
    "iso2022_jp": ("csiso2022jp", "iso-2022-jp"),
    "cp932": ("csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis",
              "windows-31j", "x-sjis"),
    "cp949": ("cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987",
              "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949"),
    "replacement": ("csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext",
                    "iso-2022-kr", "replacement"),
    "utf-16-be": ("unicodefffe", "utf-16be"),
    "utf-16-le": ("csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16",
                  "utf-16le"),
}
_BY_LABEL = {label: codec for codec, labels in _LABELS.items() for label in labels}
_UTF16 = frozenset(("utf-16-be", "utf-16-le"))
_MULTI_BYTE = frozenset(("utf-8", "gb18030", "big5hkscs", "euc_jp", "iso2022_jp", "cp932",
                         "cp949")) | _UTF16
_WHITESPACE = "\t\n\f\r "


def _c1_fallback(exc: UnicodeError) -> tuple[str, int]:
    """WHATWG single-byte indexes map bytes a Python table leaves undefined to U+0080+."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "".join(chr(b) for b in exc.object[exc.start:exc.end]), exc.end


codecs.register_error("webcrawl-c1", _c1_fallback)


def lookup_label(label: str | None) -> str | None:
    """The Python codec of a WHATWG encoding label, or None for unknown labels.

    >>> lookup_label(" Latin1 "), lookup_label("utf-7"), lookup_label("Shift_JIS")
    ('cp1252', None, 'cp932')
    """
    if not label:
        return None
    return _BY_LABEL.get(label.strip(_WHITESPACE).lower())


def page_encoding(body: bytes, declared: str | None) -> str:
    """The Python codec a page is decoded with (see the module docstring)."""
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8"
    if body.startswith(b"\xfe\xff"):
        return "utf-16-be"
    if body.startswith(b"\xff\xfe"):
        return "utf-16-le"
    codec = lookup_label(declared)
    if codec is not None:
        return codec
    codec = prescan(body[:PRESCAN_BYTES])
    if codec is not None:
        return codec
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the body cap still counts as UTF-8.
        if exc.start < len(body) - 3:
            return "cp1252"
    return "utf-8"


#: bytes :func:`prescan` reads (the HTML standard's advice: "the first 1024 bytes")
PRESCAN_BYTES = 1024
#: the standard's "get an attribute" after the spaces and slashes it skips: a name and
#: its value (quoted with ", with ' or bare); possessive and atomic, so nothing backtracks
_NAME_AND_VALUE = rb"""
    ([^\t\n\f\r />][^\t\n\f\r /=>]*+)
    (?> (?=[/>])
      | [\t\n\f\r ]*+ =[\t\n\f\r ]*+
        (?> "([^"]*+)" | '([^']*+)' | (?=>)
          | ([^\t\n\f\r >"'][^\t\n\f\r >]*+)(?=[\t\n\f\r >]) )
      | [\t\n\f\r ]*+(?=[^=]) )"""
#: one "get an attribute" of a ``<meta``: the tag's end (group 1) or an attribute
#: (groups 2-5); no match: the bytes ran out
_ATTRIBUTE = re.compile(rb"[\t\n\f\r /]*+(?:(>)|" + _NAME_AND_VALUE + rb")", re.X | re.S)
#: "get an attribute" until there is none: a tag's attributes and the '>' ending it (a
#: quoted value may hold '>' or '<meta')
_ATTRIBUTES = rb"(?>[\t\n\f\r /]*+" + _NAME_AND_VALUE + rb")*+[\t\n\f\r /]*+>"
_TAG_END = re.compile(_ATTRIBUTES, re.X | re.S)
#: the prescan's loop from one position to the next ``<meta`` + space or slash, in one
#: match: comments (``<!-->`` ends where it starts), other tags with their attributes,
#: ``<!``, ``</``, ``<?`` markup to the next '>', and text are skipped.  No match: no
#: such ``<meta`` before the bytes run out.
_TO_META = re.compile(rb"""
    (?> <!(?=--)(?>.*?-->)
      | <(?![mM][eE][tT][aA][\t\n\f\r /])/?[A-Za-z][^\t\n\f\r >]*+""" + _ATTRIBUTES + rb"""
      | <(?:!(?!--)|/(?![A-Za-z])|\?)[^>]*+>
      | [^<]++
      | <(?![!/?A-Za-z]) )*+
    <[mM][eE][tT][aA](?=[\t\n\f\r /])""", re.X | re.S)
_CHARSET_EQUALS = re.compile(rb"charset[\t\n\f\r ]*+=[\t\n\f\r ]*+")
_LABEL_END = re.compile(rb"[\t\n\f\r ;]")
_XML_ENCODING = re.compile(rb"""encoding[\x00- ]*+=[\x00- ]*+(?:"([^"]*)"|'([^']*)')""")
#: what "getting an encoding" gives for a label that names none (distinct from None)
_FAILURE = "failure"


def prescan(head: bytes) -> str | None:
    """The codec a page's first bytes declare, by the HTML standard's prescan (see the
    module docstring), or None.

    >>> prescan(b'<!-- <meta charset="koi8-r"> --><meta charset="latin2">')
    'iso8859-2'
    >>> prescan(b'<meta content="text/html; charset=koi8-r">') is None  # no http-equiv
    True
    """
    if head.startswith(b"<\0?\0x\0"):
        return "utf-16-le"
    if head.startswith(b"\0<\0?\0x"):
        return "utf-16-be"
    pos = 0
    while (meta := _TO_META.match(head, pos)) is not None:
        tag = _TAG_END.match(head, meta.end())
        if tag is None:
            break
        pos = tag.end()
        # A declaration needs "charset" in a name or a value: most metas skip the
        # attribute-by-attribute reading (viewport, description ...).
        if b"charset" in head[meta.end():pos].lower():
            codec = _meta(head, meta.end())
            if codec is not None:
                return codec
    return _xml_encoding(head)  # the bytes ran out: the standard's "get an XML encoding"


def _meta(head: bytes, pos: int) -> str | None:
    """The codec a whole ``<meta`` tag (its attributes from ``pos``) declares, or None."""
    seen: set[bytes] = set()
    got_pragma = False
    need_pragma: bool | None = None
    charset: str | None = None
    while (attribute := _ATTRIBUTE.match(head, pos)) is not None:
        pos = attribute.end()
        end, name, double, single, bare = attribute.groups()
        if end:
            break
        name = name.lower()
        if name in seen:
            continue
        seen.add(name)
        value = (double or single or bare or b"").lower()
        if name == b"http-equiv":
            got_pragma = got_pragma or value == b"content-type"
        elif name == b"content":
            declared = _content_charset(value)
            if declared not in (None, _FAILURE) and charset is None:
                charset, need_pragma = declared, True
        elif name == b"charset":
            charset, need_pragma = _get_encoding(value), False
    if need_pragma is None or (need_pragma and not got_pragma) or charset == _FAILURE:
        return None
    return "utf-8" if charset in _UTF16 else charset


def _content_charset(value: bytes) -> str | None:
    """The standard's "algorithm for extracting a character encoding from a meta
    element" on a ``content`` value: a codec, :data:`_FAILURE` or None (nothing)."""
    pos = 0
    while (at := value.find(b"charset", pos)) >= 0:
        equals = _CHARSET_EQUALS.match(value, at)
        if equals is None:  # no '=' after it: look further
            pos = at + 7
            continue
        start = equals.end()
        first = value[start:start + 1]
        if first in (b'"', b"'"):
            end = value.find(first, start + 1)
            return None if end < 0 else _get_encoding(value[start + 1:end])
        if not first:
            return None
        end_of_label = _LABEL_END.search(value, start)
        return _get_encoding(value[start:end_of_label.start() if end_of_label else None])
    return None


def _xml_encoding(head: bytes) -> str | None:
    """The standard's "get an XML encoding": ``<?xml ... encoding="label"``, or None."""
    if not head.startswith(b"<?xml"):
        return None
    end = head.find(b">")
    if end < 0:
        return None
    at = head.find(b"encoding", 0, end)
    found = _XML_ENCODING.match(head, at) if at >= 0 else None
    if found is None:
        return None
    label = found.group(1) if found.group(1) is not None else found.group(2)
    codec = _get_encoding(label)
    if codec == _FAILURE or any(byte <= 0x20 for byte in label):
        return None
    return "utf-8" if codec in _UTF16 else codec


@functools.lru_cache(maxsize=256)
def _get_encoding(label: bytes) -> str:
    """The codec of a label (isomorphic decoded), or :data:`_FAILURE`; x-user-defined,
    which Python lacks, is windows-1252 here (the prescan's own mapping)."""
    text = label.decode("latin-1")
    codec = lookup_label(text)
    if codec is not None:
        return codec
    return "cp1252" if text.strip(_WHITESPACE).lower() == "x-user-defined" else _FAILURE


def decode_page(body: bytes, codec: str) -> str:
    """Decode ``body`` with a codec from :func:`page_encoding`."""
    if codec == "replacement":
        return ""  # browsers show such a page as one U+FFFD: it has no links
    errors = "replace" if codec in _MULTI_BYTE else "webcrawl-c1"
    return body.decode(codec, errors=errors).lstrip("\ufeff")


def url_encoding(codec: str) -> str:
    """The encoding a page's URL queries use (WHATWG URL: UTF-16 pages use UTF-8)."""
    return "utf-8" if codec in _UTF16 or codec == "replacement" else codec
