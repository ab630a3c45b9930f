"""``check --jobs N`` (and one job) in a pipe: each model's line reaches the reader as
that model ends, not when the whole run does, and the run ends with its summary.

The last model is held back (its read waits for a gate file the test creates only after
it has seen the first model's line), so the test does not race the clock: a line that
stays in stdout's buffer until the exit is never seen before the gate opens."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from slowdown import seconds

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"

#: runs the command line with the last model's read held until the gate file exists
#: (in the parent and in every forked worker, which inherit the patch)
_HELD = """
import os, sys, time
import ovgather.cli.check as check
real = check.load
gate = sys.argv.pop(1)
def load(path, *args, **kw):
    if os.path.basename(path).startswith("z_last"):
        while not os.path.exists(gate):
            time.sleep(0.02)
    return real(path, *args, **kw)
check.load = load
sys.argv[1:1] = ["check"]
from ovgather.cli import console_main
console_main()
"""


def _ir(src: Path, dst: Path) -> Path:
    shutil.copy(src, dst)
    shutil.copy(src.with_suffix(".bin"), dst.with_suffix(".bin"))
    return dst


def _line(stream, deadline: float) -> str | None:
    """The next line of ``stream``, or None when none comes before ``deadline``."""
    left = deadline - time.monotonic()
    poller = select.poll()  # not select.select: a long test run may hold fds past 1024
    poller.register(stream, select.POLLIN)
    if left <= 0 or not poller.poll(left * 1000):
        return None
    return stream.readline().decode()


@pytest.mark.parametrize("argv", [("--jobs", "2", "{folder}"),
                                  ("{first}", "{second}", "{last}")],
                         ids=["jobs-2-folder", "one-job-files"])
def test_each_models_line_reaches_a_pipe_as_the_model_ends(tmp_path, argv):
    folder = tmp_path / "models"
    folder.mkdir()
    first = _ir(SAMPLES / "gather_nd8_bd3.xml", folder / "a_first.xml")
    second = _ir(SAMPLES / "gather_nd5_bd0.xml", folder / "b_second.xml")
    last = _ir(SAMPLES / "gather_nd8_bd0.xml", folder / "z_last.xml")
    gate = tmp_path / "gate"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    cmd = [sys.executable, "-c", _HELD, str(gate),
           *(a.format(folder=folder, first=first, second=second, last=last) for a in argv)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=tmp_path)
    try:
        line = _line(proc.stdout, time.monotonic() + seconds(20))
        assert line is not None, "no line in the pipe while the last model was still running"
        assert line.startswith(f"{first}: OK:"), line
        assert proc.poll() is None
        gate.touch()
        rest = proc.stdout.read().decode().splitlines()
        assert proc.wait(timeout=seconds(60)) == 0, proc.stderr.read().decode()
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert rest[0].startswith(f"{second}: OK:"), rest
    assert rest[1].startswith(f"{last}: OK:"), rest
    if "--jobs" in argv:  # a folder's run ends with its summary
        assert rest[2] == "summary: 3 model(s): 3 ok, 0 failing, 0 could not be used"
        assert len(rest) == 3
    else:
        assert len(rest) == 2
