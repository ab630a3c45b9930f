"""Which opsets hold which op versions, in the OpenVINO the table was made from.

The data is ``opsets.json`` beside this file, written by ``tools/list_opsets.py`` from the
installed openvino's opset tables; ``tests/ops/test_opsets_table.py`` regenerates it and
requires the same text. Do not edit it by hand.

``OPSETS[type] = ((first opset, last opset, op version), ...)``: the op version the
opsets ``first`` to ``last`` hold; an opset in no row does not hold the type.

>>> OPSETS["GatherND"]
((5, 7, 5), (8, 16, 8))
"""

from __future__ import annotations

import json
import os

__all__ = ["OPENVINO_VERSION", "LAST_OPSET", "OPSETS"]

with open(os.path.join(os.path.dirname(__file__), "opsets.json"), encoding="utf-8") as _f:
    _DATA = json.load(_f)

OPENVINO_VERSION: str = _DATA["openvino"]
LAST_OPSET: int = _DATA["last_opset"]
OPSETS: dict[str, tuple[tuple[int, int, int], ...]] = {
    op: tuple(tuple(run) for run in runs) for op, runs in _DATA["opsets"].items()}
