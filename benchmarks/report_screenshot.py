"""Render an HTML report in headless Debian chromium and save a PNG screenshot.

Checks that the report is readable in a real browser, offline (``file://`` URL; the
report has no external asset).  Installs chromium with ``apt-get install -y chromium``
if it is missing, and says so.

Usage::

    webcrawl demo --out demo-out
    python benchmarks/report_screenshot.py [--report demo-out/report.html]
                                           [--out benchmarks/results/report.png]
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
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
               f"--screenshot={out}", f"--window-size={WINDOW}", report.resolve().as_uri()]
        t0 = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                              check=False)
        elapsed = time.monotonic() - t0
    if not out.exists():
        raise SystemExit(f"chromium wrote no screenshot (exit {done.returncode}):\n"
                         + done.stderr[-2000:])
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, default=Path("demo-out/report.html"))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/report.png")
    args = parser.parse_args()
    if not args.report.is_file():
        raise SystemExit(f"no report at {args.report}: run 'webcrawl demo' first "
                         "(or pass --report)")
    browser = find_chromium()
    version = subprocess.run([browser, "--version"], capture_output=True, text=True,
                             check=False).stdout.strip()
    elapsed = screenshot(args.report, args.out, browser)
    size = args.out.read_bytes()
    assert size.startswith(b"\x89PNG"), "the screenshot is not a PNG"
    print(f"browser: {version}")
    print(f"report: {args.report} ({args.report.stat().st_size / 1e6:.2f} MB)")
    print(f"screenshot: {args.out} ({len(size) / 1e3:.0f} kB, window {WINDOW}) "
          f"in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
