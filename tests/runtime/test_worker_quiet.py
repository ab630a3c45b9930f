"""Ctrl-C reaches every process of the terminal's foreground group: the runtime's worker
processes and ``--jobs``'s workers end without a word (no ``Traceback …
KeyboardInterrupt`` once the prompt is back), ovgather says ``error: interrupted`` once
and exits 130. And the pieces that make it so: a child ended by SIGINT interrupts the
call rather than crashing it, a forked copy never stops its parent's child, a SIGTERM
that lands in a ``__del__`` still ends a ``--jobs`` worker, quietly."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from slowdown import seconds
from terminal import open_terminal, terminal_env

from ovgather.runtime import Worker


@pytest.fixture()
def interruptible():
    """Ctrl-C as a terminal delivers it: a run started in the background of a shell
    inherits SIGINT ignored, and so would its worker, which then never ends by it. A
    handler here makes the worker start with the default again (exec resets a handled
    signal, never an ignored one)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)

ROOT = Path(__file__).resolve().parents[2]
DEEP = ROOT / "ir_corpus" / "llama_deep" / "pytorch_dynamic.xml"

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _group(pgid: int) -> list[int]:
    """The processes of process group ``pgid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[2]) == pgid and stat[0] != "Z":
                found.append(int(entry))
    return found


def _read(master: int, until: float, proc: subprocess.Popen | None = None) -> bytes:
    """What the terminal shows until ``until`` (or until ``proc`` ends)."""
    shown = b""
    while time.monotonic() < until and (proc is None or proc.poll() is None):
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: no process holds the terminal any more
                break
            if not chunk:
                break
            shown += chunk
    return shown


def _ctrl_c(argv: list[str], processes: int, tmp_path: Path) -> tuple[int, str]:
    """``ovgather argv`` on a terminal, in a process group of its own as a shell starts
    it; Ctrl-C (SIGINT to the group) once ``processes`` of it run (its runtime child
    importing OpenVINO), then what the terminal shows until 2 s after the command ended."""
    master, slave = open_terminal()
    proc = subprocess.Popen([sys.executable, "-m", "ovgather", *argv], cwd=ROOT,
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                            env=terminal_env(100, OVGATHER_PROGRESS_DELAY="3600"),
                            # as from a terminal: a job started in the background (`cmd &`)
                            # inherits SIGINT ignored, and ovgather leaves an ignored one alone
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(slave)
    shown = b""
    try:
        end = time.monotonic() + seconds(120)
        while len(_group(proc.pid)) < processes:
            assert proc.poll() is None and time.monotonic() < end, shown
            shown += _read(master, time.monotonic() + 0.05)
        shown += _read(master, time.monotonic() + 0.3)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends the whole foreground group
        shown += _read(master, time.monotonic() + seconds(60), proc)
        code = proc.wait(timeout=seconds(60))
        shown += _read(master, time.monotonic() + 2)  # after the prompt is back
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)
    return code, shown.decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for i in range(6):
        for suffix in (".xml", ".bin"):
            (tmp_path / f"m{i}").mkdir(exist_ok=True)
            (tmp_path / f"m{i}" / f"model{suffix}").symlink_to(DEEP.with_suffix(suffix))
    return tmp_path


@linux
@pytest.mark.parametrize("argv, processes", [
    (["validate", "--all-layers", str(DEEP)], 2),  # ovgather and its runtime process
    (["validate", str(DEEP)], 2),
    (["compare", str(DEEP), str(DEEP)], 2),
    (["validate", "FOLDER", "--jobs", "2"], 5),  # two workers, the runtime process of each
    (["check", "FOLDER", "--jobs", "2"], 3),
], ids=["validate --all-layers", "validate", "compare", "validate --jobs", "check --jobs"])
def test_ctrl_c_ends_every_process_quietly_and_exits_130(argv, processes, folder, tmp_path):
    argv = [str(folder) if a == "FOLDER" else a for a in argv]
    code, shown = _ctrl_c(argv, processes, tmp_path)
    assert code == 130, shown
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown, shown
    assert "Exception ignored" not in shown, shown
    assert [ln for ln in shown.splitlines() if ln.startswith("error:")] == \
        ["error: interrupted"], shown
    assert shown.rstrip().endswith("error: interrupted"), shown  # nothing after it


def test_a_child_ended_by_ctrl_c_interrupts_the_call_silently(capfd, interruptible):
    with Worker() as worker:
        worker.start()
        pid = worker._proc.pid
        with pytest.raises(KeyboardInterrupt):  # not a RuntimeCrash: no child started for it
            worker.call(os.kill, pid, signal.SIGINT)
        assert worker.starts == 1
        assert worker.call(divmod, 7, 2) == (3, 1)  # the caller goes on: a new child
    err = capfd.readouterr().err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


def test_threads_of_an_interrupted_run_stop_at_once_and_new_ones_run(interruptible):
    results: dict[str, object] = {}
    go = threading.Event()

    def queued() -> None:  # a pool's thread: its next call belongs to the interrupted run
        go.wait()
        try:
            results["queued"] = worker.call(divmod, 1, 1)
        except KeyboardInterrupt:
            results["queued"] = "interrupted"

    with Worker() as worker:
        worker.start()
        old = threading.Thread(target=queued, daemon=True)
        old.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                worker.call(os.kill, worker._proc.pid, signal.SIGINT)
        finally:
            go.set()
        old.join(seconds(60))
        starts = worker.starts
        fresh = threading.Thread(target=lambda: results.update(fresh=worker.call(divmod, 9, 4)),
                                 daemon=True)
        fresh.start()
        fresh.join(seconds(60))
    assert results == {"queued": "interrupted", "fresh": (2, 1)}
    assert starts == 1  # the interrupted thread started no child


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_copy_closing_its_workers_leaves_the_parents_child_running():
    with Worker() as worker:
        worker.call(divmod, 7, 2)
        pid = os.fork()
        if pid == 0:  # a --jobs worker stops "its" runtime processes on its way out
            try:
                worker.close()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        assert worker.call(divmod, 7, 2) == (3, 1)
        assert worker.starts == 1


def test_sigterm_landing_in_a_del_still_ends_a_jobs_worker_quietly():
    script = textwrap.dedent("""
        import os, signal
        from ovgather.cli import folders

        signal.signal(signal.SIGTERM, folders._stop)

        class Held:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)  # handled here, in __del__
                sum(range(1000))

        held = Held()
        del held
        print("went on")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=seconds(60))
    assert (run.returncode, run.stdout, run.stderr) == (128 + signal.SIGTERM, "", "")
