"""The revisit loop's clocks: the simulated one moves only when nothing is in flight."""

from __future__ import annotations

import asyncio

from webcrawl.crawler.revisit.clock import SimulatedClock, WallClock
from webcrawl.crawler.tasks import FetchTasks


def test_simulated_clock_jumps_to_the_wake_time_when_idle_and_stands_still_in_flight():
    async def scenario() -> list[float]:
        clock = SimulatedClock(start=10.0, epoch=1000.0)
        tasks = FetchTasks()
        seen = [clock.monotonic(), clock.time()]
        await clock.wait(tasks, 25.0)              # idle: straight to 25
        seen.append(clock.monotonic())
        release = asyncio.Event()

        async def fetch() -> None:
            await release.wait()

        tasks.spawn(fetch())
        asyncio.get_running_loop().call_later(0.01, release.set)
        await clock.wait(tasks, 99.0)              # in flight: the task's end, no jump
        seen.append(clock.monotonic())
        await clock.wait(tasks, 20.0)              # never backwards
        seen.append(clock.monotonic())
        await clock.wait(tasks, None)              # nothing to wait for: the run ends
        seen.append(float(tasks.stopping))
        return seen

    assert asyncio.run(scenario()) == [10.0, 1010.0, 25.0, 25.0, 25.0, 1.0]


def test_stamps_date_an_answer_at_its_start_on_the_simulated_clock_only():
    clock = SimulatedClock(start=5.0, epoch=100.0)
    assert clock.span(1.5, 2.5, 105.0) == (105.0, 105.0)
    assert WallClock().span(1.5, 2.5, 105.0) == (1.5, 2.5)
