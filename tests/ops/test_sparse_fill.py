"""SparseFillEmptyRows-16 against OpenVINO, every output: dense shapes and indices as
constants (in and out of range, rows left empty or not) and parameters, values and
default values of several shapes."""

from __future__ import annotations

import openvino.opset16 as ov16
from int_inputs import constant, parameter
from op_diff import Case, ov_param, tensor
from op_diff_outputs import agree_on_every_output
from ov_oracle import random_shape


def sparse_fill_case(rng) -> Case:
    n = rng.randint(1, 4)
    rows, cols = rng.randint(1, 5), rng.randint(1, 4)
    values = rng.choice((f"[{n}]", f"[{n}]", "[?]", "[...]", random_shape(rng)))
    dense = constant([rows, cols]) if rng.random() < 0.7 else \
        parameter(rng.choice(("[2]", "[?]", "[...]", "[3]")))
    index_values = [[rng.randint(0, rows - 1 + (rng.random() < 0.05)), rng.randint(0, cols - 1)]
                    for _ in range(n)]
    indices = constant(index_values) if rng.random() < 0.7 else \
        parameter(rng.choice((f"[{n},2]", "[?,2]", "[...]", f"[{n},3]")))
    default = rng.choice(("[]", "[]", "[1]", "[...]"))
    inputs = [dense, indices]
    return Case(lambda: ov16.sparse_fill_empty_rows(ov_param(values), dense[0](), indices[0](),
                                                    ov_param(default)),
                "SparseFillEmptyRows", 16, [tensor(values), dense[1], indices[1], tensor(default)],
                label=f"{values} {[t for _, t in inputs]} {default}")


def test_sparse_fill_empty_rows_infers_what_openvino_infers():
    agree_on_every_output("sparse_fill", sparse_fill_case, 1500)
