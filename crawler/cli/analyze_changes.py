"""``webcrawl analyze changes --db crawl.db [--out DIR] [--json]``: change analytics.

Reads every crawl and revisit fetch of the database (the visit history of each URL)
and reports what Cho and Garcia-Molina measured: pages by average change interval,
overall, per host and per domain class (com, edu, gov, net/org, ...), pages with no
change seen reported as censored at the window; visible lifespan (both methods); days
until half the pages changed; a KS test of the Poisson model.  ``--out`` also writes one
PNG per figure.  Days are those the revisit stored (its ``--day-seconds``) unless
``--day-seconds`` is given here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import (
    add_db_option,
    add_json_option,
    existing_db,
    positive_float,
    print_json,
    print_table,
)
from webcrawl.crawler.cli._help import add_deprecated_alias
from webcrawl.storage.errors import ConfigError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "changes", help="change rates, lifespans and the Poisson test of revisited pages",
        description="Change analytics of a revisited crawl: change-rate buckets, page "
                    "lifespans, the Poisson test of change intervals and, with --out, "
                    "plots.  Needs a crawl that was revisited (webcrawl revisit).")
    add_db_option(parser)
    parser.add_argument("--out", type=Path, metavar="DIR", help="write PNG plots into DIR")
    parser.add_argument("--day-seconds", dest="seconds_per_day", type=positive_float,
                        default=None, metavar="S",
                        help="length of a day on the crawl's clock (default: the one the "
                             "revisit stored, else 86400)")
    add_deprecated_alias(parser, "--seconds-per-day", "--day-seconds")
    parser.add_argument("--intervals", choices=("rate", "span"), default="rate",
                        help="a page's average change interval in the per-host and "
                             "per-class tables: rate (1 / the bias-reduced rate estimate, "
                             "default) or span (observed span / changes seen, Cho and "
                             "Garcia-Molina's, which saturates at the visit interval); "
                             "the overall rows show both")
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from webcrawl.analysis.change.change_stats import (
        CENSORED_LABEL,
        CHANGE_BUCKETS,
        LIFESPAN_BUCKETS,
        change_report,
    )
    from webcrawl.analysis.change.fetch_history import (
        history_visit_log,
        read_history,
        resolve_day_seconds,
    )

    history = read_history(existing_db(args.db), text=False)
    day, source = resolve_day_seconds(history.meta, args.seconds_per_day)
    method = {"rate": "estimate", "span": "paper"}[args.intervals]
    report = change_report(history_visit_log(history, day).log, intervals=method)
    if report.rate_summary()["pages_revisited"] == 0:
        raise ConfigError(f"{args.db} was never revisited: change analytics need pages "
                          "fetched at least twice (run 'webcrawl revisit --db "
                          f"{args.db} --budget 10/s --duration 600' first)")
    plots = [] if args.out is None else [str(p) for p in _plot(report, args.out)]
    if args.json:
        print_json({**report.to_dict(), "day_seconds": day, "day_seconds_from": source,
                    "plots": plots})
        return 0
    print(f"One day = {day:g} s ({_DAY_SOURCES[source]})")
    print()
    labels = [label for label, _ in CHANGE_BUCKETS] + [CENSORED_LABEL]
    window = (f"{report.n_visits} visits over a {report.window_days:.4g}-day window; "
              f"pages with no change seen are censored at their observed span, median "
              f"{report.median_span_days:.4g} days")
    pages = int(report.pages_by_host.sum())
    overall: list[Any] = [f"all ({_METHOD_NAMES[method]})", pages,
                          *report.bucket_overall.tolist()]
    other = "paper" if method == "estimate" else "estimate"
    beside = [f"all ({_METHOD_NAMES[other]})", pages,
              *getattr(report, f"bucket_overall_{other}").tolist()]
    for key, names, counts, table in (
            ("host", report.host_names, report.pages_by_host, report.bucket_by_host),
            ("domain class", report.class_names, report.pages_by_class,
             report.bucket_by_class)):
        rows = [overall, beside] + [[name, int(n), *row.tolist()] for name, n, row in
                            zip(names, counts, table, strict=True) if n > 0]
        print_table([key, "pages", *labels], rows,
                    title=f"Fraction of pages by average change interval, by {key}, "
                          f"interval = {_METHOD_NAMES[method]} ({window})")
        print()
    print_table(["method", *[label for label, _ in LIFESPAN_BUCKETS]],
                [["1 (observed)", *report.lifespan_buckets1.tolist()],
                 ["2 (x2 at the edges)", *report.lifespan_buckets2.tolist()]],
                title="Visible lifespan")
    print()
    half = report.half_changed_days
    print("Days until 50% of pages changed: "
          + (f"{half:.4g}" if half is not None else "not reached in the window"))
    print()
    _print_rates(report)
    pt = report.poisson
    if pt.skipped is not None:
        print(f"Poisson test (intervals vs exponential): skipped: {pt.skipped}")
    else:
        print(f"Poisson test (intervals vs exponential): KS {pt.statistic:.4f}, "
              f"p = {pt.pvalue:.3g} ({pt.n_intervals} intervals, {pt.n_pages} pages)")
    for path in plots:
        print(f"wrote {path}")
    return 0


_METHOD_NAMES = {"estimate": "1 / rate", "paper": "span / changes"}
_DAY_SOURCES = {"given": "--day-seconds", "stored": "stored by the revisit",
                "default": "the default; the database stores no day length"}


def _print_rates(report: Any) -> None:
    """Pages with and without changes; upper bounds on the rates of the unchanged ones."""
    r = report.rate_summary()
    conf = f"{100 * r['confidence']:g}%"
    print(f"Change rates: {r['pages_revisited']} pages revisited, "
          f"{r['pages_with_changes']} with a change seen, "
          f"{r['pages_without_changes']} without")
    if not r["pages_without_changes"]:
        print()
        return
    up = r["unchanged_upper_rate_per_day"]
    print(f"No change seen: each such page's rate is below -ln(1 - {r['confidence']:g}) / "
          f"its observed days ({conf} upper bound; about 3 / days)")
    rows = [[name, h["pages"], h["observed_days"]["median"],
             h["upper_rate_per_day"]["median"], h["upper_rate_per_day"]["max"]]
            for name, h in r["unchanged_by_host"].items()]
    rows.insert(0, ["all", r["pages_without_changes"],
                    r["unchanged_observed_days"]["median"], up["median"], up["max"]])
    print_table(["host", "unchanged pages", "median days observed",
                 "median rate bound /day", "largest rate bound /day"], rows)
    print(f"Their time-weighted mean rate is below "
          f"{r['unchanged_pooled_upper_rate_per_day']:.4g} / day ({conf}); "
          f"mean change interval above {1 / r['unchanged_pooled_upper_rate_per_day']:.4g} "
          "days")
    print()


def _plot(report: Any, out: Path) -> list[Path]:
    from webcrawl.analysis.report.change_figures import plot_change_report

    return plot_change_report(report, out)
