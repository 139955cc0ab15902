"""Help text shared by every sub-command: the formatter, the Examples sections, and
deprecated spellings of renamed options.

Option names follow one rule across commands (the README's "Option names" lists it):
``--day-seconds`` is the length of a day; ``--random-seed`` seeds randomness (seed URLs
are positional); ``--out DIR`` is a folder for several files and ``--output/-o FILE``
one file.  Old spellings still work, hidden from ``--help``, with a warning.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

__all__ = ["EXAMPLES", "HelpFormatter", "add_deprecated_alias", "attach_examples",
           "iter_parsers"]

#: Examples shown at the end of each command's ``--help`` (key: the command path).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("webcrawl demo",
         "webcrawl crawl http://site0.test:8400/ --db crawl.db --resolve '*.test=127.0.0.1'",
         "webcrawl report --db crawl.db --output report.html"),
    "demo": ("webcrawl demo",
             "webcrawl demo --pages 300 --hosts 5 --revisit-seconds 2 --out small-demo",
             "webcrawl demo --force --json > demo.json"),
    "fixture": ("webcrawl fixture serve --port 8400 --hosts 5 --pages 300",
                "webcrawl fixture truth --hosts 5 --pages 300 --out truth"),
    "fixture serve": ("webcrawl fixture serve --port 8400 --hosts 5 --pages 300 --random-seed 1",
                      "webcrawl fixture serve --port 0 --day-seconds 1 --faults '5xx:0.02'"),
    "fixture truth": ("webcrawl fixture truth --hosts 5 --pages 300 --random-seed 1 --out truth",),
    "fixture audit": ("webcrawl fixture audit --port 8400 --max-concurrency 1 --min-gap 0.05",),
    "fixture export-static": (
        "webcrawl fixture export-static --hosts 5 --pages 300 --out site",
        "nginx -p \"$PWD/site\" -c nginx.conf"),
    "crawl": (
        "webcrawl crawl http://site0.test:8400/ --db crawl.db --resolve '*.test=127.0.0.1' "
        "--allow-domain test",
        "webcrawl crawl https://example.org/ --db crawl.db --max-fetches 1000 --strategy opic "
        "--contact you@example.org",
        "webcrawl crawl -i seeds.txt --db crawl.db --resolve docs.example.org:80:127.0.0.1",
        "webcrawl crawl --db crawl.db --resume",
        "webcrawl crawl http://site0.test:8400/ --db crawl.db --json > stats.json"),
    "revisit": ("webcrawl revisit --db crawl.db --budget 10/s --duration 3600",
                "webcrawl revisit --db crawl.db --budget 400 --duration 20 --day-seconds 1 "
                "--policy optimal-age --json"),
    "analyze": ("webcrawl analyze pagerank --db crawl.db --top 10",
                "webcrawl analyze bowtie --db crawl.db --json"),
    "analyze pagerank": ("webcrawl analyze pagerank --db crawl.db --top 10",
                         "webcrawl analyze pagerank --db crawl.db --remote-only --json"),
    "analyze hits": ("webcrawl analyze hits --db crawl.db --top 10",),
    "analyze bowtie": ("webcrawl analyze bowtie --db crawl.db",),
    "analyze degrees": ("webcrawl analyze degrees --db crawl.db --json",),
    "analyze quality": ("webcrawl analyze quality --db crawl.db --out quality",),
    "analyze changes": ("webcrawl analyze changes --db crawl.db --out changes",
                        "webcrawl analyze changes --db crawl.db --intervals span",
                        "webcrawl analyze changes --db demo-out/crawl.db --day-seconds 1"),
    "analyze sample": ("webcrawl analyze sample --db crawl.db --method directed --size 100 "
                       "--random-seed 3",),
    "analyze smallworld": ("webcrawl analyze smallworld --db crawl.db --random-seed 1",),
    "analyze cores": ("webcrawl analyze cores --db crawl.db --max-i 4 --max-j 4",
                      "webcrawl analyze cores --db crawl.db --min-i 3 --min-j 3 --diverse"),
    "import": ("webcrawl import edges web-Google.txt.gz --db google.db",
               "webcrawl import warc site.warc.gz --db site.db"),
    "import edges": ("webcrawl import edges web-Google.txt.gz --db google.db",
                     "webcrawl import edges graph.txt --vertices names.txt --seed home --json"),
    "import warc": ("webcrawl import warc site.warc.gz --db site.db",),
    "simulate": ("webcrawl simulate random-web --pages 100000 --crawl 1000",
                 "webcrawl simulate copying --pages 1000000 --alpha 0.1"),
    "simulate random-web": (
        "webcrawl simulate random-web --pages 100000 --crawl 1000 --strategy DEG",
        "webcrawl simulate random-web --pages 20000 --crawl 2000 --random-seed 3 --out rw"),
    "simulate copying": (
        "webcrawl simulate copying --pages 1000000 --alpha 0.1",
        "webcrawl simulate copying --pages 100000 --cores --max-i 6 --max-j 6"),
    "simulate national-web": (
        "webcrawl simulate national-web --sites 500 --pages 50000 --random-seed 0 --out DIR",
        "webcrawl simulate national-web --strategies bfs,opic,larger-sites-first "
        "--horizon 1400000 --json"),
    "compare": ("webcrawl compare --db crawl.db --virtual --out orderings",
                "webcrawl compare --db bfs.db --db opic.db --strategies bfs,opic --json"),
    "export": ("webcrawl export edges --db crawl.db --output edges.tsv",
               "webcrawl export edges --db crawl.db --format edgelist -o graph.txt",
               "webcrawl export rates --db demo-out/crawl.db --day-seconds 1"),
    "report": ("webcrawl report --db crawl.db --output report.html",
               "webcrawl report --db crawl.db -o report.html --compare bfs,opic --json"),
}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps texts written on several lines (the Examples) as they are and wraps
    one-paragraph texts (descriptions) to the terminal, as the default formatter does."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text.strip():
            return super()._fill_text(text, width, indent)
        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent,
                             subsequent_indent=indent)


def iter_parsers(parser: argparse.ArgumentParser, path: str = ""
                 ) -> list[tuple[str, argparse.ArgumentParser]]:
    """``(command path, parser)`` for ``parser`` and every sub-command under it."""
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += iter_parsers(sub, f"{path} {name}".strip())
    return found


def attach_examples(parser: argparse.ArgumentParser) -> None:
    """Give every parser under ``parser`` the formatter and its Examples epilog (an
    epilog a command set itself is kept)."""
    for path, sub in iter_parsers(parser):
        sub.formatter_class = HelpFormatter
        examples = EXAMPLES.get(path)
        if examples and not sub.epilog:
            sub.epilog = "Examples:\n" + "\n".join(f"  {line}" for line in examples)


class _Deprecated(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, new: str = "",
                 **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog}: warning: {option_string} is deprecated; use {self.new}",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_deprecated_alias(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Accept ``old`` as a hidden, warned-about spelling of the option ``new``."""
    target = next(a for a in parser._actions if new in a.option_strings)
    extra: dict[str, Any] = {"type": target.type} if target.type is not None else {}
    parser.add_argument(old, dest=target.dest, action=_Deprecated, new=new,
                        metavar=target.metavar, help=argparse.SUPPRESS,
                        default=argparse.SUPPRESS, **extra)
