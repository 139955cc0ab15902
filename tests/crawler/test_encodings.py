"""A page's encoding as browsers choose it: the byte-order mark, the Content-Type charset,
then the HTML standard's prescan of the first 1024 bytes (section 13.2.3.2, "prescan a byte
stream to determine its encoding", with "get an attribute", "get an XML encoding" and the
"algorithm for extracting a character encoding from a meta element"), then UTF-8 if valid,
else windows-1252.

The prescan cases are written from the standard's steps, each naming the step it checks.
Our implementation was also run on html5lib-tests' ``encoding/tests1.dat``,
``tests2.dat`` and ``test-yahoo-jp.dat``: every case whose declaration lies in the first
1024 bytes gives the expected encoding; the seven others need the HTML parser's late
"change the encoding", which the crawler does not do (docs/guide/transport.md says so).
"""

from __future__ import annotations

import pytest
from webcrawl.crawler.encodings import PRESCAN_BYTES, page_encoding, prescan
from webcrawl.crawler.links import extract_links

HTTP_EQUIV = 'http-equiv="Content-Type"'

#: (bytes, the codec the prescan returns or None, the step checked)
PRESCAN_CASES = [
    # <meta followed by a space or slash; charset attribute quoted or not
    (b'<meta charset="iso-8859-2">', "iso8859-2", "meta: charset, double quotes"),
    (b"<meta charset='iso-8859-2'>", "iso8859-2", "meta: charset, single quotes"),
    (b"<meta charset=iso-8859-2>", "iso8859-2", "meta: charset, unquoted"),
    (b"<meta\ncharset=iso-8859-2>", "iso8859-2", "meta: a newline after <meta"),
    (b"<meta/charset=iso-8859-2>", "iso8859-2", "meta: a slash after <meta"),
    (b"<META CHARSET=ISO-8859-2>", "iso8859-2", "meta: ASCII case-insensitive"),
    (b"<meta   charset   =   'iso-8859-2'>", "iso8859-2", "get an attribute: spaces"),
    (b'<meta charset="\niso-8859-2\n">', "iso8859-2", "get an encoding: label trimmed"),
    (b"<metacharset=iso-8859-2>", None, "<metacharset is another tag"),
    (b"<meta <meta charset='iso-8859-2'>", "iso8859-2",
     "get an attribute: '<meta' is an attribute name"),
    # http-equiv and content: need pragma
    (f'<meta {HTTP_EQUIV} content="text/html; charset=iso-8859-2">'.encode(), "iso8859-2",
     "content with http-equiv"),
    (f'<meta content="text/html; charset=iso-8859-2" {HTTP_EQUIV}>'.encode(), "iso8859-2",
     "content before http-equiv"),
    (b'<meta http-equiv="content-type" content=text/html;charset=iso-8859-2>', "iso8859-2",
     "content unquoted"),
    (b'<meta content="text/html; charset=iso-8859-2">', None,
     "need pragma: content without http-equiv"),
    (b'<meta name="Content-Style-Type" content="text/html; charset=iso-8859-2">', None,
     "need pragma: name is no http-equiv"),
    (b'<meta http-equiv="Content-Type " content="text/html; charset=iso-8859-2">', None,
     "got pragma: the value must be content-type exactly"),
    (b'<meta http-equiv="Content-Style-Type" content="text/html; charset=iso-8859-2">', None,
     "got pragma: another http-equiv"),
    (f'<meta {HTTP_EQUIV} content="text/html; charset = iso-8859-2">'.encode(), "iso8859-2",
     "extracting from content: spaces around '='"),
    (f'<meta {HTTP_EQUIV} content="text/html; charset=\'koi8-r\'">'.encode(), "koi8-r",
     "extracting from content: a quoted label"),
    (f'<meta {HTTP_EQUIV} content="text/html; charset=\'koi8-r">'.encode(), None,
     "extracting from content: an unmatched quote"),
    (f'<meta {HTTP_EQUIV} content="charsetcharset=koi8-r">'.encode(), "koi8-r",
     "extracting from content: 'charset' without '=' is skipped"),
    (f'<meta {HTTP_EQUIV} content="text/html; charset=">'.encode(), None,
     "extracting from content: nothing after '='"),
    (f'<meta {HTTP_EQUIV} content="charset=koi8-r;x">'.encode(), "koi8-r",
     "extracting from content: the label ends at ';'"),
    # charset against content, repeated attributes, failures
    (f'<meta {HTTP_EQUIV} content="text/html; charset=koi8-r" charset=iso-8859-2>'.encode(),
     "iso8859-2", "charset attribute wins over content"),
    (f'<meta charset=iso-8859-2 {HTTP_EQUIV} content="text/html; charset=koi8-r">'.encode(),
     "iso8859-2", "content does not replace a charset already set"),
    (f'<meta charset=bogus {HTTP_EQUIV} content="text/html; charset=koi8-r">'.encode(), None,
     "an unknown charset label is failure, even beside content"),
    (b"<meta charset=koi8-r charset=iso-8859-2>", "koi8-r",
     "a repeated attribute is ignored"),
    (b'<meta charset="bogus"><meta charset="iso-8859-2">', "iso8859-2",
     "failure: on to the next meta"),
    (b'<meta charset="iso-8859-2"><meta charset="koi8-r">', "iso8859-2", "the first wins"),
    (b'<meta charset="utf-7">', None, "utf-7 is no WHATWG label"),
    (b'<meta charset="UTF-16LE">', "utf-8", "UTF-16 in a meta means UTF-8"),
    (b'<meta charset="utf-16">', "utf-8", "UTF-16 in a meta means UTF-8"),
    (b'<meta charset="x-user-defined">', "cp1252", "x-user-defined means windows-1252"),
    (b"<meta charset=latin1>", "cp1252", "latin1 is windows-1252"),
    # comments and other markup
    (b'<!--<meta charset="koi8-r">--><meta charset="iso-8859-2">', "iso8859-2",
     "a comment is skipped"),
    (b'<!-- <meta charset="koi8-r"> -->', None, "a declaration inside a comment"),
    (b'<!--><meta charset="koi8-r">', "koi8-r", "<!--> ends where it starts"),
    (b'<!---><meta charset="koi8-r">', "koi8-r", "<!---> ends where it starts"),
    (b'<!-- a -- b > <meta charset="koi8-r"> -->', None, "a comment ends at '-->' only"),
    (b'<!DOCTYPE html><meta charset="koi8-r">', "koi8-r", "<! skips to '>'"),
    (b'<?php echo 1 ?><meta charset="koi8-r">', "koi8-r", "<? skips to '>'"),
    (b'</ x><meta charset="koi8-r">', "koi8-r", "</ skips to '>'"),
    (b'<p title="<meta charset=koi8-r>">', None, "a declaration inside an attribute value"),
    (b'<p title="x>\n<meta charset=koi8-r>\n<p>"</p>', None,
     "a quoted value runs across '>'"),
    (b'<p title="x>">\n<meta charset=koi8-r>', "koi8-r", "after the tag's real end"),
    (b'</p title="<meta charset=koi8-r>"><meta charset=iso-8859-2>', "iso8859-2",
     "end tags' attributes are read too"),
    (b"<br/><meta charset=koi8-r>", "koi8-r", "a self-closing tag"),
    (b'<meta test=" charset=koi8-r>\n<p>"</p>', None, "an attribute value hides charset"),
    (b'<meta test" charset=koi8-r>\n<p>"</p>', "koi8-r", "a quote inside a name"),
    (b"<meta test=x\" charset=koi8-r>", "koi8-r", "a quote inside an unquoted value"),
    (b'<meta test="" charset=koi8-r>', "koi8-r", "an empty quoted value"),
    (b'<html a=\xc3\xb1>\n<meta charset="koi8-r">', "koi8-r", "non-ASCII attribute values"),
    # running out of bytes: no answer from that meta
    (b"<meta charset=koi8-r", None, "the value runs to the end"),
    (b'<meta charset = "', None, "an unclosed quote"),
    (b"<meta", None, "the tag runs to the end"),
    (b'<p title="x><meta charset=koi8-r>', None, "an unclosed quote in another tag"),
    (b"<!-- <meta charset=koi8-r>", None, "an unclosed comment"),
    (b"<meta charset=koi8-r\n", None, "the tag's '>' is missing"),
    # XML declarations
    (b'<?xml version="1.0" encoding="iso-8859-2"?><p>', "iso8859-2", "get an XML encoding"),
    (b"<?xml version='1.0' encoding = 'koi8-r'?>", "koi8-r",
     "get an XML encoding: single quotes and spaces"),
    (b'<?xml version="1.0" encoding="utf-16"?>', "utf-8", "get an XML encoding: UTF-16"),
    (b'<?xml version="1.0" encoding="koi 8"?>', None, "get an XML encoding: a space inside"),
    (b'<?xml version="1.0"?><meta charset="koi8-r">', "koi8-r", "a meta wins over XML"),
    (b' <?xml version="1.0" encoding="koi8-r"?>', None,
     "get an XML encoding: only at the very start"),
    ("<?xml".encode("utf-16-le"), "utf-16-le", "a UTF-16LE XML declaration"),
    ("<?xml".encode("utf-16-be"), "utf-16-be", "a UTF-16BE XML declaration"),
    (b"<p>no declaration", None, "nothing declared"),
    (b"", None, "nothing at all"),
]


@pytest.mark.parametrize(("head", "codec", "step"), PRESCAN_CASES,
                         ids=[case[2] for case in PRESCAN_CASES])
def test_prescan_follows_the_html_standard(head: bytes, codec: str | None, step: str) -> None:
    assert prescan(head) == codec


def test_prescan_reads_the_first_1024_bytes() -> None:
    meta = b'<meta charset="koi8-r">'
    inside = b" " * (PRESCAN_BYTES - len(meta)) + meta
    assert page_encoding(inside + b"x" * 100, None) == "koi8-r"
    # one byte further, its closing '>' is past the end condition: the meta is not seen
    assert page_encoding(b" " + inside + b"x" * 100, None) == "utf-8"


@pytest.mark.parametrize(("body", "declared", "codec"), [
    (b'\xef\xbb\xbf<meta charset="koi8-r">', "koi8-r", "utf-8"),      # the BOM first
    (b'<meta charset="koi8-r">\xe9t\xe9', "iso-8859-2", "iso8859-2"),  # then Content-Type
    (b'<meta charset="koi8-r">\xe9t\xe9', "utf-7", "koi8-r"),          # a bad one is none
    (b'<meta charset="koi8-r">\xe9t\xe9', None, "koi8-r"),             # then the prescan
    (b'<!-- <meta charset="koi8-r"> -->\xc3\xa9t', None, "utf-8"),     # then valid UTF-8
    (b'<!-- <meta charset="koi8-r"> -->\xe9t\xe9 !', None, "cp1252"),  # else windows-1252
])
def test_page_encoding_order(body: bytes, declared: str | None, codec: str) -> None:
    assert page_encoding(body, declared) == codec


@pytest.mark.parametrize("decoy", [
    b'<!-- <meta charset="koi8-r"> -->',
    b'<meta name="x" content="text/html; charset=koi8-r">',
    b'<p title="<meta charset=koi8-r>">',
], ids=["comment", "content-without-http-equiv", "attribute-value"])
def test_a_utf8_page_links_as_a_browser_fetches_them(decoy: bytes) -> None:
    """A UTF-8 page's ``/é`` is fetched as ``/%C3%A9``, whatever a decoy declares."""
    body = decoy + '<a href="/é">e</a>'.encode()
    assert extract_links(body, "http://h.test/").urls == ["http://h.test/%C3%A9"]
