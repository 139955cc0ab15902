"""What a progress display costs: ours (``webcrawl.crawler.progress.StatusLine``) against
rich and tqdm, when they are installed.

Prints, for each: the time to import it in a fresh interpreter (median of ``--rounds``;
``webcrawl --help`` and every short command pay it), and the CPU time of one redraw of a
130-character status line into a terminal-like stream fitted to 100 columns.  Also
whether each writes plain, time-stamped lines when its stream is not a terminal (a crawl
under ``nohup`` or CI) without extra code.

    python benchmarks/bench_progress.py [--rounds 7] [--draws 20000]
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import time

LINE = ("  12,345 fetched  10,001 pages  45.2 fetches/s  elapsed 0:04:33  frontier 70,123  "
        "errors 12  hosts 3 fetching, 9 queued, 172 seen  scope domain example.org")
IMPORTS = {
    "webcrawl StatusLine": "import webcrawl.crawler.progress",
    "rich.progress": "import rich.progress",
    "tqdm": "import tqdm",
}


def import_seconds(statement: str, rounds: int) -> float | None:
    times = []
    for _ in range(rounds):
        code = (f"import time; t = time.perf_counter(); {statement}; "
                "print(time.perf_counter() - t)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if out.returncode != 0:
            return None
        times.append(float(out.stdout))
    return statistics.median(times)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def draw_ours(draws: int) -> float:
    from webcrawl.crawler.progress import StatusLine

    status = StatusLine(_Tty(), force=True, width=100, interval=1e-9)
    t = time.process_time()
    for _ in range(draws):
        status.show(LINE)
    return (time.process_time() - t) / draws


def draw_rich(draws: int) -> float | None:
    try:
        from rich.console import Console
        from rich.progress import Progress, TextColumn
    except ImportError:
        return None
    console = Console(file=_Tty(), width=100, force_terminal=True)
    with Progress(TextColumn("{task.description}"), console=console,
                  auto_refresh=False) as progress:
        task = progress.add_task(LINE)
        t = time.process_time()
        for _ in range(draws):
            progress.update(task, description=LINE)
            progress.refresh()
        return (time.process_time() - t) / draws


def draw_tqdm(draws: int) -> float | None:
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    bar = tqdm(total=None, file=_Tty(), ncols=100, mininterval=0, bar_format="{desc}")
    t = time.process_time()
    for _ in range(draws):
        bar.set_description_str(LINE, refresh=True)
    seconds = (time.process_time() - t) / draws
    bar.close()
    return seconds


def off_terminal() -> dict[str, str]:
    """What each writes into a file (not a terminal) for three updates and the end."""
    seen: dict[str, str] = {}
    from webcrawl.crawler.progress import StatusLine

    out = io.StringIO()
    status = StatusLine(out, log_interval=1e-9)
    for i in range(3):
        status.show(f"{i} {LINE}")
    status.clear()
    seen["webcrawl StatusLine"] = _describe(out.getvalue())
    try:
        from rich.console import Console
        from rich.progress import Progress, TextColumn

        out = io.StringIO()
        with Progress(TextColumn("{task.description}"), console=Console(file=out)) as bar:
            task = bar.add_task("0")
            for i in range(3):
                bar.update(task, description=f"{i} {LINE}", refresh=True)
        seen["rich.progress"] = _describe(out.getvalue())
    except ImportError:
        pass
    try:
        from tqdm import tqdm

        out = io.StringIO()
        bar = tqdm(total=None, file=out, mininterval=0, bar_format="{desc}")
        for i in range(3):
            bar.set_description_str(f"{i} {LINE}", refresh=True)
        bar.close()
        seen["tqdm"] = _describe(out.getvalue())
    except ImportError:
        pass
    return seen


def _describe(text: str) -> str:
    return (f"{text.count(chr(10))} lines, {text.count(chr(13))} carriage returns, "
            f"{text.count(chr(27))} escapes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--draws", type=int, default=20_000)
    args = parser.parse_args()
    draws = {"webcrawl StatusLine": draw_ours(args.draws), "rich.progress":
             draw_rich(args.draws), "tqdm": draw_tqdm(args.draws)}
    plain = off_terminal()
    print(f"{'display':22} {'import ms':>10} {'µs per redraw':>14}  into a file, 3 updates")
    for name, statement in IMPORTS.items():
        seconds = import_seconds(statement, args.rounds)
        if seconds is None or draws[name] is None:
            print(f"{name:22} {'not installed':>10}")
            continue
        print(f"{name:22} {1000 * seconds:10.1f} {1e6 * draws[name]:14.1f}  {plain[name]}")


if __name__ == "__main__":
    main()
