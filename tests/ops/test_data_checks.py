"""The scatter ops and ReverseSequence against OpenVINO on seeded random shapes: updates
built around the shape OpenVINO expects (one dim changed, a rank off, intervals, dynamic
dims and ranks), known and unknown axes; both must infer the same shape or both refuse.
(The same checks inside a Loop body, against read_model and reshape: test_body_checks.py.)"""

from __future__ import annotations

import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import openvino.opset4 as ov4
import openvino.opset12 as ov12
import openvino.opset15 as ov15
import pytest
from int_inputs import constant, parameter
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.shapes import PartialShape


def _near(rng, dims: list[str] | None) -> str:
    """A shape text of ``dims`` as given, or with one dim changed, one dropped or added,
    a dim made dynamic, or a dynamic rank."""
    if dims is None or rng.random() < 0.05:
        return "[...]" if rng.random() < 0.5 else random_shape(rng)
    dims = list(dims)
    pick = rng.random()
    if pick < 0.15 and dims:
        dims[rng.randrange(len(dims))] = str(rng.randint(1, 7))
    elif pick < 0.22 and dims:
        dims.pop(rng.randrange(len(dims)))
    elif pick < 0.28:
        dims.insert(rng.randint(0, len(dims)), str(rng.randint(1, 4)))
    elif pick < 0.45 and dims:
        dims[rng.randrange(len(dims))] = random_dim(rng)
    return "[" + ",".join(dims) + "]"


def _dims(text: str) -> list[str] | None:
    shape = PartialShape.parse(text)
    return None if shape.dims is None else [str(d) for d in shape.dims]


def _axis(rng, rank: int):
    if rng.random() < 0.15:
        return parameter(rng.choice(("[]", "[1]")))
    return constant(rng.randint(-rank - 1, rank))


def scatter_update_case(rng) -> Case:
    data, indices = random_shape(rng), random_shape(rng, rank=rng.choice((0, 1, 1, 2)))
    d, i = _dims(data), _dims(indices)
    (axis_build, axis_t) = _axis(rng, len(d) if d else 2)
    axis = axis_t.value[0][0] if axis_t.value else 0
    want = None
    if d is not None and i is not None and d and -len(d) <= axis < len(d):
        a = axis % len(d)
        want = d[:a] + i + d[a + 1:]
    updates = _near(rng, want)
    return Case(lambda: ov3.scatter_update(ov_param(data), ov_param(indices, ov.Type.i32),
                                           ov_param(updates), axis_build()),
                "ScatterUpdate", 3, [tensor(data), tensor(indices, "i32"), tensor(updates),
                                     axis_t], label=f"{data} {indices} {updates} {axis_t}")


def scatter_nd_case(rng) -> Case:
    data = random_shape(rng)
    d = _dims(data)
    rank = len(d) if d is not None else 3
    k = rng.randint(0, rank + (1 if rng.random() < 0.1 else 0))
    lead = [random_dim(rng) if rng.random() < 0.3 else str(rng.randint(1, 4))
            for _ in range(rng.randint(0, 2))]
    indices = "[" + ",".join(lead + [str(k) if rng.random() < 0.9 else "?"]) + "]"
    want = None if d is None else lead + d[k:]
    updates = _near(rng, want)
    version, build = rng.choice(((4, ov4.scatter_nd_update), (15, ov15.scatter_nd_update)))
    return Case(lambda: build(ov_param(data), ov_param(indices, ov.Type.i64),
                              ov_param(updates)),
                "ScatterNDUpdate", version,
                [tensor(data), tensor(indices, "i64"), tensor(updates)],
                label=f"v{version} {data} {indices} {updates}")


def scatter_elements_case(rng) -> Case:
    data = random_shape(rng)
    d = _dims(data)
    indices = _near(rng, d)
    updates = _near(rng, _dims(indices))
    (axis_build, axis_t) = _axis(rng, len(d) if d else 2)
    version, build = rng.choice(((3, ov3.scatter_elements_update),
                                 (12, ov12.scatter_elements_update)))
    return Case(lambda: build(ov_param(data), ov_param(indices, ov.Type.i32), ov_param(updates),
                              axis_build()),
                "ScatterElementsUpdate", version,
                [tensor(data), tensor(indices, "i32"), tensor(updates), axis_t],
                label=f"v{version} {data} {indices} {updates} {axis_t}")


def reverse_sequence_case(rng) -> Case:
    data = random_shape(rng)
    d = _dims(data)
    rank = max(len(d) if d is not None else 3, 1)
    batch, seq = rng.randint(-rank - 1, rank), rng.randint(-rank, rank - 1)
    lengths = "[" + (d[batch] if d and -rank <= batch < rank and rng.random() < 0.5
                     else random_dim(rng)) + "]"
    if rng.random() < 0.05:
        lengths = rng.choice(("[...]", "[2,2]", "[]"))
    return Case(lambda: ov1.reverse_sequence(ov_param(data), ov_param(lengths, ov.Type.i32),
                                             batch, seq),
                "ReverseSequence", 1, [tensor(data), tensor(lengths, "i32")],
                {"batch_axis": str(batch), "seq_axis": str(seq)},
                label=f"{data} {lengths} batch {batch} seq {seq}")


@pytest.mark.parametrize("make_case", [scatter_update_case, scatter_nd_case,
                                       scatter_elements_case, reverse_sequence_case],
                         ids=lambda f: f.__name__)
def test_checks_of_data_shaped_ops_agree_with_openvino(make_case):
    agree_with_openvino(make_case.__name__, make_case, 800)


def test_reverse_sequence_merges_the_batch_with_the_lengths():
    # the interval batch dim takes the length of seq_lengths, as OpenVINO's merge does
    case = Case(lambda: ov1.reverse_sequence(ov_param("[3..6,?,?]"),
                                             ov_param("[4]", ov.Type.i32), 0, 1),
                "ReverseSequence", 1, [tensor("[3..6,?,?]"), tensor("[4]", "i32")],
                {"batch_axis": "0", "seq_axis": "1"})
    from op_diff import ours, theirs
    assert ours(case) == theirs(case) == "[4,?,?]"
