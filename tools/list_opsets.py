"""Write ``ovgather/ops/core/opsets.json``: which opsets of the installed OpenVINO hold which
op versions.

OpenVINO's IR reader looks a layer up by its ``type`` in the opset its ``version`` names
(``type="GatherND" version="opset8"``) and refuses an opset that does not hold that type.
The opsets are compiled into the library from the ``opsetN_tbl.hpp`` tables the wheel
installs under ``openvino/include/openvino/opsets``: one ``_OPENVINO_OP_REG(Type,
ov::op::vK)`` line per op, the class name being the op's type name and ``vK`` its version
(``v0``: the first opset listing it, as its type info says). The reader holds a little
more than the tables: every other (type, opset) pair is probed through ``read_model`` on a
one-layer IR, and one it does not refuse as "doesn't contain the operation" is added,
with the op version of the nearest opset that lists the type (opset1 reads MVN,
ROIPooling and ReorgYolo, which the tables put in opset2). The probes run in a child
process: an op built from a layer without the inputs and attributes it needs may crash,
which also means the reader took the pair.

Usage: ``python tools/list_opsets.py`` (rewrites the file), ``--check`` (exit 1 when the
committed file differs from what the installed OpenVINO gives).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "ovgather" / "ops" / "core" / "opsets.json"
_REG = re.compile(r"^_OPENVINO_OP_REG\(\s*(\w+)\s*,\s*ov::op::v(\d+)\s*\)", re.M)


def tables_dir() -> Path:
    """The folder of the installed openvino's ``opsetN_tbl.hpp`` files."""
    import openvino

    folder = Path(openvino.__file__).parent / "include" / "openvino" / "opsets"
    if not folder.is_dir():
        raise SystemExit(f"no opset tables at {folder}: is this an openvino wheel install?")
    return folder


def read_opsets(folder: Path) -> dict[int, dict[str, int]]:
    """``{opset number: {op type: op version}}`` from the tables.

    The op version is the ``K`` of ``ov::op::vK``, except for ``v0``, the classes older
    than versioning: those are named by the first opset that lists them (Gelu in opset2
    is Gelu-2, as its type info says).
    """
    listed = {}
    for path in folder.glob("opset*_tbl.hpp"):
        number = int(path.name[len("opset"):-len("_tbl.hpp")])
        listed[number] = dict(_REG.findall(path.read_text()))
    listed = dict(sorted(listed.items()))
    first: dict[tuple[str, str], int] = {}
    for number, ops in listed.items():
        for op, ns in ops.items():
            first.setdefault((op, ns), number)
    return {n: {op: int(ns) or first[op, ns] for op, ns in ops.items()}
            for n, ops in listed.items()}


_PROBE = """
import re
import sys
try:
    from openvino import Core, Tensor, Type
except ImportError:  # releases before 2023.1 keep the API in openvino.runtime
    from openvino.runtime import Core, Tensor, Type
core = Core()
for line in sys.stdin:
    op, opset = line.split()
    xml = sys.argv[1].replace("OP_TYPE", op).replace("OPSET", opset)
    try:
        model = core.read_model(xml, Tensor(Type.u8, [0]))
        built = [n.get_type_info().version_id for n in model.get_ops()
                 if n.get_friendly_name() == "x"]
        said = "ok"
    except Exception as err:
        said = str(err)
        built = re.findall(r"validating node '(\\w+)::" + op + " ", said)
    refused = "doesn't contain the operation" in said or "from unsupported opset" in said
    print("refused" if refused else "taken:" + "".join(built[:1]), flush=True)
"""

_IR = """<?xml version="1.0"?><net name="probe" version="11"><layers>
<layer id="0" name="p" type="Parameter" version="opset1"><data shape="2" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="1" name="x" type="OP_TYPE" version="OPSET"><data/><input><port id="0"><dim>2</dim>
</port></input><output><port id="1" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="2" name="r" type="Result" version="opset1"><input><port id="0"><dim>2</dim></port>
</input></layer></layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges></net>"""


def probe_reader(pairs: list[tuple[str, int]], python: str = sys.executable
                 ) -> dict[tuple[str, int], str]:
    """The (type, opset) pairs ``read_model`` does not refuse as absent from the opset, each
    with the opset name of the op version it built (``opset8`` for MaxPool-8) when the
    reader showed it, else ``""``. ``python``: the interpreter whose openvino is probed."""
    taken: dict[tuple[str, int], str] = {}
    todo = list(pairs)
    while todo:
        text = "".join(f"{op} opset{n}\n" for op, n in todo)
        run = subprocess.run([python, "-c", _PROBE, _IR], input=text, text=True,
                             capture_output=True, check=False)
        answers = run.stdout.split()
        taken.update((pair, said[len("taken:"):]) for pair, said
                     in zip(todo, answers, strict=False) if said.startswith("taken:"))
        if len(answers) < len(todo):  # the child died on this pair: it was taken
            taken[todo[len(answers)]] = ""
        todo = todo[len(answers) + 1:]
    return taken


def reader_takes(pairs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The (type, opset) pairs the installed openvino's ``read_model`` takes."""
    return list(probe_reader(pairs))


def add_taken(opsets: dict[int, dict[str, int]]) -> None:
    """Add the pairs the reader takes beyond the tables, with the nearest listed version."""
    types = sorted({t for ops in opsets.values() for t in ops})
    absent = [(t, n) for t in types for n in opsets if t not in opsets[n]]
    for op, n in reader_takes(absent):
        nearest = min((m for m in opsets if op in opsets[m]), key=lambda m: abs(m - n))
        opsets[n][op] = opsets[nearest][op]


def op_table(opsets: dict[int, dict[str, int]]) -> dict[str, tuple[tuple[int, int, int], ...]]:
    """``{op type: ((first opset, last opset, op version), ...)}``, types sorted.

    One row per run of opsets holding the same op version; a gap between rows is an
    opset without the type (opset2 has no RNNCell and no ShuffleChannels).
    """
    table = {}
    for op in sorted({t for ops in opsets.values() for t in ops}):
        rows: list[list[int]] = []
        for n, ops in opsets.items():
            version = ops.get(op)
            if version is None:
                continue
            if rows and rows[-1][1] == n - 1 and rows[-1][2] == version:
                rows[-1][1] = n
            else:
                rows.append([n, n, version])
        table[op] = tuple(tuple(r) for r in rows)
    return table


def render(table, version: str, last: int) -> str:
    """The text of ``opsets.json``: data, one op type a line."""
    rows = ",\n".join(f'    "{op}": {json.dumps([list(r) for r in runs])}'
                       for op, runs in table.items())
    return (f'{{\n  "openvino": "{version}",\n  "last_opset": {last},\n'
            f'  "opsets": {{\n{rows}\n  }}\n}}\n')


def generate() -> str:
    """``opsets.json`` as the installed openvino gives it."""
    import openvino

    opsets = read_opsets(tables_dir())
    add_taken(opsets)
    version = openvino.__version__.split("-")[0]
    return render(op_table(opsets), version, max(opsets))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    return write_or_check(TARGET, generate(), args.check)


def write_or_check(target: Path, text: str, check: bool) -> int:
    """Write a generated data file, or with ``check`` only say whether it is up to date
    (exit code 1 when not): what every generating tool's command line does."""
    if check:
        same = target.exists() and target.read_text() == text
        print("up to date" if same else f"{target} is stale: run {sys.argv[0]}")
        return 0 if same else 1
    target.write_text(text)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
