"""Write ``ovgather/ops/opsets.py``: which opsets of the installed OpenVINO hold which op versions.

OpenVINO's IR reader looks a layer up by its ``type`` in the opset its ``version`` names
(``type="GatherND" version="opset8"``) and refuses an opset that does not hold that type.
The opsets are compiled into the library from the ``opsetN_tbl.hpp`` tables the wheel
installs under ``openvino/include/openvino/opsets``: one ``_OPENVINO_OP_REG(Type,
ov::op::vK)`` line per op, the class name being the op's type name and ``vK`` its version
(``v0`` is version 1, as OpenVINO's own ``opset1`` names it). Those tables are read here,
not probed through ``read_model``: a probe with a member op must give the layer inputs
and attributes the op accepts, and some ops crash the process on wrong ones
(``tests/test_opsets_table.py`` does probe the safe side: the opsets just outside each
op's range must be refused by ``read_model``).

Usage: ``python tools/list_opsets.py`` (rewrites the file), ``--check`` (exit 1 when the
committed file differs from what the installed OpenVINO gives).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "ovgather" / "ops" / "opsets.py"
_REG = re.compile(r"^_OPENVINO_OP_REG\(\s*(\w+)\s*,\s*ov::op::v(\d+)\s*\)", re.M)


def tables_dir() -> Path:
    """The folder of the installed openvino's ``opsetN_tbl.hpp`` files."""
    import openvino

    folder = Path(openvino.__file__).parent / "include" / "openvino" / "opsets"
    if not folder.is_dir():
        raise SystemExit(f"no opset tables at {folder}: is this an openvino wheel install?")
    return folder


def read_opsets(folder: Path) -> dict[int, dict[str, int]]:
    """``{opset number: {op type: op version}}`` from the tables."""
    opsets = {}
    for path in folder.glob("opset*_tbl.hpp"):
        number = int(path.name[len("opset"):-len("_tbl.hpp")])
        ops = {t: max(int(v), 1) for t, v in _REG.findall(path.read_text())}
        opsets[number] = ops
    return dict(sorted(opsets.items()))


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
    """The text of ``opsets.py``."""
    lines = [
        f'"""Which opsets hold which op versions, in OpenVINO {version} (generated).',
        "",
        "Written by ``tools/list_opsets.py`` from the installed openvino's opset tables;",
        "``tests/test_opsets_table.py`` regenerates it and requires the same text. Do not edit.",
        "",
        "``OPSETS[type] = ((first opset, last opset, op version), ...)``: the op version the",
        "opsets ``first`` to ``last`` hold; an opset in no row does not hold the type.",
        "",
        '>>> OPSETS["GatherND"]',
        "((5, 7, 5), (8, 16, 8))",
        '"""',
        "",
        f"OPENVINO_VERSION = {version!r}",
        f"LAST_OPSET = {last}",
        "",
        "OPSETS: dict[str, tuple[tuple[int, int, int], ...]] = {",
    ]
    lines += [f"    {op!r}: {rows!r}," for op, rows in table.items()]
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate() -> str:
    """``opsets.py`` as the installed openvino gives it."""
    import openvino

    opsets = read_opsets(tables_dir())
    version = openvino.__version__.split("-")[0]
    return render(op_table(opsets), version, max(opsets))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        same = TARGET.exists() and TARGET.read_text() == text
        print("up to date" if same else f"{TARGET} is stale: run tools/list_opsets.py")
        return 0 if same else 1
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
