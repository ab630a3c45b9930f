"""Write ``ovgather/ops/core/releases.json``: what the IR reader of each OpenVINO release
knows, for ``ovgather check --target-runtime``.

Each older release is installed once in its own virtual environment under
``~/.cache/ovgather/openvino-<release>/`` (``python -m venv`` + ``pip install
openvino==<patch> "numpy<2"``: 2023.0 and 2024.0 were built against numpy 1, and nothing
older than 2023.0 installs on Python 3.11). The wheels of 2023.0 and 2024.0 carry no opset
tables and their Python API lists no opset contents, so every release is asked the same way:
``read_model`` on one-layer IRs (``tools/list_opsets.py`` probes), for every (type, opset)
pair the installed OpenVINO knows up to its last opset, and for every element type as a
Parameter's ``element_type``, a Const's and a Convert's ``destination_type``. The installed
OpenVINO is probed the same way and listed as the newest release.

Every compile in a release's venv sets f32 inference precision, as ovgather's own do: the
CPU plugin computes in bf16 by default on CPUs that have it.

The venvs take about 690 MB (214, 225 and 250 MB). ``OVGATHER_CACHE`` moves them;
``OVGATHER_CACHE=off`` installs nothing (the tests that run the releases are then skipped).
Two processes asking for the same release at once (``pytest -n 2``) install it once: the
second waits on a lock file beside the venv.

Usage: ``python tools/release_table.py`` (installs what is missing, rewrites the file),
``--check`` (exit 1 when the committed file differs from what the releases give),
``--install`` (only install the missing venvs, in parallel: what CI runs first).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, one process at a time
    fcntl = None

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "ovgather" / "ops" / "core" / "releases.json"

#: release as OpenVINO names it -> the newest patch that installs on Python 3.11
RELEASES = {"2023.0": "2023.0.2", "2024.0": "2024.0.0", "2025.0": "2025.0.0"}


def _list_opsets():
    spec = importlib.util.spec_from_file_location("list_opsets", ROOT / "tools" / "list_opsets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the value of ``OVGATHER_CACHE`` that installs nothing
OFF = "off"


class ReleaseUnavailable(RuntimeError):
    """An old release's venv is not there and cannot be made (the cache is off or not
    writable, or pip cannot reach an index): the reason in words."""


def cache_dir() -> Path:
    """Where the release venvs live (``OVGATHER_CACHE`` or ``~/.cache/ovgather``)."""
    return Path(os.environ.get("OVGATHER_CACHE") or Path.home() / ".cache" / "ovgather")


@contextlib.contextmanager
def file_lock(path: Path):
    """Hold an exclusive lock on the file ``path`` (made if missing) until the block ends."""
    with open(path, "a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def release_python(release: str) -> Path:
    """The interpreter of ``release``'s venv, installed first when missing (a
    ReleaseUnavailable says why it cannot be).

    The venv is built beside its final place and renamed when pip has finished, so an
    interrupted install never leaves a venv that looks complete; a lock file beside it
    makes a second process wait for the first one's install instead of starting its own.
    """
    if os.environ.get("OVGATHER_CACHE", "").lower() == OFF:
        raise ReleaseUnavailable("OVGATHER_CACHE=off: no old release is installed")
    final = cache_dir() / f"openvino-{release}"
    python = final / "bin" / "python"
    if python.exists():
        return python
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(final.with_name(f".{final.name}.lock")):
            if not python.exists():
                _install(release, final)
    except OSError as err:
        raise ReleaseUnavailable(f"cannot write the cache {final.parent} ({err.strerror}; "
                                 f"OVGATHER_CACHE moves it)") from err
    return python


def _install(release: str, final: Path) -> None:
    work = final.with_name(final.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    steps = {"venv": [sys.executable, "-m", "venv", str(work)],
             "pip install": [str(work / "bin" / "python"), "-m", "pip", "install", "-q",
                             f"openvino=={RELEASES[release]}", "numpy<2"]}
    for what, step in steps.items():
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            said = [ln.strip() for ln in (done.stderr or done.stdout).splitlines() if ln.strip()]
            raise ReleaseUnavailable(f"could not install OpenVINO {RELEASES[release]} into "
                                     f"{final.parent} ({what}: "
                                     f"{said[-1] if said else 'exit ' + str(done.returncode)})")
    work.rename(final)


def release_pythons(releases=tuple(RELEASES)) -> dict[str, Path]:
    """The interpreter of each release's venv, the missing ones installed side by side."""
    with ThreadPoolExecutor(len(releases)) as pool:
        return dict(zip(releases, pool.map(release_python, releases), strict=True))


_TYPES_PROBE = """
import sys
try:
    from openvino import Core, Tensor, Type, __version__ as version
except ImportError:  # releases before 2023.1 keep the API in openvino.runtime
    from openvino.runtime import Core, Tensor, Type, get_version
    version = get_version()
core = Core()
weights = Tensor(Type.u8, [64])
print(version.split("-")[0])
for line in sys.stdin:
    kind, name, precision = line.split()
    xml = sys.argv[1 + ["parameter", "const", "convert"].index(kind)]
    xml = xml.replace("ETYPE", name).replace("PREC", precision)
    try:
        core.read_model(xml, weights)
        print("ok", flush=True)
    except Exception:
        print("refused", flush=True)
"""

#: 2023.0 takes a model text for an IR only when it is longer than its 512-byte sniff
_HEAD = '<?xml version="1.0"?><net name="probe" version="11"><layers>' + " " * 512
_RESULT = ('<layer id="2" name="r" type="Result" version="opset1"><input><port id="0"><dim>2</dim>'
           '</port></input></layer></layers><edges><edge from-layer="0" from-port="0" '
           'to-layer="ID" to-port="0"/>EDGE</edges></net>')
_PARAMETER = ('<layer id="0" name="p" type="Parameter" version="opset1"><data shape="2" '
              'element_type="ETYPE"/><output><port id="0" precision="PREC"><dim>2</dim></port>'
              '</output></layer>')
_CONST = ('<layer id="0" name="c" type="Const" version="opset1"><data element_type="ETYPE" '
          'shape="2" offset="0" size="SIZE"/><output><port id="0" precision="PREC"><dim>2</dim>'
          '</port></output></layer>')
_CONVERT = ('<layer id="0" name="p" type="Parameter" version="opset1"><data shape="2" '
            'element_type="f32"/><output><port id="0" precision="FP32"><dim>2</dim></port></output>'
            '</layer><layer id="1" name="x" type="Convert" version="opset1"><data '
            'destination_type="ETYPE"/><input><port id="0"><dim>2</dim></port></input><output>'
            '<port id="1" precision="PREC"><dim>2</dim></port></output></layer>')


def _type_irs() -> list[str]:
    """The three one-layer IRs of the element type probe, ``ETYPE`` to be filled in."""
    direct = _RESULT.replace("ID", "2").replace("EDGE", "")
    through = _RESULT.replace("ID", "1").replace(
        "EDGE", '<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>')
    # 2 elements of at most 64 bits; a string Const takes its own layout, 2 empty strings
    const = _CONST.replace("SIZE", "16")
    return [_HEAD + _PARAMETER + direct, _HEAD + const + direct, _HEAD + _CONVERT + through]


def probe_types(python: str, names: list[str]) -> tuple[str, dict[str, list[str]]]:
    """(the release's version, ``{element type: the uses its reader takes}``)."""
    from ovgather.element_types import precision_of

    kinds = ("parameter", "const", "convert")
    asks = [(k, n) for n in names for k in kinds]
    run = subprocess.run([python, "-c", _TYPES_PROBE, *_type_irs()], text=True, check=True,
                         input="".join(f"{k} {n} {precision_of(n)}\n" for k, n in asks),
                         capture_output=True)
    version, *answers = run.stdout.split()
    taken: dict[str, list[str]] = {n: [] for n in names}
    for (kind, name), said in zip(asks, answers, strict=True):
        if said == "ok":
            taken[name].append(kind)
    return version, taken


_COMPILE_PROBE = """
import sys
try:
    from openvino import Core, Tensor, Type
except ImportError:  # releases before 2023.1 keep the API in openvino.runtime
    from openvino.runtime import Core, Tensor, Type
core = Core()
F32 = {"INFERENCE_PRECISION_HINT": "f32"}  # not the bf16 a CPU with it gets by default
for line in sys.stdin:
    name, precision = line.split()
    xml = sys.argv[1].replace("ETYPE", name).replace("PREC", precision)
    try:
        core.compile_model(core.read_model(xml, Tensor(Type.u8, [64])), "CPU", F32)
        print("ok", flush=True)
    except Exception:
        print("refused", flush=True)
"""


def probe_input_types(python: str, names: list[str]) -> list[str]:
    """The element types the release's CPU plugin compiles a model input of (a
    Parameter read by a Convert to f32): an input type is the model's interface, which no
    rewrite can change."""
    from ovgather.element_types import precision_of

    through = _RESULT.replace("ID", "1").replace(
        "EDGE", '<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>')
    to_f32 = _CONVERT.replace('element_type="f32"', 'element_type="ETYPE"').replace(
        'precision="FP32"', 'precision="PREC"', 1).replace(
        'destination_type="ETYPE"', 'destination_type="f32"').replace(
        '<port id="1" precision="PREC">', '<port id="1" precision="FP32">')
    run = subprocess.run([python, "-c", _COMPILE_PROBE, _HEAD + to_f32 + through], text=True,
                         check=True, capture_output=True,
                         input="".join(f"{n} {precision_of(n)}\n" for n in names))
    return [n for n, said in zip(names, run.stdout.split(), strict=True) if said == "ok"]


def probe_release(python: str) -> dict:
    """One release's row: its version, its opset runs and the element types it reads."""
    from ovgather.element_types import ELEMENT_TYPES
    from ovgather.ops.core.opsets import LAST_OPSET, OPSETS

    tool = _list_opsets()
    pairs = [(t, n) for t in OPSETS for n in range(1, LAST_OPSET + 1)]
    built = tool.probe_reader(pairs, python)
    opsets: dict[int, dict[str, int]] = {n: {} for n in range(1, LAST_OPSET + 1)}
    for (op, n), seen in built.items():
        opsets[n][op] = int(seen[5:]) if seen.startswith("opset") else _version_in(op, n)
    opsets = {n: ops for n, ops in opsets.items() if ops}
    version, types = probe_types(python, list(ELEMENT_TYPES))
    return {"openvino": version, "last_opset": max(opsets),
            "opsets": {op: [list(r) for r in runs]
                       for op, runs in tool.op_table(opsets).items()},
            "element_types": {n: uses for n, uses in types.items() if uses},
            "input_types_compiled": probe_input_types(
                python, [n for n, uses in types.items() if "parameter" in uses])}


def _version_in(op: str, n: int) -> int:
    """The op version the installed OpenVINO's opset ``n`` (or the nearest) holds: the guess
    when the older reader took the pair without showing what it built."""
    from ovgather.ops.core.opsets import OPSETS

    runs = OPSETS[op]
    return min(runs, key=lambda r: 0 if r[0] <= n <= r[1] else min(abs(n - r[0]),
                                                                    abs(n - r[1])))[2]


def render(rows: dict[str, dict]) -> str:
    """The text of ``releases.json``: one release a block, one op type a line."""
    blocks = []
    for release, row in rows.items():
        ops = ",\n".join(f'        "{op}": {json.dumps(runs)}'
                         for op, runs in row["opsets"].items())
        types = ",\n".join(f'        "{t}": {json.dumps(uses)}'
                           for t, uses in row["element_types"].items())
        blocks.append(f'    "{release}": {{\n      "openvino": "{row["openvino"]}",\n'
                      f'      "last_opset": {row["last_opset"]},\n'
                      f'      "input_types_compiled": {json.dumps(row["input_types_compiled"])},\n'
                      f'      "element_types": {{\n{types}\n      }},\n'
                      f'      "opsets": {{\n{ops}\n      }}\n    }}')
    return '{\n  "releases": {\n' + ",\n".join(blocks) + "\n  }\n}\n"


def generate() -> str:
    """``releases.json`` as the release venvs and the installed openvino give it."""
    rows = {release: probe_release(str(python)) for release, python in release_pythons().items()}
    current = probe_release(sys.executable)
    rows[".".join(current["openvino"].split(".")[:2])] = current
    return render(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--install", action="store_true",
                        help="only install the missing release venvs, all at once")
    args = parser.parse_args(argv)
    if args.install:
        try:
            pythons = release_pythons()
        except ReleaseUnavailable as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        print("\n".join(map(str, pythons.values())))
        return 0
    return _list_opsets().write_or_check(TARGET, generate(), args.check)


if __name__ == "__main__":
    sys.exit(main())
