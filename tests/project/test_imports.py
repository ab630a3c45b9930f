"""``ovgather check FILE`` imports what it runs, and nothing else: the check command's
module alone of the CLI's, not ``cli/folders.py`` (no folder, no ``--jobs``), the op files
of the model's op types alone, no numpy, networkx or openvino. Every module a command
imports costs each run its load (docs/performance.md: the check process's fixed cost).

The modules are read from ``python -X importtime`` (what a profile of the run shows) and
from ``sys.modules`` at the end of the same command run in-process (which also holds a
module imported through ``importlib.import_module``, which importtime does not list)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ovgather.ops import OP_MODULES

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "ir_samples/gather_nd8_bd3.xml"  # Parameter, Const, GatherND-8, Result

#: the CLI modules ``check FILE`` needs: the entry, what every command shares, check's own
CLI_MODULES = {"ovgather.cli", "ovgather.cli.common", "ovgather.cli.output",
               "ovgather.cli.models", "ovgather.cli.check"}
#: the op files of the sample's op types: GatherND, and Result (elementwise.py)
OP_FILES = {"ovgather.ops.gather_nd", "ovgather.ops.elementwise"}
#: packages and modules ``check FILE`` never needs
DENIED_PREFIXES = ("ovgather.runtime", "ovgather.passes", "ovgather.edit", "ovgather.validate",
                   "ovgather.comparison", "ovgather.debug", "ovgather.cost", "ovgather.views",
                   "numpy", "networkx", "openvino", "tqdm", "onnx")
DENIED = {"ovgather.ir.writer", "ovgather.infer.target", "ovgather.infer.symbols",
          "ovgather.ops.core.symbolic", "ovgather.ops.core.releases", "ovgather.ops.reference",
          "traceback"}

_IN_PROCESS = """
import contextlib, io, sys
from ovgather.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(code, *sorted(sys.modules))
"""


def _importtime_modules(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "ovgather", *argv],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    return names


def _loaded_modules(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _IN_PROCESS, *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    code, *names = done.stdout.split()
    assert code in ("0", "1"), done.stderr  # ir_samples holds wrong models: exit 1
    return set(names)


@pytest.fixture(scope="module")
def imported() -> dict[str, set[str]]:
    argv = ("check", SAMPLE, "--json")
    return {"importtime": _importtime_modules(*argv), "sys.modules": _loaded_modules(*argv)}


@pytest.mark.parametrize("where", ["importtime", "sys.modules"])
def test_check_of_one_file_imports_only_what_it_runs(imported, where):
    names = imported[where]
    cli = {n for n in names if n.startswith("ovgather.cli")}
    assert cli == CLI_MODULES, cli - CLI_MODULES  # no other command, no cli.folders
    op_files = {n for n in names if n.rsplit(".", 1)[-1] in OP_MODULES
                and n.startswith("ovgather.ops.")}
    assert op_files == OP_FILES, op_files ^ OP_FILES
    denied = sorted(n for n in names if n in DENIED or n.startswith(DENIED_PREFIXES))
    assert not denied, denied


def test_importtime_lists_the_op_files_it_loads(imported):
    """The registry and the CLI import through ``__import__``, which ``-X importtime``
    reports, so a profile of a run shows every op file and command it loads."""
    ours = {n for n in imported["sys.modules"] if n.startswith("ovgather")}
    assert ours <= imported["importtime"], ours - imported["importtime"]


def test_a_folder_or_jobs_brings_in_the_folders_module(tmp_path):
    names = _loaded_modules("check", "--jobs", "1", "ir_samples/gather_nd8_bd3.xml", "--json")
    assert "ovgather.cli.folders" not in names
    names = _loaded_modules("check", "ir_samples", "--json")
    assert "ovgather.cli.folders" in names


def test_check_does_not_read_the_installed_package_metadata(imported):
    """The compiled walk is in the package, so nothing needs the distribution's file
    list (importlib.metadata and the scan of sys.path cost a check 30-100 ms)."""
    if not any((ROOT / "ovgather" / "ir").glob("_fastwalk.*.so")):
        pytest.skip("no compiled walk built in this tree")
    assert "importlib.metadata" not in imported["sys.modules"]
