"""Render an HTML report in headless Debian chromium and save PNG screenshots.

Checks that the report is readable in a real browser, offline (``file://`` URL; the
report has no external asset).  Installs chromium with ``apt-get install -y chromium``
if it is missing, and says so.  With Playwright (``pip install -e '.[browser]'``) it
drives ``/usr/bin/chromium`` (never Playwright's own browser download): the top of the
report at ``--out``, and with ``--figures DIR`` one screenshot of each figure as the
browser shows it (``DIR/NN-section.png``), with the page's own measurements printed
(images decoded, console errors, horizontal overflow).  Without Playwright it falls
back to chromium's ``--screenshot`` switch (the top of the report only).

Usage::

    webcrawl demo --out demo-out
    python benchmarks/report_screenshot.py [--report demo-out/report.html]
                                           [--out benchmarks/results/report.png]
                                           [--figures DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROWSERS = ("chromium", "chromium-browser")
WINDOW = "1200,4000"
TIMEOUT = 180
#: Without the background-networking switches chromium tries outside hosts at start.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def find_chromium() -> str:
    """The chromium binary, installed with apt-get first if there is none."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    print("chromium not found: installing it with 'apt-get install -y chromium'",
          file=sys.stderr, flush=True)
    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    # apt's chatter goes to stderr: stdout is this script's figures.
    if subprocess.run(install, check=False, stdout=sys.stderr).returncode != 0:
        subprocess.run(["apt-get", "update"], check=True, stdout=sys.stderr)
        subprocess.run(install, check=True, stdout=sys.stderr)
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("chromium is still missing after apt-get install")


def screenshot(report: Path, out: Path, browser: str) -> float:
    """Render ``report`` into ``out``; return the seconds it took."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        cmd = [browser, *FLAGS, f"--user-data-dir={profile}",
               f"--screenshot={out}", f"--window-size={WINDOW}", report.resolve().as_uri()]
        t0 = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                              check=False)
        elapsed = time.monotonic() - t0
    if not out.exists():
        raise SystemExit(f"chromium wrote no screenshot (exit {done.returncode}):\n"
                         + done.stderr[-2000:])
    return elapsed


def playwright_screenshots(report: Path, out: Path, figures: Path | None,
                           browser: str) -> tuple[float, list[str]]:
    """The top of the report into ``out`` and, with ``figures``, each figure into that
    folder, through Playwright; return the seconds it took and what the page showed."""
    from playwright.sync_api import sync_playwright

    width, height = (int(v) for v in WINDOW.split(","))
    notes: list[str] = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile, \
            sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=browser, headless=True, args=[*FLAGS],
            viewport={"width": width, "height": height})
        try:
            page = context.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(report.resolve().as_uri(), wait_until="load")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            shown = page.evaluate("""() => ({
                images: document.images.length,
                decoded: [...document.images].filter(i => i.naturalWidth > 0).length,
                overflow: document.documentElement.scrollWidth
                          - document.documentElement.clientWidth})""")
            notes.append(f"images decoded: {shown['decoded']} of {shown['images']}; "
                         f"console errors: {len(errors)}; horizontal overflow: "
                         f"{shown['overflow']} px at {width} px")
            if figures is not None:
                figures.mkdir(parents=True, exist_ok=True)
                for old in figures.glob("*.png"):
                    old.unlink()
                shots = page.query_selector_all("figure")
                for k, fig in enumerate(shots, start=1):
                    section = fig.evaluate("f => f.closest('section').id")
                    fig.screenshot(path=str(figures / f"{k:02d}-{section}.png"))
                notes.append(f"figures: {len(shots)} screenshots in {figures}")
        finally:
            context.close()
    return time.monotonic() - t0, notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, default=Path("demo-out/report.html"))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/report.png")
    parser.add_argument("--figures", type=Path, default=None,
                        help="also save a screenshot of each figure into this folder")
    args = parser.parse_args()
    if not args.report.is_file():
        raise SystemExit(f"no report at {args.report}: run 'webcrawl demo' first "
                         "(or pass --report)")
    browser = find_chromium()
    version = subprocess.run([browser, "--version"], capture_output=True, text=True,
                             check=False).stdout.strip()
    try:
        import playwright  # noqa: F401
    except ImportError:
        if args.figures is not None:
            raise SystemExit("--figures needs playwright: pip install -e '.[browser]'") from None
        elapsed, notes, how = screenshot(args.report, args.out, browser), [], "--screenshot"
    else:
        elapsed, notes = playwright_screenshots(args.report, args.out, args.figures, browser)
        how = "playwright"
    size = args.out.read_bytes()
    assert size.startswith(b"\x89PNG"), "the screenshot is not a PNG"
    print(f"browser: {version} (through {how})")
    print(f"report: {args.report} ({args.report.stat().st_size / 1e6:.2f} MB)")
    print(f"screenshot: {args.out} ({len(size) / 1e3:.0f} kB, window {WINDOW}) "
          f"in {elapsed:.1f} s")
    for line in notes:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
