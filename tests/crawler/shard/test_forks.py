"""The fork server that starts a sharded crawl's workers.

It is forked off the coordinator only where a fork is safe (no event loop running, one
thread), else started as a new interpreter; either way a worker it forks answers the
protocol, gets the environment it was started with (a restarted worker must not inherit
a test kill point), and is waited for, so its CPU time counts in the coordinator's
children's.  Each case runs in a fresh interpreter (one thread: the test runner's own
threads would forbid the fork).  A ``kill -9`` of a coordinator leaves neither server nor
worker behind (Linux: ``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard.coordinator import ShardDownloader
from webcrawl.crawler.shard.forks import ForkServer
from webcrawl.storage.errors import ConfigError

pytestmark = pytest.mark.timeout(120)

#: A coordinator in a fresh interpreter: it starts one worker through a fork server
#: (``fork``: forked off it before its loop; ``exec``: a new interpreter, from inside
#: the loop), gives it an environment, sends it StartWorker and a fetch of a closed port
#: (an answer: a batch), then StopWorker, and prints what it saw as JSON.
COORDINATOR = r'''
import json, os, resource, socket, sys
from webcrawl.crawler import eventloop
from webcrawl.crawler.orders import FetchPage
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard.forks import ForkServer
from webcrawl.crawler.shard.protocol import StartWorker, StopWorker, WorkerStopped
from webcrawl.crawler.shard.transport import PipeTransport

how, env, port, orders = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
forked = ForkServer.fork_here() if how == "fork" else None
assert (forked is not None) == (how == "fork")

def cpu_of(pid):  # user + system seconds of a process itself (not its children); 0: gone
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except FileNotFoundError:  # a worker that killed itself after its answer
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

async def main():
    server = forked or await ForkServer.exec_new()
    process = await server.start_worker(env)
    transport = PipeTransport(process)
    url = f"http://127.0.0.1:{port}/"
    settings = CrawlSettings.polite_off(retry_attempts=1)
    await transport.send([StartWorker(0, 1, settings, (url,)),
                          *(FetchPage(i, url, f"127.0.0.1:{port}", 0.0, 0.0)
                            for i in range(orders))])
    seen, worker_cpu = [], 0.0
    while (batch := await transport.receive()) is not None:
        seen += [type(m).__name__ for m in batch]
        if any(isinstance(m, WorkerStopped) for m in batch):
            break
        if len(seen) == orders:  # all answered: stop it
            worker_cpu = cpu_of(process.pid)
            await transport.send([StopWorker()])
    await transport.close()
    server_cpu = cpu_of(server.pid)  # its own, its children's apart
    await server.aclose()
    try:
        os.waitpid(server.pid, os.WNOHANG)
        reaped = False
    except ChildProcessError:
        reaped = True
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"seen": sorted(set(seen)), "answers": seen.count("PageDone"),
                      "server": server.pid, "worker": process.pid, "reaped": reaped,
                      "me": os.getpid(), "worker_cpu": worker_cpu, "server_cpu": server_cpu,
                      "children_cpu": children.ru_utime + children.ru_stime}))

eventloop.run(main())
'''


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def coordinate(how: str, env: dict[str, str], outer: dict[str, str],
               orders: int = 1) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", COORDINATOR, how, json.dumps(env),
                           str(closed_port()), str(orders)], capture_output=True, text=True,
                          check=False, env={**os.environ, **outer}, timeout=100)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("how", ["fork", "exec"])
def test_a_forked_worker_answers_and_everything_is_waited_for(how: str) -> None:
    seen = coordinate(how, {}, {}, orders=2000)
    assert seen["seen"] == ["PageDone", "WorkerStopped"] and seen["answers"] == 2000
    assert seen["server"] != seen["me"] and seen["worker"] not in (seen["server"], seen["me"])
    assert seen["reaped"]  # the coordinator waited for its server
    # ... and the server for its worker: the worker's CPU time is in the coordinator's
    # children's (what time(1) reports for a crawl).  Not a timing claim: the kernel's
    # counts only grow, /proc shows them rounded down, and a parent that waits for a
    # child gets the child's whole count (and its waited-for children's).
    assert seen["worker_cpu"] > 0
    assert seen["children_cpu"] >= seen["server_cpu"] + seen["worker_cpu"]


@pytest.mark.parametrize("how", ["fork", "exec"])
def test_a_worker_gets_its_environment_not_the_coordinators(how: str) -> None:
    kill = "shard_worker_batch:1"  # the worker kills itself after its first batch
    # Set for the coordinator, cleared for the worker (a restart): it answers.
    survived = coordinate(how, {"WEBCRAWL_TEST_KILL": ""}, {"WEBCRAWL_TEST_KILL": kill})
    assert survived["seen"] == ["PageDone", "WorkerStopped"] and survived["answers"] == 1
    # Given to the worker only: it dies after sending its answer, with no last message.
    killed = coordinate(how, {"WEBCRAWL_TEST_KILL": kill}, {"WEBCRAWL_TEST_KILL": ""})
    assert killed["seen"] == ["PageDone"] and killed["answers"] == 1


async def test_no_fork_inside_a_running_loop() -> None:
    assert ForkServer.fork_here() is None


def test_no_fork_beside_another_thread() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert ForkServer.fork_here() is None
    finally:
        stop.set()
        other.join()


def test_the_server_entry_outside_a_crawl_is_a_one_line_error(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_bytes(b"")
    with target.open("rb") as file:
        done = subprocess.run([sys.executable, "-m", "webcrawl.crawler.shard.forks"],
                              stdin=file, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "must be the socket" in lines[0]


#: A coordinator that forks its server, starts a worker, prints both pids and waits to
#: be killed.
KILLED = r'''
import asyncio, json, os, sys
from webcrawl.crawler import eventloop
from webcrawl.crawler.shard.forks import ForkServer

server = ForkServer.fork_here()

async def main():
    process = await server.start_worker({})
    print(json.dumps([server.pid, process.pid]), flush=True)
    await asyncio.sleep(3600)

eventloop.run(main())
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_coordinator_leaves_no_server_and_no_worker() -> None:
    coordinator = subprocess.Popen([sys.executable, "-c", KILLED], stdout=subprocess.PIPE,
                                   text=True)
    assert coordinator.stdout is not None
    pids = json.loads(coordinator.stdout.readline())
    os.kill(coordinator.pid, signal.SIGKILL)
    coordinator.wait()
    coordinator.stdout.close()
    # A hang guard, not a timing claim: the kernel kills them at once.
    deadline = time.monotonic() + 60
    while any(_exists(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_exists(pid) for pid in pids)


def _exists(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for init counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_without_fork_a_sharded_crawl_is_a_clear_config_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ForkServer, "supported", staticmethod(lambda: False))
    with pytest.raises(ConfigError, match=r"no fork.*--workers 1"):
        ShardDownloader(CrawlSettings(workers=2), ["http://a.test/"])
