"""``--extension`` given what is no extension, made by a seeded generator: an empty name,
``.``, ``..``, a folder, a FIFO, a device, names no package can have, a package that does
not exist. Each is one ``error:`` line naming it, exit 2, never an internal error, and the
same line with one job and with ``--jobs`` (whose workers load the extensions)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from slowdown import seconds

ROOT = Path(__file__).resolve().parents[2]
MODELS = [ROOT / "ir_samples" / "gather_nd8_bd0.xml", ROOT / "ir_samples" / "mixed_ops.xml"]

#: every spec with -j 1 and -j 2, in one process: (code, stderr) each
_RUN = """
import contextlib, io, json, sys
from ovgather.cli import main
specs, models = json.loads(sys.argv[1]), sys.argv[2:]
out = []
for spec in specs:
    for jobs in ("1", "2"):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["check", *models, "--extension", spec, "--jobs", jobs])
        out.append([spec, jobs, code, err.getvalue()])
print(json.dumps(out))
"""


def _specs(rng: random.Random, tmp: Path) -> list[str]:
    os.mkfifo(tmp / "ext.so")
    (tmp / "folder.so").mkdir()
    fixed = ["", " ", ".", "..", "./", str(tmp), str(tmp / "folder.so"), str(tmp / "ext.so"),
             "/dev/null", str(tmp / "missing.so"), "a..b", ".hidden", "1abc", "a-b", "x.",
             "no_such_package_ovgather"]
    chars = "ab._-/ 0é\t"
    made = ["".join(rng.choice(chars) for _ in range(rng.randint(1, 6))) for _ in range(6)]
    return fixed + [m for m in made if not m.startswith("-")]


def test_an_extension_that_is_no_extension_is_one_error_line_with_or_without_jobs(tmp_path):
    specs = _specs(random.Random(5), tmp_path)
    done = subprocess.run([sys.executable, "-c", _RUN, json.dumps(specs), *map(str, MODELS)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=seconds(300))
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)
    by_spec: dict[str, dict[str, tuple[int, str]]] = {}
    for spec, jobs, code, err in runs:
        assert code == 2, (spec, jobs, err)
        assert err.startswith("error: --extension") and err.count("\n") == 1, (spec, jobs, err)
        assert "internal error" not in err and "Empty module name" not in err, (spec, err)
        by_spec.setdefault(spec, {})[jobs] = (code, err)
    for spec, seen in by_spec.items():
        assert seen["1"] == seen["2"], spec  # the same line, one job or workers
        if spec.strip():
            assert f"'{spec}'" in seen["1"][1] or spec in seen["1"][1], (spec, seen)
