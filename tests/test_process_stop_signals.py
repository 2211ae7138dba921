"""How every long-running process answers SIGINT and SIGTERM (``studio.process.StopSignals``).

The first signal cancels the work, or waits for a step it runs whole and then cancels it,
or, once the work runs with a stop event of its own (the demo after its banner), sets that
event; a second signal ends the process at once by the signal's default action.

Until 2026-12-07 the production processes (``run_until_signalled``) took a second signal
for another cancellation of their work, which cut their clean stop at whatever it awaited
(the controller logging its tables' clean stops: the tables it had not logged read as
killed at the next start), and a stop whose event loop was blocked never saw it at all;
only ``studio demo`` stopped at once (its own ``StartGuard``).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO

import pytest
from process_support import running, stop_handlers_kept

from studio import early_stop, process

AGAIN = "again: stopping at once"


@pytest.fixture(autouse=True)
def _stop_handlers_kept() -> Iterator[None]:
    with stop_handlers_kept():
        yield


# A production process (run_process alone) whose clean stop is slow: awaiting something
# that does not answer, or blocked in a call.
SLOW_CLEAN_STOP = """
import asyncio
import sys
import time

from studio import process

BLOCKED = sys.argv[1] == "blocked"


async def work() -> None:
    try:
        print("started", flush=True)
        await asyncio.sleep(3600)
    finally:
        print("stopping", flush=True)
        try:
            if BLOCKED:
                time.sleep(3600)  # the event loop blocked in a call
            else:
                await asyncio.sleep(3600)  # a database that does not answer
        except asyncio.CancelledError:
            print("clean stop cancelled", flush=True)
            raise


process.run_process(work, name="slow")
"""

# A process whose work runs a whole step, or runs with its own stop event (as the demo).
OWN_STEPS = """
import asyncio
import sys

from studio import process

signals = process.StopSignals()


async def whole() -> None:
    print("started", flush=True)
    with signals.whole("the step is done"):
        await asyncio.sleep(3600)
    print("after the step", flush=True)


async def own_stop() -> None:
    stop = asyncio.Event()
    signals.started(stop)
    print("started", flush=True)
    await stop.wait()
    print("stopping", flush=True)
    await asyncio.sleep(3600)  # its own stop, stuck


work = {"whole": whole, "own-stop": own_stop}[sys.argv[1]]
process.run_process(work, name="steps", signals=signals)
"""


def _child(tmp_path: Path, script: str, mode: str) -> AbstractContextManager[subprocess.Popen[str]]:
    path = tmp_path / "child.py"
    path.write_text(script)
    return running([sys.executable, str(path), mode])


def _read_until(stream: IO[str], needle: str) -> list[str]:
    seen: list[str] = []
    while True:
        line = stream.readline()
        if not line:
            raise AssertionError(f"ended before {needle!r}: {seen}")
        seen.append(line)
        if needle in line:
            return seen


@pytest.mark.timeout(90)
@pytest.mark.parametrize("stop", ["awaiting", "blocked"])
def test_a_second_signal_ends_a_production_process_at_once(tmp_path: Path, stop: str) -> None:
    # Before: awaiting, the second SIGINT cancelled the clean stop where it was (exit 0 after
    # "clean stop cancelled"); blocked, it was never seen and the process went on.
    with _child(tmp_path, SLOW_CLEAN_STOP, stop) as child:
        assert child.stdout is not None
        _read_until(child.stdout, "started")
        child.send_signal(signal.SIGINT)
        _read_until(child.stdout, "stopping")
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGINT, (out, err)
    assert f"SIGINT {AGAIN}" in err, err
    assert "clean stop cancelled" not in out, out
    assert "slow stopped" not in err, err


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("mode", "first_said"),
    [
        ("whole", "stopping once the step is done (a second signal stops at once)"),
        ("own-stop", "stopping"),
    ],
)
def test_a_second_signal_ends_the_process_in_a_whole_step_or_its_own_stop(
    tmp_path: Path, mode: str, first_said: str
) -> None:
    with _child(tmp_path, OWN_STEPS, mode) as child:
        assert child.stdout is not None and child.stderr is not None
        _read_until(child.stdout, "started")
        child.send_signal(signal.SIGTERM)
        _read_until(child.stderr if mode == "whole" else child.stdout, first_said)
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGTERM, (out, err)
    assert f"SIGTERM {AGAIN}" in err, err
    assert "after the step" not in out, out


# A process whose work has stopped and which has more to do before it exits (asyncio.run's
# end, a command's last lines: 0.2-0.4 s in the real ones).
AFTER_THE_STOP = """
import asyncio
import time

from studio import process


async def work() -> None:
    print("started", flush=True)
    await asyncio.sleep(3600)


process.run_process(work, name="ending")
print("stopped", flush=True)
time.sleep(3600)  # (not reached)
"""


def test_a_second_signal_after_the_work_stopped_still_ends_the_process_at_once(
    tmp_path: Path,
) -> None:
    # Before: Python's own handler again (the loop put it back): a KeyboardInterrupt
    # traceback, or exit 130 through typer, which systemd takes for a failure.
    with _child(tmp_path, AFTER_THE_STOP, "") as child:
        assert child.stdout is not None
        _read_until(child.stdout, "started")
        child.send_signal(signal.SIGINT)
        _read_until(child.stdout, "stopped")
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGINT, (out, err)
    assert err.endswith(f"SIGINT {AGAIN}\n"), err
    assert "Traceback" not in err, err


LOADING = """
import signal

from studio import early_stop

early_stop.defer()  # as the entry point's first lines
signal.raise_signal(signal.SIGINT)
print("noted", flush=True)
signal.raise_signal(signal.SIGINT)
print("went on", flush=True)
"""


def test_a_second_signal_while_the_command_loads_ends_it_at_once(tmp_path: Path) -> None:
    # Before: SIGINT's default handler again, a KeyboardInterrupt traceback wherever the
    # import was.
    path = tmp_path / "loading.py"
    path.write_text(LOADING)
    child = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert child.returncode == -signal.SIGINT, (child.stdout, child.stderr)
    assert child.stdout == "noted\n"
    assert child.stderr == f"SIGINT {AGAIN}\n"


async def _said(caplog: pytest.LogCaptureFixture, words: str) -> None:
    async with asyncio.timeout(10):
        while words not in caplog.text:
            await asyncio.sleep(0.01)


async def test_a_whole_step_runs_to_its_end_then_the_work_is_cancelled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="studio.process")
    signals = process.StopSignals()
    in_step = asyncio.Event()
    finish = asyncio.Event()
    done: list[str] = []

    async def work() -> None:
        with signals.whole("the step is done"):
            in_step.set()
            await finish.wait()
            done.append("step")
        done.append("after the step")  # the work is cancelled before this
        await asyncio.sleep(3600)

    running = asyncio.create_task(
        process.run_until_signalled(work(), name="worker", signals=signals)
    )
    await in_step.wait()
    signal.raise_signal(signal.SIGINT)
    await _said(caplog, "stopping once the step is done (a second signal stops at once)")
    assert not running.done()
    finish.set()
    assert await running is True
    assert done == ["step"]
    assert signals.cancelled


async def test_a_signal_in_a_whole_step_that_raised_still_stops_a_work_that_went_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Before: the step's error handled, the work ran on and the signal was lost.
    caplog.set_level(logging.WARNING, logger="studio.process")
    signals = process.StopSignals()
    in_step = asyncio.Event()
    finish = asyncio.Event()
    done: list[str] = []

    async def work() -> None:
        try:
            with signals.whole("the step is done"):
                in_step.set()
                await finish.wait()
                raise ValueError("the step failed")
        except ValueError:
            done.append("handled")
        await asyncio.sleep(3600)
        done.append("ran on")

    running = asyncio.create_task(
        process.run_until_signalled(work(), name="worker", signals=signals)
    )
    await in_step.wait()
    signal.raise_signal(signal.SIGINT)
    await _said(caplog, "stopping once the step is done")
    finish.set()
    async with asyncio.timeout(30):
        assert await running is True
    assert done == ["handled"]
    assert signals.cancelled


async def test_a_whole_step_in_a_child_task_cancels_the_work_after_it() -> None:
    signals = process.StopSignals()
    in_step = asyncio.Event()
    finish = asyncio.Event()
    done: list[str] = []

    async def step() -> None:
        with signals.whole("the child's step is done"):
            in_step.set()
            await finish.wait()
            done.append("step")
        done.append("after the step")

    async def work() -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(step())
            group.create_task(asyncio.sleep(3600))

    running = asyncio.create_task(
        process.run_until_signalled(work(), name="worker", signals=signals)
    )
    await in_step.wait()
    signal.raise_signal(signal.SIGTERM)
    await asyncio.sleep(0.05)
    assert not running.done()
    finish.set()
    assert await running is True  # the whole work, not only the step's task
    assert done == ["step"]


async def test_a_signal_sets_the_works_own_stop_event_and_a_slow_stop_is_reported(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(process, "STOP_REPORT_AFTER", 0.1)
    caplog.set_level(logging.WARNING, logger="studio.process")
    signals = process.StopSignals()
    running_now = asyncio.Event()
    released = asyncio.Event()
    ended: list[str] = []

    async def work() -> None:
        stop = asyncio.Event()
        signals.started(stop)
        running_now.set()
        await stop.wait()
        await released.wait()  # its own stop, slow: not cancelled
        ended.append("stopped itself")

    running = asyncio.create_task(
        process.run_until_signalled(work(), name="demo-like", signals=signals)
    )
    await running_now.wait()
    signal.raise_signal(signal.SIGINT)
    await _said(caplog, "demo-like: still stopping after 0.1 s")  # the stop watchdog
    released.set()
    assert await running is True
    assert ended == ["stopped itself"]
    assert not signals.cancelled


async def test_a_signal_before_the_loop_ran_stops_the_work_before_it_begins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(early_stop, "take", lambda: True)
    began: list[str] = []

    async def work() -> None:
        began.append("began")

    assert await process.run_until_signalled(work(), name="worker") is True
    assert began == []


async def test_a_work_cancelled_from_outside_is_not_taken_for_a_stop() -> None:
    async def work() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await process.run_until_signalled(work(), name="worker")


# A production process whose clean stop waits for a line on stdin (its event loop blocked
# in the read: a signal meanwhile is answered from the signal handler itself).
HANGUP = """
import asyncio
import sys

from studio import process


async def work() -> None:
    try:
        print("started", flush=True)
        await asyncio.sleep(3600)
    finally:
        print("stopping", flush=True)
        sys.stdin.readline()


process.configure_logging("INFO")
process.run_process(work, name="hung-up")
"""


@pytest.mark.timeout(90)
@pytest.mark.parametrize("second", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
def test_a_hang_up_is_a_clean_stop_and_its_second_sighup_is_ignored(
    tmp_path: Path, second: signal.Signals
) -> None:
    # The terminal or SSH session the command ran in closed: SIGHUP, as a rule twice (the
    # shell passes its own on, the kernel sends another as the shell exits). Before: the
    # first one killed the process, no clean stop.
    path = tmp_path / "child.py"
    path.write_text(HANGUP)
    child = subprocess.Popen(
        [sys.executable, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        _read_until(child.stdout, "started")
        child.send_signal(signal.SIGHUP)
        _read_until(child.stdout, "stopping")
        child.send_signal(second)  # (sent before the line the stop waits for)
        out, err = child.communicate("go on\n", timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if second == signal.SIGHUP:
        assert child.returncode == 0, (out, err)
        assert "hung-up stopped" in err, err
        assert AGAIN not in err, err
    else:  # a SIGTERM after it is a second signal, as ever
        assert child.returncode == -signal.SIGTERM, (out, err)
        assert f"SIGTERM {AGAIN}" in err, err


def test_a_hang_up_while_the_command_loads_is_noted_twice_without_stopping_at_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "loading.py"
    path.write_text(
        LOADING.replace("SIGINT", "SIGHUP").replace(
            'print("went on", flush=True)', 'print("went on", early_stop.take(), flush=True)'
        )
    )
    child = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert child.returncode == 0, (child.stdout, child.stderr)
    assert child.stdout == "noted\nwent on True\n"
    assert child.stderr == ""


NOHUP = """
import signal

signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup leaves it

from studio import early_stop, process

assert signal.SIGHUP not in early_stop.STOP_SIGNALS
exec(open(__file__.replace("nohup.py", "child.py")).read())
"""


@pytest.mark.timeout(90)
def test_a_command_started_with_sighup_ignored_keeps_it_ignored(tmp_path: Path) -> None:
    # nohup (or a supervisor that ignores SIGHUP): the command outlives the session.
    (tmp_path / "child.py").write_text(HANGUP)
    path = tmp_path / "nohup.py"
    path.write_text(NOHUP)
    child = subprocess.Popen(
        [sys.executable, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        _read_until(child.stdout, "started")
        status = Path(f"/proc/{child.pid}/status").read_text().splitlines()
        fields = dict(line.split(":", 1) for line in status)
        assert int(fields["SigIgn"], 16) >> (signal.SIGHUP - 1) & 1, fields["SigIgn"]
        child.send_signal(signal.SIGHUP)  # ignored: the SIGTERM after it is the first stop
        child.send_signal(signal.SIGTERM)
        _read_until(child.stdout, "stopping")
        out, err = child.communicate("go on\n", timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, (out, err)
    assert "hung-up stopped" in err, err
