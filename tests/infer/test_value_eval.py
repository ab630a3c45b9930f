"""Values and bounds OpenVINO evaluates when it reads a model, against ovgather's walk.

Each test builds small shape computations with OpenVINO's own builders: the ShapeOf of a
Parameter with static, interval and unknown dims, Consts, the op under test, and reads
the result as a shape (a Broadcast target, a Reshape target, a mask broadcast into a
tensor). The IR is saved, and every port of every layer must have the same shape text in
ovgather's ``check`` as in OpenVINO's ``read_model`` of that IR, and no layer may be
``invalid`` where OpenVINO accepts the model. Each seed builds the same graph every run.
"""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset3 as o3
import openvino.opset12 as o12
import openvino.opset13 as o
import openvino.opset15 as o15
import openvino.opset16 as o16
import pytest
from op_graphs import C, P, accepted_by_openvino, compare_with_openvino, ov_layer_shapes

from ovgather.infer import check
from ovgather.ir import read_ir

DIMS = ("1", "2", "3", "6", "?", "2..8", "1..4", "..5", "0..3", "4..")
ZERO = o.constant(np.float32(0))


def _rng(name: str, seed: int) -> random.Random:
    return random.Random(f"value_eval-{name}-{seed}")


def _param(rng: random.Random, rank: int | None = None, dims=DIMS):
    rank = rng.choice((1, 2, 3, 4)) if rank is None else rank
    return P("[" + ",".join(rng.choice(dims) for _ in range(rank)) + "]")


def _elements(rng: random.Random, x, n: int | None = None):
    """``n`` elements of ShapeOf(x), picked at random (repeats allowed), as a 1-D i64."""
    rank = x.get_output_partial_shape(0).rank.get_length()
    n = rng.randint(1, 4) if n is None else n
    return o.gather(o.shape_of(x), C([rng.randrange(rank) for _ in range(n)]), C(0))


def _as_shape(v):
    """``v`` read as a shape: the Broadcast of a scalar to it."""
    return o.broadcast(ZERO, v)


def _differences(tmp_path, outs, params, name: str) -> list:
    """The layers whose shapes ovgather and OpenVINO give differently, and those ovgather
    finds invalid where OpenVINO accepts the model."""
    report, diffs = compare_with_openvino(tmp_path, outs, params, name)
    return diffs + [(lr.name, "invalid") for lr in report.layers if lr.status == "invalid"]


#: Cases per test run: a batch runs this many seeds in a row, so that the suite's
#: count of tests stays that of its test functions while each op sees many graphs.
BATCH = 15


def _cases(tmp_path, name: str, batch: int, build) -> None:
    """For each seed of the batch, ``build(rng)`` -> (outputs, params) until OpenVINO
    accepts one; every seed's differences are reported together."""
    found = {}
    for seed in range(batch * BATCH, (batch + 1) * BATCH):
        rng = _rng(name, seed)
        outs, params = accepted_by_openvino(lambda rng=rng: build(rng))
        diffs = _differences(tmp_path, outs, params, f"{name}{seed}")
        if diffs:
            found[seed] = diffs
    assert found == {}


# -- Equal, Select, LogicalNot: the ONNX Where(Equal(shape, -1), 1, shape) ------------------
def _condition(rng: random.Random, g, y):
    other = rng.choice((C([-1]), C([rng.choice((0, 1, 2, 3, 6))]), _elements(rng, y, 1)))
    if rng.random() < 0.3:
        g = o.subtract(g, C([rng.choice((1, 3))]))
    return o.equal(g, other) if rng.random() < 0.7 else o.equal(other, g)


def _equal_case(rng: random.Random):
    x, y = _param(rng), _param(rng, 1)
    g = _elements(rng, x)
    cond = _condition(rng, g, y)
    pick = rng.randrange(4)
    if pick == 0:
        v = o.select(cond, C([1]), g)
    elif pick == 1:
        v = o.select(cond, g, C([rng.choice((1, 2))]))
    elif pick == 2:
        v = o.add(o.convert(cond, ov.Type.i64), C([1]))
    else:
        v = o.add(o.convert(o.logical_not(cond), rng.choice((ov.Type.i64, ov.Type.i32))),
                  C([1], np.int32))
        v = o.convert(v, ov.Type.i64)
    return [_as_shape(v)], [x, y]


@pytest.mark.parametrize("batch", range(4))
def test_equal_bounds_pick_the_branch_like_openvino(tmp_path, batch):
    _cases(tmp_path, "equal", batch, _equal_case)


def _mask_case(rng: random.Random):
    """A boolean mask expanded to the shape of the scores it masks (ONNX Expand, i.e.
    bidirectional Broadcast, on ``Where(Equal(shape, -1), 1, shape)``), then Select."""
    dims = [rng.choice(DIMS) for _ in range(4)]
    x = P("[" + ",".join(dims) + "]")
    mask = P("[" + ",".join(d if rng.random() < 0.4 else "1" for d in dims) + "]",
             ov.Type.boolean)
    t = o.shape_of(x)
    ones = C(1) if rng.random() < 0.5 else C([1, 1, 1, 1])
    target = o.select(o.equal(t, C(-1)), ones, t)
    expanded = o3.broadcast(mask, target, "bidirectional")
    return [o.select(expanded, x, ZERO)], [x, mask]


@pytest.mark.parametrize("batch", range(2))
def test_a_mask_expanded_on_a_computed_target_like_openvino(tmp_path, batch):
    _cases(tmp_path, "mask", batch, _mask_case)


def _torch_expand_onnx(path, dims: list) -> None:
    """What torch.onnx writes for ``mask.expand(b, 1, s, s)``: the target built from
    Shape, then ``Where(Equal(shape, -1 * ConstantOfShape(1)), ones, shape)``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def ints(name, v):
        return numpy_helper.from_array(np.array(v, dtype=np.int64), name)

    node = helper.make_node
    nodes = [node("Shape", ["x"], ["sh"]),
             node("Gather", ["sh", "i0"], ["b"], axis=0),
             node("Gather", ["sh", "i2"], ["s"], axis=0),
             node("Unsqueeze", ["b", "ax0"], ["bu"]),
             node("Unsqueeze", ["s", "ax0"], ["su"]),
             node("Concat", ["bu", "one", "su", "su"], ["shape"], axis=0),
             node("Shape", ["shape"], ["n"]),
             node("ConstantOfShape", ["n"], ["ones"], value=ints("v", [1])),
             node("Mul", ["ones", "minus_one"], ["negs"]),
             node("Equal", ["shape", "negs"], ["eq"]),
             node("Where", ["eq", "ones", "shape"], ["target"]),
             node("Expand", ["mask", "target"], ["expanded"]),
             node("Where", ["expanded", "x", "zero"], ["y"])]
    inits = [ints("i0", 0), ints("i2", 2), ints("ax0", [0]), ints("one", [1]),
             ints("minus_one", -1), numpy_helper.from_array(np.float32(0), "zero")]
    graph = helper.make_graph(
        nodes, "torch_expand",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, [dims[0], 1, 1, dims[3]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.mark.parametrize("dims", [["B", 4, "S", "S"], [1, 4, "S", "S"], [2, 4, 5, 5]])
def test_torch_expand_of_a_mask_through_the_onnx_frontend_keeps_its_unit_dim(tmp_path, dims):
    """On main, ovgather said ``[?,?,?,?]`` for the Expand where OpenVINO says
    ``[?,1,?,?]``: the Where(Equal) on the target lost it."""
    src = tmp_path / "expand.onnx"
    _torch_expand_onnx(src, dims)
    model = ov.convert_model(str(src))
    path = tmp_path / "expand.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    theirs = ov_layer_shapes(ov.Core().read_model(str(path)))
    report = check(read_ir(path))
    assert [(lr.name, lr.inferred, theirs[lr.name]) for lr in report.layers
            if lr.type != "Result" and lr.inferred != theirs[lr.name]] == []
    expanded = [lr for lr in report.layers if lr.type == "Broadcast"]
    assert [lr.inferred[0].split(",")[1] for lr in expanded] == ["1"]


def _repeat_kv_case(rng: random.Random):
    """The GQA repeat-kv of exported LLMs: Unsqueeze the keys, Expand them to
    ``[batch, heads, n_rep, seq, head_dim]`` built by Concat, with the Where(Equal)."""
    heads, head_dim, n_rep = rng.choice((1, 2, 4)), rng.choice((8, 16)), rng.choice((1, 2, 3))
    k = P(f"[{rng.choice(('?', '1', '1..4'))},{heads},{rng.choice(('?', '7', '1..64'))},"
          f"{head_dim}]")
    s = o.shape_of(k)
    target = o.concat([o.gather(s, C([0]), C(0)), C([heads, n_rep]), o.gather(s, C([2]), C(0)),
                       C([head_dim])], 0)
    if rng.random() < 0.8:
        target = o.select(o.equal(target, C([-1])), C([1]), target)
    expanded = o3.broadcast(o.unsqueeze(k, C([2])), target, "bidirectional")
    merged = o.reshape(expanded, C([0, heads * n_rep, -1, head_dim]), True)
    return [merged], [k]


@pytest.mark.parametrize("batch", range(2))
def test_repeat_kv_expand_keeps_the_repeat_like_openvino(tmp_path, batch):
    _cases(tmp_path, "repeat_kv", batch, _repeat_kv_case)


def test_repeat_kv_of_two_heads_is_openvinos_2_2(tmp_path):
    k = P("[?,2,?,8]")
    s = o.shape_of(k)
    target = o.concat([o.gather(s, C([0]), C(0)), C([2, 2]), o.gather(s, C([2]), C(0)),
                       C([8])], 0)
    where = o.select(o.equal(target, C([-1])), C([1]), target)
    expanded = o3.broadcast(o.unsqueeze(k, C([2])), where, "bidirectional")
    report, diffs = compare_with_openvino(tmp_path, [expanded], [k], "repeat_kv")
    assert diffs == []
    assert {lr.name: lr.inferred for lr in report.layers}[expanded.get_friendly_name()] \
        == [str(expanded.get_output_partial_shape(0))]


# -- arithmetic that broadcasts ------------------------------------------------------------
ARITHMETIC = (o.add, o.subtract, o.multiply, o.maximum, o.minimum)


def _arithmetic_case(rng: random.Random):
    """Shape elements (i64 or i32) combined with constants or other elements that
    broadcast as numpy does, ``[2, 1]`` with ``[4]`` too."""
    x = _param(rng, 4)
    etype = rng.choice((ov.Type.i64, ov.Type.i32))
    s = o.shape_of(x, etype)
    dtype = np.int64 if etype == ov.Type.i64 else np.int32
    pick = rng.randrange(5)
    if pick == 0:
        other = C(rng.choice(([0], [1], [-1], [0, 0, 0, 0], [1, -1, 0, 2])), dtype)
    elif pick == 1:
        other = o.multiply(s, C([0], dtype))
    elif pick == 2:
        other = o.gather(s, C([rng.randrange(4)]), C(0))
    elif pick == 3:
        other = o.reshape(o.gather(s, C(rng.sample(range(4), 2)), C(0)), C([2, 1]), False)
    else:
        other = o.subtract(C([rng.randrange(3)], dtype), s)
    op = rng.choice(ARITHMETIC)
    v = op(s, other) if rng.random() < 0.5 else op(other, s)
    return [_as_shape(o.reshape(v, C([-1]), False))], [x]


@pytest.mark.parametrize("batch", range(4))
def test_arithmetic_that_broadcasts_bounds_like_openvino(tmp_path, batch):
    _cases(tmp_path, "arithmetic", batch, _arithmetic_case)


# -- Convert, ConvertLike, Identity ------------------------------------------------------
TYPES = (ov.Type.i64, ov.Type.i32, ov.Type.f32, ov.Type.u8, ov.Type.i8, ov.Type.u32,
         ov.Type.u64, ov.Type.f16, ov.Type.i16)
NUMPY = {ov.Type.i64: np.int64, ov.Type.i32: np.int32, ov.Type.f32: np.float32,
         ov.Type.u8: np.uint8, ov.Type.i8: np.int8, ov.Type.u32: np.uint32,
         ov.Type.u64: np.uint64, ov.Type.f16: np.float16, ov.Type.i16: np.int16}


def _passing_case(rng: random.Random):
    x = _param(rng)
    v = _elements(rng, x)
    if rng.random() < 0.3:
        v = o.subtract(v, C([rng.choice((1, 2))]))
    for _ in range(rng.randint(1, 3)):
        pick = rng.randrange(3)
        etype = rng.choice(TYPES)
        if pick == 0:
            v = o.convert(v, etype)
        elif pick == 1:
            v = o.convert_like(v, C([0], NUMPY[etype]))
        else:
            v = o16.identity(v)
    if v.get_output_element_type(0) not in (ov.Type.i64, ov.Type.i32):
        v = o.convert(v, rng.choice((ov.Type.i64, ov.Type.i32)))
    return [_as_shape(v)], [x]


@pytest.mark.parametrize("batch", range(4))
def test_convert_convert_like_and_identity_pass_values_like_openvino(tmp_path, batch):
    _cases(tmp_path, "passing", batch, _passing_case)


# -- real math ---------------------------------------------------------------------------
MATH = (o.sqrt, o.exp, o.log, o.sin, o.cos, o.tan, o.atan, o.sinh, o.cosh, o.asinh, o.tanh)


def _math_case(rng: random.Random):
    """A shape element (real or integer) through a math op, scaled, back to i64 (ViTs
    take the Sqrt of their patch count for the side of the position grid)."""
    x = _param(rng, dims=("1", "2", "3", "4", "6", "8", "9", "2..8", "?"))
    etype = rng.choice((ov.Type.f32, ov.Type.f16, ov.Type.i64, ov.Type.i32))
    v = rng.choice(MATH)(o.convert(_elements(rng, x), etype))
    scale = 1 if etype == ov.Type.f16 else rng.choice((1, 2, 3))  # ovgather's f16 products
    # are not rounded to f16 (docs/evaluation.md)
    v = o.multiply(v, C([scale], {ov.Type.f32: np.float32, ov.Type.f16: np.float16,
                                  ov.Type.i64: np.int64, ov.Type.i32: np.int32}[etype]))
    return [_as_shape(o.convert(o.abs(v), ov.Type.i64))], [x]


@pytest.mark.parametrize("batch", range(4))
def test_real_math_folds_exact_values_like_openvino(tmp_path, batch):
    _cases(tmp_path, "math", batch, _math_case)


# -- reductions --------------------------------------------------------------------------
REDUCTIONS = (o.reduce_max, o.reduce_min, o.reduce_sum, o.reduce_prod, o.reduce_mean,
              o.reduce_l1, o.reduce_l2)


def _grid(rng: random.Random, x):
    """ShapeOf(x) padded with constants to 4 elements and laid out as ``[4]``,
    ``[2, 2]`` or ``[1, 4]``: the elements keep their bounds."""
    s = o.shape_of(x)
    rank = x.get_output_partial_shape(0).rank.get_length()
    flat = o.concat([s, C([rng.choice((1, 2, 3))] * (4 - rank))], 0) if rank < 4 else s
    return o.reshape(flat, C(rng.choice(([4], [2, 2], [1, 4], [4, 1]))), False)


def _reduce_case(rng: random.Random):
    x = _param(rng, rng.randint(1, 4))
    grid = _grid(rng, x)
    rank = grid.get_output_partial_shape(0).rank.get_length()
    axes = rng.sample(range(-rank, rank), 1) if rng.random() < 0.7 else list(range(rank))
    if len({a % rank for a in axes}) != len(axes):
        axes = axes[:1]
    reduction = rng.choice(REDUCTIONS)
    if reduction is o.reduce_prod and any(d.get_max_length() < 0
                                          for d in x.get_output_partial_shape(0)):
        # an unbounded element makes OpenVINO's upper bound of ReduceProd a single max
        # whatever the output's size, read past its end by the layers after it
        axes = list(range(rank))
    keep = rng.random() < 0.5
    if rng.random() < 0.2:
        flags = o.equal(grid, C(rng.choice((1, 2, 3))))
        logical = rng.choice((o.reduce_logical_and, o.reduce_logical_or))
        reduced = o.add(o.convert(logical(flags, C(axes), keep), ov.Type.i64), C(1))
    else:
        reduced = reduction(grid, C(axes), keep)
    return [_as_shape(o.reshape(reduced, C([-1]), False))], [x]


@pytest.mark.parametrize("batch", range(4))
def test_reductions_of_shape_values_bound_like_openvino(tmp_path, batch):
    _cases(tmp_path, "reduce", batch, _reduce_case)


def _axes_by_shape_case(rng: random.Random):
    rank = rng.choice((0, 1, 2, 3, None))
    data = P("[...]") if rank is None else _param(rng, rank, DIMS + ("1", "1", "5"))
    axes = P(rng.choice(("[]", "[1]", "[1]", "[2]", "[?]", "[3]")), ov.Type.i64)
    pick = rng.randrange(5)
    if pick == 0:
        out = rng.choice(REDUCTIONS)(data, axes, rng.random() < 0.4)
    elif pick == 1:
        out = o.reduce_logical_or(o.convert(data, ov.Type.boolean), axes, rng.random() < 0.4)
    elif pick == 2:
        out = o.squeeze(data, axes)
    elif pick == 3:
        out = o15.squeeze(data, axes)
    else:
        out = o.unsqueeze(data, axes)
    return [out], [data, axes]


@pytest.mark.parametrize("batch", range(4))
def test_axes_known_by_their_shape_only_give_openvinos_rank(tmp_path, batch):
    _cases(tmp_path, "axes", batch, _axes_by_shape_case)


def _matmul_case(rng: random.Random):
    """Shape elements as a matrix times a small constant one (or another such matrix),
    either side maybe transposed or 1-D; the product is read as a shape."""
    x = _param(rng, dims=("1", "2", "3", "6", "2..8", "?"))
    k, rows = rng.choice((1, 2)), rng.choice((1, 2))
    left = o.reshape(_elements(rng, x, rows * k), C([rows, k] if rows > 1 else [k]), False)
    cols = rng.choice((1, 2, 3))
    right = C(np.array([rng.randint(0, 3) for _ in range(k * cols)]).reshape(k, cols))
    ta, tb = rng.random() < 0.3 and rows > 1, rng.random() < 0.3
    if ta:
        left = o.transpose(left, C([1, 0]))
    if tb:
        right = o.transpose(right, C([1, 0]))
    product = o.matmul(left, right, ta, tb)
    return [_as_shape(o.reshape(product, C([-1]), False))], [x]


@pytest.mark.parametrize("batch", range(2))
def test_matmul_of_exact_values_folds_like_openvino(tmp_path, batch):
    _cases(tmp_path, "matmul", batch, _matmul_case)


def _unsqueeze_case(rng: random.Random):
    """Unsqueeze by constant axes that may name one place twice (1 and -3 of a rank-2
    input), or be reals, of a shape value so that its bounds move too."""
    x = _param(rng, rng.randint(1, 3))
    data = rng.choice((_elements(rng, x), x))
    rank = data.get_output_partial_shape(0).rank.get_length()
    count = rng.randint(1, 3)
    axes = [rng.randint(-rank - count, rank + count - 1) for _ in range(count)]
    dtype = np.float32 if rng.random() < 0.2 else np.int64
    out = o.unsqueeze(data, C(axes, dtype))
    if data is x:
        return [out], [x]
    return [out, _as_shape(o.reshape(out, C([-1]), False))], [x]


@pytest.mark.parametrize("batch", range(2))
def test_unsqueeze_by_axes_naming_one_place_twice_like_openvino(tmp_path, batch):
    _cases(tmp_path, "unsqueeze", batch, _unsqueeze_case)


# -- Pad ---------------------------------------------------------------------------------
def _pad_case(rng: random.Random):
    x = _param(rng)
    grid = _grid(rng, x) if rng.random() < 0.5 else _elements(rng, x)
    rank = grid.get_output_partial_shape(0).rank.get_length()
    mode = rng.choice(("constant", "constant", "edge", "reflect", "symmetric"))
    low = -1 if rng.random() < 0.5 else 0
    begin, end = ([rng.randint(low, 2) for _ in range(rank)] for _ in range(2))
    fill = rng.choice((None, C(rng.choice((0, 1, 7))), _elements(rng, x, 1)))
    if fill is not None and fill.get_output_partial_shape(0).rank.get_length():
        fill = o.squeeze(fill, C([0]))
    if rng.random() < 0.5:
        padded = o12.pad(grid, C(begin), C(end), mode, fill if mode == "constant" else None)
    else:
        begin, end = [max(b, 0) for b in begin], [max(e, 0) for e in end]
        padded = o1.pad(grid, C(begin), C(end), mode, fill if mode == "constant" else None)
    return [_as_shape(o.reshape(padded, C([-1]), False))], [x]


@pytest.mark.parametrize("batch", range(4))
def test_pad_pads_value_bounds_like_openvino(tmp_path, batch):
    _cases(tmp_path, "pad", batch, _pad_case)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_a_pad_cutting_one_end_and_growing_the_other_reads_like_openvino(tmp_path, mode):
    """Pad-12 by -1 at the start and +2 at the end: each output element reads the input
    at its position less the begin pad, not the cut input padded again."""
    x = P("[2,3,4..6]")
    padded = o12.pad(o.shape_of(x), C([-1]), C([2]), mode)
    report, diffs = compare_with_openvino(tmp_path, [_as_shape(padded)], [x], f"pad_{mode}")
    assert diffs == []
    assert [lr.status for lr in report.layers if lr.status == "invalid"] == []


# -- NonZero -----------------------------------------------------------------------------
def _nonzero_case(rng: random.Random):
    x = _param(rng)
    pick = rng.randrange(3)
    if pick == 0:
        shape = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
        dtype = rng.choice((np.int64, np.int32, np.float32, bool, np.uint8))
        data = C(np.array([rng.choice((0, 0, 1, 2, -3)) for _ in range(int(np.prod(shape)))])
                 .reshape(shape).astype(dtype), dtype)
    elif pick == 1:
        data = o.subtract(_elements(rng, x), C([rng.choice((0, 1, 2, 6))]))
    else:
        data = o.equal(_grid(rng, x), C(rng.choice((1, 2, 6))))
    nz = o3.non_zero(data, rng.choice(("i64", "i32")))
    return [nz, _as_shape(o.shape_of(nz))], [x]


@pytest.mark.parametrize("batch", range(2))
def test_nonzero_of_known_values_folds_like_openvino(tmp_path, batch):
    _cases(tmp_path, "nonzero", batch, _nonzero_case)


def test_nonzero_of_a_constant_is_static(tmp_path):
    nz = o3.non_zero(C(np.ones(108), np.float32))
    report, diffs = compare_with_openvino(tmp_path, [nz], [], "nonzero_const")
    assert diffs == []
    assert {lr.name: lr.inferred for lr in report.layers}[nz.get_friendly_name()] == \
        [str(nz.get_output_partial_shape(0))]


def _unique_case(rng: random.Random):
    x = _param(rng, dims=("1", "2", "3", "2..8", "?"))
    if rng.random() < 0.5:
        data = C([rng.choice((0, 1, 2, 3)) for _ in range(rng.randint(1, 6))])
    else:
        data = _elements(rng, x, rng.randint(1, 5))
    found = o.unique(data, sorted=rng.random() < 0.7)
    outs = [_as_shape(o.shape_of(found.output(i))) for i in range(4)]
    return outs + [_as_shape(o.reshape(o.abs(found.output(0)), C([-1]), False))], [x]


@pytest.mark.parametrize("batch", range(2))
def test_unique_of_constants_has_static_shapes_like_openvino(tmp_path, batch):
    _cases(tmp_path, "unique", batch, _unique_case)


# -- ScatterUpdate -----------------------------------------------------------------------
def _scatter_data(rng: random.Random, x):
    grid = _grid(rng, x) if rng.random() < 0.5 else o.shape_of(x)
    shape = [d.get_length() for d in grid.get_output_partial_shape(0)]
    return (grid if rng.random() < 0.5 else C(np.ones(shape, np.int64))), shape


def _updates(rng: random.Random, x, shape):
    return o.reshape(_elements(rng, x, int(np.prod(shape))), C(shape), False)


def _scatter_update_case(rng: random.Random, x):
    data, shape = _scatter_data(rng, x)
    axis = rng.randrange(len(shape))
    count = rng.randint(1, shape[axis])
    indices = rng.sample(range(shape[axis]), count)
    indices = [i - shape[axis] if rng.random() < 0.2 else i for i in indices]
    updates = _updates(rng, x, shape[:axis] + [count] + shape[axis + 1:])
    return o3.scatter_update(data, C(indices), updates,
                             C(axis - len(shape) if rng.random() < 0.3 else axis))


def _scatter_nd_case(rng: random.Random, x):
    data, shape = _scatter_data(rng, x)
    k = rng.randint(1, len(shape))
    count = rng.randint(1, 2)
    where = rng.sample([list(p) for p in np.ndindex(*shape[:k])], min(count, int(np.prod(
        shape[:k]))))
    build = o15.scatter_nd_update if rng.random() < 0.5 else o.scatter_nd_update
    return build(data, C(where), _updates(rng, x, [len(where)] + shape[k:]))


def _scatter_elements_case(rng: random.Random, x):
    data, shape = _scatter_data(rng, x)
    axis = rng.randrange(len(shape))
    small = [rng.randint(1, d) for d in shape]
    indices = np.array([rng.randrange(shape[axis]) for _ in range(int(np.prod(small)))])
    return o.scatter_elements_update(data, C(indices.reshape(small)), _updates(rng, x, small),
                                     C(axis))


def _scatter_case(rng: random.Random):
    x = _param(rng)
    scatter = rng.choice((_scatter_update_case, _scatter_nd_case, _scatter_elements_case))
    scattered = scatter(rng, x)
    return [_as_shape(o.reshape(scattered, C([-1]), False))], [x]


@pytest.mark.parametrize("batch", range(4))
def test_scatter_update_scatters_value_bounds_like_openvino(tmp_path, batch):
    _cases(tmp_path, "scatter", batch, _scatter_case)


def test_a_yolo_reshape_target_built_by_scatter_update_is_exact(tmp_path):
    x = P("[1,4,8400]")
    target = o3.scatter_update(C([0, 0, 0]), C([0, 1, 2]), o.shape_of(x), C(0))
    r = o.reshape(x, target, False)
    report, diffs = compare_with_openvino(tmp_path, [r], [x], "yolo")
    assert diffs == []
    assert {lr.name: lr.inferred for lr in report.layers}[r.get_friendly_name()] == \
        ["[1,4,8400]"]


# -- all of them, chained ----------------------------------------------------------------
def _step(rng: random.Random, v, x):
    n = v.get_output_partial_shape(0)[0].get_length()
    pick = rng.randrange(7)
    if pick == 0:
        return o.add(v, C([rng.choice((0, 1, 2))]))
    if pick == 1:
        return o.select(o.equal(v, C([rng.choice((-1, 1, 2))])), C([1]), v)
    if pick == 2:
        return o.convert(o.convert(v, rng.choice((ov.Type.i32, ov.Type.f32))), ov.Type.i64)
    if pick == 3:
        return o16.identity(v)
    if pick == 4:
        return o.concat([o.reduce_max(v, C([0]), True), v], 0)
    if pick == 5:
        return o12.pad(v, C([1]), C([0]), "constant", C(rng.choice((1, 3))))
    return o3.scatter_update(v, C([rng.randrange(n)]), _elements(rng, x, 1), C(0))


def _chain_case(rng: random.Random):
    x = _param(rng)
    v = _elements(rng, x)
    for _ in range(rng.randint(2, 4)):
        v = _step(rng, v, x)
    outs = [_as_shape(v)]
    if rng.random() < 0.5:
        mask = P("[" + ",".join("1" for _ in range(v.get_output_partial_shape(0)[0]
                                                   .get_length())) + "]", ov.Type.boolean)
        outs.append(o3.broadcast(mask, v, "bidirectional"))
        return outs, [x, mask]
    return outs, [x]


@pytest.mark.parametrize("batch", range(4))
def test_chained_shape_computations_like_openvino(tmp_path, batch):
    _cases(tmp_path, "chain", batch, _chain_case)
