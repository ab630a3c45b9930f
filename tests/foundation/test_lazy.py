"""numpy and networkx are imported on first use, and that first use may come from many
threads at once (``ovgather._lazy``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: A fresh process whose threads all call read_ir before anything imported networkx: the
#: first attribute lookups on the deferred modules race.
RACE = """
import sys, threading, traceback
import ovgather as og
errors, start = [], threading.Barrier(int(sys.argv[2]))
def work():
    start.wait()
    try:
        og.read_ir(sys.argv[1])
    except Exception:
        errors.append(traceback.format_exc())
threads = [threading.Thread(target=work) for _ in range(int(sys.argv[2]))]
[t.start() for t in threads]
[t.join() for t in threads]
print(len(errors))
print(errors[0] if errors else "")
"""


@pytest.mark.parametrize("run", range(3))
def test_read_ir_from_many_threads_at_once_in_a_fresh_process(run):
    done = subprocess.run([sys.executable, "-c", RACE,
                           str(ROOT / "ir_samples" / "gather_nd8_bd3.xml"), "8"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    count, _, trace = done.stdout.partition("\n")
    assert count == "0", trace


def test_the_deferred_module_becomes_the_real_one_on_first_use():
    code = ("import sys; from ovgather._lazy import lazy_import; "
            "m = lazy_import('fractions'); assert 'fractions' not in sys.modules; "
            "f = m.Fraction(1, 3); import fractions; "
            "assert m.Fraction is fractions.Fraction and f == fractions.Fraction(1, 3)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr

