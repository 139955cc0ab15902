"""The README's sample outputs keep the form of what its commands print today.

``tests/test_readme_commands.py`` runs the README's ``bash`` blocks; :func:`check` then
holds the ``text`` blocks that show their output to what those runs printed:

* ``demo``: the block after "It printed", the demo's summary on stdout, line for line;
* ``tour``: the block right after the tour's ``bash`` block: each of its lines is a line
  the tour's commands printed (stderr or stdout, in order), and every line they printed
  on stdout is in it;
* ``overview``: the block after "The report opens with", the first sentences of the
  report the tour wrote (its parts around ``[...]``, in order).

Form, not figures (:func:`form`): numbers, URLs, dash rules and runs of blanks vary with
the machine and the run; which ordering came first varies with a crawl's timing, so the
orderings' names become ``ORDERING`` and a list of ``name figure`` items is compared as
a set.  Words, punctuation, the number of items and the ceilings (``ideal``,
``omniscient``: never an ordering) must match.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
URL = re.compile(r"https?://[^\s)]+")
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
#: The crawl orderings a crawler can run (the ceilings are not among them).
ORDERINGS = ("recorded", "bfs", "dfs", "random", "backlink", "pagerank", "opic",
             "larger-sites-first", "batch-pagerank", "partial-pagerank", "historical")
NAMED = re.compile(r"the crawl's own order \(recorded\)|(?<![\w-])(?:"
                   + "|".join(map(re.escape, ORDERINGS)) + r")(?![\w-])")
ITEMS = re.compile(r"ORDERING 9(?:, ORDERING 9)+")
#: Demo lines that may be missing, and the stderr text that must then say why.
DEMO_CONDITIONAL = {
    "freshness over the revisit window: true 9, estimated by the crawler 9":
        "no freshness to measure",
}


@dataclass(frozen=True)
class Sample:
    """A ``text`` block of the README showing what a command printed."""

    kind: str          # "demo", "tour" or "overview"
    lines: list[str]


@dataclass(frozen=True)
class Step:
    """What one step of a ``bash`` block printed."""

    argv: list[str]
    stdout: str
    stderr: str


def form(text: str) -> str:
    """The form of a line: figures, URLs, dash rules and blanks normalised, orderings
    named ``ORDERING`` and their lists sorted.

    >>> form("crawled 2,701 pages in 15.6 s (173/s): http://a.test:1/p.html")
    'crawled 9 pages in 9 s (9/s): URL'
    >>> form("PR@10%: pagerank 0.39, recorded 0.36; ceiling ideal 0.49")
    'PR@9%: ORDERING 9, ORDERING 9; ceiling ideal 9'
    """
    text = URL.sub("URL", text)
    text = NUMBER.sub("9", text)
    text = re.sub(r"-{3,}", "---", text)
    text = NAMED.sub("ORDERING", text)
    text = re.sub(r"\s+", " ", text).strip()
    return ITEMS.sub(lambda m: ", ".join(sorted(m.group(0).split(", "))), text)


def samples(readme: str) -> dict[int, list[Sample]]:
    """The README's samples, keyed by the index of the ``bash`` block they show."""
    out: dict[int, list[Sample]] = {}
    bash = -1
    after_bash = False
    last_end = 0
    for match in FENCE.finditer(readme):
        kind, body = match.group(1), match.group(2)
        prose = readme[last_end:match.start()]
        last_end = match.end()
        if kind == "bash":
            bash += 1
            after_bash = True
            continue
        directly = after_bash and not prose.strip()
        after_bash = False
        if kind != "text" or bash < 0:
            continue
        lines = [line for line in body.splitlines() if line.strip()]
        last_sentence = prose.strip().rsplit("\n\n", 1)[-1]
        if "It printed" in last_sentence:
            out.setdefault(bash, []).append(Sample("demo", lines))
        elif directly:
            out.setdefault(bash, []).append(Sample("tour", lines))
        elif last_sentence.startswith("The report opens with"):
            out.setdefault(bash, []).append(Sample("overview", lines))
    return out


def check(readme: str, bash_index: int, steps: Sequence[Step], work: Path) -> int:
    """Hold the samples of ``bash`` block ``bash_index`` to what its ``steps`` printed
    (``work``: the folder they ran in); returns the number of samples checked."""
    shown = samples(readme).get(bash_index, [])
    for sample in shown:
        if sample.kind == "demo":
            demo = next(s for s in steps if s.argv[1:2] == ["demo"])
            check_demo(sample.lines, demo)
        elif sample.kind == "tour":
            check_tour(sample.lines, [s for s in steps if s.argv[1:3] != ["fixture", "serve"]])
        else:
            report = next(s for s in steps if s.argv[1:2] == ["report"])
            where = work / report.argv[report.argv.index("-o") + 1]
            check_overview(sample.lines, overview_text(where.read_text(encoding="utf-8")))
    return len(shown)


def check_demo(sample: list[str], demo: Step) -> None:
    """Line for line, but for a conditional line whose absence stderr explains."""
    printed = [form(line) for line in demo.stdout.splitlines() if line.strip()]
    wanted = []
    for line in map(form, sample):
        why = DEMO_CONDITIONAL.get(line)
        if why is not None and line not in printed and why in demo.stderr:
            continue
        wanted.append(line)
    assert printed == wanted, _diff("the demo's summary", wanted, printed)


def check_tour(sample: list[str], steps: Sequence[Step]) -> None:
    """Every sample line printed, in order; every stdout line shown in the sample."""
    printed = [form(line) for s in steps for text in (s.stderr, s.stdout)
               for line in text.splitlines() if line.strip()]
    wanted = [form(line) for line in sample]
    at = 0
    for line in wanted:
        assert line in printed[at:], _diff(f"the tour's line {line!r}", wanted, printed)
        at = printed.index(line, at) + 1
    for s in steps:
        for line in s.stdout.splitlines():
            if line.strip():
                assert form(line) in wanted, (f"{' '.join(s.argv[:3])} prints a line the "
                                              f"README's sample lacks:\n{line}")


def overview_text(report_html: str) -> str:
    """The text of the report's first section, "What this crawl found"."""
    section = report_html.split('<section id="overview">', 1)[1].split("</section>", 1)[0]
    paragraphs = re.findall(r"<p>(.*?)</p>", section, flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", p)) for p in paragraphs)


def check_overview(sample: list[str], text: str) -> None:
    """Each part of the sample around ``[...]`` is in the report's text, in order."""
    full = form(text)
    at = 0
    for part in " ".join(sample).split("[...]"):
        part = form(part)
        if not part:
            continue
        assert part in full[at:], f"the report's overview no longer says:\n{part}\n\n{full}"
        at = full.index(part, at) + len(part)


def _diff(what: str, wanted: list[str], printed: list[str]) -> str:
    return (f"{what} no longer has the README sample's form:\nREADME:\n  "
            + "\n  ".join(wanted) + "\nprinted:\n  " + "\n  ".join(printed))
