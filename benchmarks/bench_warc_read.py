"""Reading WARC files: warcio against FastWARC (the choice behind ``import warc``), and
``import warc``'s reader with its framing checks (every gzip member decompressed to its
end, every Content-Length checked) against the same reader without them (warcio's
iterator): the price of finding damage.

Writes one WARC of N HTML response records with warcio (gzip per record, and plain),
then reads every record (headers, HTTP status line and headers, whole payload) with
each reader, interleaved round by round so machine load affects all alike.  Prints
records per second and MB/s of each, and the ratios.

    PYTHONPATH=. python benchmarks/bench_warc_read.py [--records 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import tempfile
import time
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator as WarcioIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


def make_warc(path: Path, records: int, gzip: bool) -> None:
    body = (b"<html><body>" + b"".join(b'<a href="/p%d.html">link</a> lorem ipsum ' % i
                                        for i in range(200)) + b"</body></html>")
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=gzip)
        for i in range(records):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"),
                                                  ("Content-Length", str(len(body)))],
                                       protocol="HTTP/1.1")
            rec = writer.create_warc_record(f"http://h{i % 50}.test/p{i}.html", "response",
                                            payload=io.BytesIO(body), http_headers=headers)
            writer.write_record(rec)


def read_warcio(path: Path) -> tuple[int, int]:
    n = size = 0
    with open(path, "rb") as f:
        for rec in WarcioIterator(f):
            if rec.rec_type == "response":
                _ = rec.http_headers.get_statuscode(), rec.http_headers.get_header("Content-Type")
                size += len(rec.content_stream().read())
                n += 1
    return n, size


def read_fastwarc(path: Path) -> tuple[int, int]:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    n = size = 0
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f, record_types=WarcRecordType.response,
                                   parse_http=True):
            _ = rec.http_headers.status_code, rec.http_headers.get("Content-Type")
            size += len(rec.reader.read())
            n += 1
    return n, size


def read_unchecked(path: Path) -> tuple[int, int]:
    """What ``import warc`` read before its framing checks: warcio's iterator, each
    record made into the importer's record."""
    from webcrawl.crawler.ingest._records import read_record

    n = size = 0
    with open(path, "rb") as f:
        records = WarcioIterator(f)
        for rec in records:
            record = read_record(rec, records.offset, 1 << 30)
            if record.kind == "response":
                size += len(record.body)
                n += 1
    return n, size


def read_checked(path: Path) -> tuple[int, int]:
    from webcrawl.crawler.ingest._records import read_records

    n = size = 0
    for rec in read_records(path, 1 << 30, False, lambda _offset, _reason: None):
        if rec.kind == "response":
            size += len(rec.body)
            n += 1
    return n, size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for gzip in (True, False):
            path = Path(tmp) / f"bench.warc{'.gz' if gzip else ''}"
            make_warc(path, args.records, gzip)
            mb = os.path.getsize(path) / 1e6
            readers = {"warcio": read_warcio, "unchecked": read_unchecked,
                       "checked": read_checked}
            if importlib.util.find_spec("fastwarc") is not None:  # optional
                readers["fastwarc"] = read_fastwarc
            best = dict.fromkeys(readers, float("inf"))
            for _ in range(args.rounds):
                for name, fn in readers.items():
                    t = time.perf_counter()
                    n, _size = fn(path)
                    best[name] = min(best[name], time.perf_counter() - t)
                    assert n == args.records, (name, n)
            label = "gzip per record" if gzip else "uncompressed"
            for name, secs in best.items():
                print(f"{label:16s} {name:9s} {args.records / secs:10,.0f} records/s "
                      f"{mb / secs:8.1f} MB/s (file {mb:.1f} MB)")
            if "fastwarc" in best:
                print(f"{label:16s} fastwarc/warcio speed ratio: "
                      f"{best['warcio'] / best['fastwarc']:.2f}x")
            print(f"{label:16s} import warc's reader, checked/unchecked time ratio: "
                  f"{best['checked'] / best['unchecked']:.2f}x")


if __name__ == "__main__":
    main()
