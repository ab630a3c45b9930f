"""Seeded random constant subgraphs, folded by OpenVINO and by ovgather's walk.

``build_cases(seed, n)`` makes ``n`` small graphs of Consts and 1 to 4 ops (elementwise
arithmetic, comparisons, logic, Convert, reductions, the shape and gather family, ...),
each of a random element type the op takes, with OpenVINO's own builders. ``fold`` saves
them as one IR, lets OpenVINO's ``ConstantFolding`` (its ops' ``evaluate``, as
``read_model`` uses it for shapes) fold a copy, and reads the IR with ovgather: for each
case the two values (or None where one of them folds nothing). A case whose value
(1-D, small, not negative integers) can be a shape also feeds a Broadcast target, so
the shape read_model gives can be compared too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset3 as o3
import openvino.opset6 as o6
import openvino.opset8 as o8
import openvino.opset13 as o

from ovgather.infer import all_tensors, check
from ovgather.ir import read_ir

INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
REALS = ("f16", "bf16", "f32", "f64")
NUMBERS = INTS + REALS
ALL = NUMBERS + ("boolean",)
#: the packed and 8-bit types a Const may hold (read through a Convert)
PACKED = ("u1", "u2", "u3", "u4", "u6", "i4", "nf4", "f4e2m1", "f8e4m3", "f8e5m2", "f8e8m0")
_NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
       "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.float16,
       "f32": np.float32, "f64": np.float64, "boolean": np.bool_}


def ov_type(name: str) -> ov.Type:
    return getattr(ov.Type, name)


# -- leaves -------------------------------------------------------------------------------
def _leaf_numbers(rng: random.Random, etype: str, n: int) -> list:
    """``n`` values of ``etype``: small ones mostly, edges and awkward reals sometimes."""
    out = []
    for _ in range(n):
        r = rng.random()
        if etype == "boolean":
            out.append(rng.random() < 0.5)
        elif etype in INTS:
            info = np.iinfo(_NP[etype])
            if r < 0.7:
                lo = 0 if info.min == 0 else -6
                out.append(rng.randint(lo, 9))
            else:
                out.append(rng.choice((info.min, info.max, info.max - 1, info.min + 1,
                                       min(int(info.max), 65536), 255, 128, 16777217)))
        else:
            if r < 0.5:
                out.append(float(rng.randint(-6, 9)))
            elif r < 0.8:
                out.append(rng.choice((0.1, 0.5, 1.5, 2.5, -2.5, -0.5, 0.3, 1e-3, 3.7, -3.7)))
            else:
                out.append(rng.choice((16777216.0, 65504.0, 1e20, -1e-20, 100.25, 2049.0,
                                       33.0, 1e5)))
    return out


def const_of(rng: random.Random, etype: str, shape: list[int]):
    n = int(np.prod(shape)) if shape else 1
    values = _leaf_numbers(rng, etype, n)
    if etype == "bf16":
        return ov.op.Constant(ov.Type.bf16, ov.Shape(shape), [float(v) for v in values])
    if etype in INTS:  # wrapped into the type, as C++ stores them
        info = np.iinfo(_NP[etype])
        values = [(int(v) - int(info.min)) % (1 << info.bits) + int(info.min) for v in values]
    arr = np.array(values, dtype=np.float64 if etype in REALS else object)
    with np.errstate(all="ignore"):
        arr = arr.astype(_NP[etype]).reshape(shape)
    return o.constant(arr)


def packed_const(rng: random.Random, etype: str, shape: list[int]):
    """A Const of a packed or 8-bit type: random bytes, so every code appears."""
    t = ov.Tensor(ov_type(etype), ov.Shape(shape))
    raw = t.data.view(np.uint8).reshape(-1)
    raw[:] = np.array([rng.randrange(256) for _ in range(raw.size)], np.uint8)
    return ov.op.Constant(t)


# -- ops ----------------------------------------------------------------------------------
@dataclass
class Op:
    name: str
    types: tuple[str, ...]
    build: object  # (rng, x, etype) -> node

    def __call__(self, rng, x, etype):
        return self.build(rng, x, etype)


def _shape_of(x) -> list[int]:
    return list(x.get_partial_shape().to_shape())


def _same(rng, x, etype):
    """A second input of x's type: a Const of its shape, of a broadcastable one, or x."""
    shape = _shape_of(x)
    r = rng.random()
    if r < 0.15:
        return x
    if r < 0.35 and shape:
        shape = [1] * len(shape)
    elif r < 0.45:
        shape = []
    return const_of(rng, etype, shape)


def _binary(fn):
    return lambda rng, x, et: fn(x, _same(rng, x, et))


def _divisor(rng, x, et):
    """A second input that divides: integers never by 0 or -1 (the runtime traps on
    both: SIGFPE)."""
    if et not in INTS:
        return _same(rng, x, et)
    shape = _shape_of(x)
    shape = rng.choice((shape, [1] * len(shape), []))
    n = int(np.prod(shape)) if shape else 1
    values = [rng.choice((1, 2, 3, 5, 7, -2, -3, 4)) for _ in range(n)]
    if et.startswith("u"):
        values = [abs(v) for v in values]
    return o.constant(np.array(values, _NP[et]).reshape(shape))


def _dividing(fn):
    return lambda rng, x, et: fn(x, _divisor(rng, x, et))


def _pythondiv_false(rng, x, et):
    node = o1.divide(x, _divisor(rng, x, et))
    node.set_attribute("m_pythondiv", False)
    return node


def _axes(rng, x, several=True):
    rank = len(_shape_of(x))
    if rank == 0:
        return o.constant(np.array([], np.int64))
    k = rng.randint(1, rank) if several else 1
    picked = rng.sample(range(rank), k)
    return o.constant(np.array([a - rank if rng.random() < 0.3 else a for a in picked],
                               rng.choice((np.int32, np.int64))))


def _reduce(fn):
    return lambda rng, x, et: fn(x, _axes(rng, x), keep_dims=rng.random() < 0.5)


def _convert(rng, x, et):
    return o.convert(x, rng.choice(ALL))


def _clamp(rng, x, et):
    lo = rng.choice((-2.5, -1.0, 0.0, 0.5, 1.0, 2.0, -1e10))
    return o.clamp(x, lo, lo + rng.choice((0.0, 1.0, 2.5, 3.0, 7.0, 1e12)))


def _gather(rng, x, et):
    shape = _shape_of(x)
    if not shape or 0 in shape:
        return None
    axis = rng.randrange(len(shape))
    n = shape[axis]
    idx = [rng.randint(-n, n - 1) for _ in range(rng.randint(1, 4))]
    return o8.gather(x, o.constant(np.array(idx, rng.choice((np.int32, np.int64)))),
                     o.constant(np.int64(axis - len(shape) if rng.random() < 0.3 else axis)))


def _gather_nd(rng, x, et):
    shape = _shape_of(x)
    if not shape or 0 in shape:
        return None
    k = rng.randint(1, len(shape))
    idx = [[rng.randrange(shape[i]) for i in range(k)] for _ in range(rng.randint(1, 3))]
    return o8.gather_nd(x, o.constant(np.array(idx, np.int64)))


def _gather_elements(rng, x, et):
    shape = _shape_of(x)
    if not shape or 0 in shape:
        return None
    axis = rng.randrange(len(shape))
    idx = np.array([rng.randrange(shape[axis]) for _ in range(int(np.prod(shape)))],
                   np.int32).reshape(shape)
    return o6.gather_elements(x, o.constant(idx), axis)


def _concat(rng, x, et):
    shape = _shape_of(x)
    if not shape:
        return None
    axis = rng.randrange(len(shape))
    other = list(shape)
    other[axis] = rng.randint(1, 3)
    return o.concat([x, const_of(rng, et, other)], axis)


def _slice(rng, x, et):
    shape = _shape_of(x)
    if not shape:
        return None
    n = shape[0]
    start, stop = rng.randint(-n - 1, n), rng.randint(-n - 1, n + 1)
    step = rng.choice((1, 1, 2, -1, -2))
    return o8.slice(x, o.constant(np.array([start], np.int64)),
                    o.constant(np.array([stop], np.int64)),
                    o.constant(np.array([step], np.int64)))


def _strided_slice(rng, x, et):
    shape = _shape_of(x)
    if not shape:
        return None
    n = shape[0]
    start, stop = rng.randint(-n, n), rng.randint(-n, n + 1)
    return o1.strided_slice(x, o.constant(np.array([start], np.int64)),
                            o.constant(np.array([stop], np.int64)),
                            o.constant(np.array([rng.choice((1, 2, -1))], np.int64)),
                            [rng.randint(0, 1)], [rng.randint(0, 1)])


def _unsqueeze(rng, x, et):
    rank = len(_shape_of(x))
    return o.unsqueeze(x, o.constant(np.int64(rng.randint(-rank - 1, rank))))


def _squeeze(rng, x, et):
    shape = _shape_of(x)
    ones = [i for i, d in enumerate(shape) if d == 1]
    if not ones:
        return o.squeeze(o.unsqueeze(x, o.constant(np.int64(0))), o.constant(np.int64(0)))
    return o.squeeze(x, o.constant(np.array(ones, np.int64)))


def _reshape(rng, x, et):
    n = int(np.prod(_shape_of(x)))
    target = rng.choice(([n], [-1], [1, n], [n, 1], [-1, 1], [0, -1] if _shape_of(x) else [n]))
    return o.reshape(x, o.constant(np.array(target, np.int64)), special_zero=True)


def _broadcast(rng, x, et):
    shape = _shape_of(x)
    target = [rng.choice((1, 2, 3))] + [d if rng.random() < 0.7 or d != 1 else 2 for d in shape]
    return o3.broadcast(x, o.constant(np.array(target, np.int64)))


def _tile(rng, x, et):
    reps = [rng.randint(1, 2) for _ in range(max(len(_shape_of(x)), 1))]
    return o.tile(x, o.constant(np.array(reps, np.int64)))


def _transpose(rng, x, et):
    rank = len(_shape_of(x))
    order = list(range(rank))
    rng.shuffle(order)
    return o.transpose(x, o.constant(np.array(order, np.int64)))


def _topk(rng, x, et):
    shape = _shape_of(x)
    if not shape or 0 in shape:
        return None
    axis = rng.randrange(len(shape))
    k = rng.randint(1, shape[axis])
    node = o.topk(x, o.constant(np.int64(k)), axis, rng.choice(("max", "min")),
                  rng.choice(("value", "index", "none")), ov.Type.i32, rng.random() < 0.5)
    return node.output(rng.randint(0, 1))


def _shape_of_op(rng, x, et):
    return o3.shape_of(x, rng.choice(("i32", "i64")))


#: Range's start, stop and step types (bf16 only as the output: NumPy has no bf16)
RANGE_TYPES = INTS + ("f16", "f32", "f64")


def _range(rng, x, et):
    """Range-4 with inputs of one type and an output of that type or another (start and
    step then cast as OpenVINO casts them), or Range-0 (one type throughout); real
    starts and steps sometimes fractional."""
    t = rng.choice(RANGE_TYPES)
    real = t not in INTS
    start = rng.randint(0 if t.startswith("u") else -3, 3)
    step = rng.choice((1, 2, 3))
    if real and rng.random() < 0.5:
        start, step = start + rng.choice((0.25, 0.5, 0.1)), step * rng.choice((0.5, 0.3, 1.0))
    stop = start + rng.randint(0, 6)
    dt = _NP[t]
    ins = [o.constant(dt(v)) for v in (start, stop, step)]
    if rng.random() < 0.2:
        return o1.range(*ins)
    out = t if rng.random() < 0.5 else rng.choice(RANGE_TYPES + ("bf16",))
    return o.range(*ins, out)


def _select(rng, x, et):
    shape = _shape_of(x)
    cond = const_of(rng, "boolean", shape)
    return o.select(cond, x, _same(rng, x, et))


def _matmul(rng, x, et):
    shape = _shape_of(x)
    if len(shape) != 2:
        return None
    return o.matmul(x, const_of(rng, et, [shape[1], rng.randint(1, 3)]), False, False)


def _scatter_update(rng, x, et):
    shape = _shape_of(x)
    if not shape or 0 in shape:
        return None
    i = rng.randrange(shape[0])
    return o3.scatter_update(x, o.constant(np.array([i], np.int64)),
                             const_of(rng, et, [1] + shape[1:]), o.constant(np.int64(0)))


def _cumsum(rng, x, et):
    rank = len(_shape_of(x))
    if not rank:
        return None
    return o.cumsum(x, o.constant(np.int64(rng.randrange(rank))), rng.random() < 0.3,
                    rng.random() < 0.3)


def _round(rng, x, et):
    return o.round(x, rng.choice(("half_to_even", "half_away_from_zero")))


def _unary(fn):
    return lambda rng, x, et: fn(x)


ARITH = NUMBERS
OPS = [
    Op("Add", ARITH, _binary(o.add)),
    Op("Subtract", ARITH, _binary(o.subtract)),
    Op("Multiply", ARITH, _binary(o.multiply)),
    Op("Divide", ARITH, _dividing(o.divide)),
    Op("DivideTruncating", ARITH, _pythondiv_false),
    Op("Maximum", ARITH, _binary(o.maximum)),
    Op("Minimum", ARITH, _binary(o.minimum)),
    Op("Mod", ARITH, _dividing(o.mod)),
    Op("FloorMod", ARITH, _dividing(o.floor_mod)),
    Op("Power", ARITH, _binary(o.power)),
    Op("SquaredDifference", ARITH, _binary(o.squared_difference)),
    Op("Equal", ALL, _binary(o.equal)),
    Op("NotEqual", ALL, _binary(o.not_equal)),
    Op("Less", NUMBERS, _binary(o.less)),
    Op("LessEqual", NUMBERS, _binary(o.less_equal)),
    Op("Greater", NUMBERS, _binary(o.greater)),
    Op("GreaterEqual", NUMBERS, _binary(o.greater_equal)),
    Op("LogicalAnd", ("boolean",), _binary(o.logical_and)),
    Op("LogicalOr", ("boolean",), _binary(o.logical_or)),
    Op("LogicalXor", ("boolean",), _binary(o.logical_xor)),
    Op("LogicalNot", ("boolean",), _unary(o.logical_not)),
    Op("BitwiseAnd", INTS + ("boolean",), _binary(o.bitwise_and)),
    Op("BitwiseOr", INTS + ("boolean",), _binary(o.bitwise_or)),
    Op("BitwiseXor", INTS + ("boolean",), _binary(o.bitwise_xor)),
    Op("BitwiseNot", INTS + ("boolean",), _unary(o.bitwise_not)),
    Op("Abs", ARITH, _unary(o.abs)),
    Op("Negative", ARITH, _unary(o.negative)),
    Op("Relu", ARITH, _unary(o.relu)),
    Op("Sign", ARITH, _unary(o.sign)),
    Op("Floor", ARITH, _unary(o.floor)),
    Op("Ceiling", ARITH, _unary(o.ceiling)),
    Op("Round", ARITH, _round),
    Op("Sqrt", ARITH, _unary(o.sqrt)),
    Op("Exp", ARITH, _unary(o.exp)),
    Op("Log", ARITH, _unary(o.log)),
    Op("Sin", ARITH, _unary(o.sin)),
    Op("Cos", ARITH, _unary(o.cos)),
    Op("Tan", ARITH, _unary(o.tan)),
    Op("Tanh", ARITH, _unary(o.tanh)),
    Op("Atan", ARITH, _unary(o.atan)),
    Op("Sinh", ARITH, _unary(o.sinh)),
    Op("Cosh", ARITH, _unary(o.cosh)),
    Op("Asinh", ARITH, _unary(o.asinh)),
    Op("Erf", ARITH, _unary(o.erf)),
    Op("Sigmoid", ARITH, _unary(o.sigmoid)),
    Op("Clamp", ARITH, _clamp),
    Op("Convert", ALL, _convert),
    Op("ReduceSum", ARITH, _reduce(o.reduce_sum)),
    Op("ReduceProd", ARITH, _reduce(o.reduce_prod)),
    Op("ReduceMax", ARITH, _reduce(o.reduce_max)),
    Op("ReduceMin", ARITH, _reduce(o.reduce_min)),
    Op("ReduceMean", ARITH, _reduce(o.reduce_mean)),
    Op("ReduceL1", ARITH, _reduce(o.reduce_l1)),
    Op("ReduceL2", ARITH, _reduce(o.reduce_l2)),
    Op("ReduceLogicalAnd", ("boolean",), _reduce(o.reduce_logical_and)),
    Op("ReduceLogicalOr", ("boolean",), _reduce(o.reduce_logical_or)),
    Op("ShapeOf", ALL, _shape_of_op),
    Op("Gather", ALL, _gather),
    Op("GatherND", ALL, _gather_nd),
    Op("GatherElements", ALL, _gather_elements),
    Op("Range", ALL, _range),
    Op("Select", ALL, _select),
    Op("Concat", ALL, _concat),
    Op("Slice", ALL, _slice),
    Op("StridedSlice", ALL, _strided_slice),
    Op("Squeeze", ALL, _squeeze),
    Op("Unsqueeze", ALL, _unsqueeze),
    Op("Reshape", ALL, _reshape),
    Op("Broadcast", ALL, _broadcast),
    Op("Tile", ALL, _tile),
    Op("Transpose", ALL, _transpose),
    Op("TopK", ARITH, _topk),
    Op("MatMul", ARITH, _matmul),
    Op("ScatterUpdate", ALL, _scatter_update),
    Op("CumSum", ARITH, _cumsum),
]
BY_NAME = {op.name: op for op in OPS}


@dataclass
class Case:
    name: str       # the friendly name of the case's last node
    ops: list[str]  # the ops, first to last, with the types they ran on
    output: object  # the ov.Output the case ends in


def _start(rng: random.Random, etype: str):
    if rng.random() < 0.08:  # a packed or 8-bit Const read through a Convert
        packed = rng.choice(PACKED)
        shape = [rng.randint(1, 6)]
        return o.convert(packed_const(rng, packed, shape), etype), f"{packed}->{etype}"
    shape = rng.choice(([], [1], [2], [3], [4], [5], [2, 3], [3, 2], [1, 4], [2, 2, 2]))
    return const_of(rng, etype, shape), etype


def build_case(rng: random.Random, index: int, first: tuple[str, str] | None = None
               ) -> Case | None:
    """A chain of 1 to 4 ops from one Const (``first``: the first op and its type)."""
    if first:
        op, etype = BY_NAME[first[0]], first[1]
    else:
        op = rng.choice(OPS)
        etype = rng.choice(op.types)
    x, leaf = _start(rng, etype)
    x = x.output(0)
    steps = [leaf]
    for depth in range(rng.randint(1, 4)):
        if depth:
            op = rng.choice([p for p in OPS if etype in p.types])
        try:
            out = op(rng, x, etype)
        except (RuntimeError, ValueError, TypeError, OverflowError):
            return None
        if out is None:
            return None
        x = out if isinstance(out, ov.Output) else out.output(0)
        if x.get_partial_shape().is_dynamic or int(np.prod(_shape_of(x))) > 64:
            return None
        etype = x.get_element_type().get_type_name()
        steps.append(f"{op.name}:{etype}")
        if 0 in _shape_of(x):
            break  # no op on an empty tensor: some traps in the runtime (SIGFPE)
    name = f"case{index}"
    x.get_node().set_friendly_name(name)
    return Case(name, steps, x)


def build_cases(seed: int, n: int) -> list[Case]:
    rng = random.Random(f"value-differential-{seed}")
    pairs = [(op.name, t) for op in OPS for t in op.types]
    rng.shuffle(pairs)
    cases, i = [], 0
    while len(cases) < n:
        first = pairs[i % len(pairs)]  # every op starts cases of every type it takes
        case = build_case(rng, len(cases), first)
        i += 1
        if case is not None:
            cases.append(case)
    return cases


# -- folding -----------------------------------------------------------------------------
def evaluated(model: ov.Model) -> dict:
    """Every output OpenVINO's ops ``evaluate`` from the Consts, node by node (as its
    shape inference evaluates values and bounds), by ``(node name, port)``: an op that
    does not evaluate its input type gives nothing, nor do the ops it feeds.
    (``ConstantFolding`` is not the oracle: it computes chains of f16 ops in f32.)"""
    known: dict = {}
    for node in model.get_ordered_ops():
        name = node.get_friendly_name()
        if node.get_type_name() == "Constant":
            known[(name, 0)] = node.get_tensor_view()
            continue
        ins = []
        for v in node.input_values():
            ins.append(known.get((v.get_node().get_friendly_name(), v.get_index())))
        if node.get_type_name() == "ShapeOf" and ins[0] is None:  # it reads the shape only
            v = node.input_value(0)
            ins[0] = ov.Tensor(v.get_element_type(), v.get_shape())
        if node.get_type_name() in ("Result", "Parameter") or not ins or None in ins \
                or any(node.get_output_partial_shape(i).is_dynamic
                       for i in range(node.get_output_size())):
            continue
        outs = [ov.Tensor(node.get_output_element_type(i), node.get_output_shape(i))
                for i in range(node.get_output_size())]
        try:
            done = node.evaluate(outs, ins)
        except RuntimeError:
            done = False
        if done:
            for i, t in enumerate(outs):
                known[(name, i)] = t
    return known


def _folded_by_openvino(model: ov.Model, known: dict) -> dict[str, np.ndarray | None]:
    """By the friendly name of each Result's producer: its value as OpenVINO evaluates
    it (``known``: :func:`evaluated`), or None."""
    out = {}
    for r in model.get_results():
        v = r.input_value(0)
        t = known.get((v.get_node().get_friendly_name(), v.get_index()))
        out[v.get_node().get_friendly_name()] = None if t is None else _tensor_data(t)
    return out


def _tensor_data(t: ov.Tensor) -> np.ndarray:
    if t.get_element_type() == ov.Type.bf16:  # the raw bits
        return np.frombuffer(bytes(t.data.reshape(-1).view(np.uint8)), np.uint16).copy()
    return np.array(t.data).copy()


def _constant_data(c) -> np.ndarray:
    et = c.get_output_element_type(0).get_type_name()
    if et == "bf16":  # the raw bits
        raw = np.frombuffer(bytes(c.get_tensor_view().data.reshape(-1).view(np.uint8)), np.uint16)
        return raw.reshape(list(c.get_output_shape(0)))
    return np.array(c.get_data())


def ovgather_array(value, etype: str):
    """ovgather's exact value in OpenVINO's own layout (bf16 as its raw bits)."""
    if value is None or value[0] != value[1]:
        return None
    if etype == "bf16":
        bits = np.array(value[0], np.float32).view(np.uint32)
        return (bits >> 16).astype(np.uint16)
    dtype = _NP.get(etype)
    if dtype is None:
        return None
    try:
        with np.errstate(all="ignore"):
            arr = np.array(value[0], dtype=object).astype(dtype)
    except (OverflowError, TypeError, ValueError):  # not a value of the type: no match
        return np.array(value[0], dtype=object)
    if arr.dtype.kind in "iub" and arr.astype(object).tolist() != list(value[0]):
        return np.array(value[0], dtype=object)  # an integer the type does not hold
    return arr


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        return bool((nan == np.isnan(b)).all() and
                    (a[~nan].tobytes() == b[~nan].tobytes()))
    return a.tobytes() == b.tobytes()


@dataclass
class Outcome:
    case: Case
    etype: str
    openvino: np.ndarray | None
    ovgather: np.ndarray | None
    status: str  # ovgather's verdict on the case's layer
    at_max: bool = False  # a Convert of an integer type's maximum on the way


def fold(cases: list[Case], path: Path) -> tuple[list[Outcome], list]:
    """Both foldings of ``cases`` (one IR at ``path``), and the layers whose shape
    ovgather's ``check`` gives differently from ``read_model`` or calls invalid."""
    results = []
    for c in cases:
        results.append(o.result(c.output))
        if c.output.get_element_type().is_integral_number() and \
                c.output.get_partial_shape().rank.get_length() == 1:
            # the value as a shape (OpenVINO reads its bounds): a Broadcast target
            target = o.minimum(o.maximum(o.convert(c.output, "i64"), o.constant(np.int64(0))),
                               o.constant(np.int64(3)))
            try:
                shaped = o3.broadcast(o.constant(np.float32(0)), target)
            except RuntimeError:  # a value OpenVINO refuses as a shape
                continue
            shaped.set_friendly_name(f"{c.name}_shape")
            results.append(o.result(shaped))
    model = ov.Model(results, [], "values")
    ov.save_model(model, str(path), compress_to_fp16=False)
    core = ov.Core()
    read = core.read_model(str(path))
    known = evaluated(read)
    folded = _folded_by_openvino(read, known)
    expected = {op.get_friendly_name(): [str(op.get_output_partial_shape(i))
                                         for i in range(op.get_output_size())]
                for op in read.get_ops()}
    at_max = _converts_at_max(read, known)
    G = read_ir(path)
    report = check(G)
    tensors = all_tensors(G)
    by_name = {G.nodes[n]["name"]: n for n in G.nodes}
    statuses = {lr.name: lr.status for lr in report.layers}
    shape_diffs = [(lr.name, lr.type, lr.inferred, expected.get(lr.name), lr.status)
                   for lr in report.layers if lr.type != "Result" and
                   (lr.inferred != expected.get(lr.name) or lr.status != "ok")]
    out = []
    for c in cases:
        node = by_name[c.name]
        port = G.nodes[node]["outputs"][c.output.get_index()]["id"]
        t = tensors[node][port]
        et = c.output.get_element_type().get_type_name()
        out.append(Outcome(c, et, folded.get(c.name), ovgather_array(t.value, et),
                           statuses.get(c.name, "?"), c.name in at_max))
    return out, shape_diffs


#: ops whose bound evaluation reads an integer type's maximum as "no bound"
_AT_MAX = ("Convert", "Divide", "Mod", "FloorMod")


def _holds_max(node, known: dict, et: str) -> bool:
    top = np.iinfo(_NP[et]).max
    for v in node.input_values()[:2]:
        t = known.get((v.get_node().get_friendly_name(), v.get_index()))
        if t is not None and (np.asarray(t.data) == top).any():
            return True
    return False


def _converts_at_max(model: ov.Model, known: dict) -> set[str]:
    """The cases with a Convert (or Divide, Mod, FloorMod) of a value holding its integer
    type's maximum: there OpenVINO's ``evaluate`` computes with it, while its bound
    evaluation (what a shape reads, and ovgather follows) takes it for "no bound" (a
    Convert gives the new type's maximum, a Divide 0)."""
    by_name = {op.get_friendly_name(): op for op in model.get_ops()}
    found = set()
    for name, node in by_name.items():
        if not name.startswith("case") or "_" in name:
            continue
        while node.get_input_size():
            v = node.input_value(0)
            et = v.get_element_type().get_type_name()
            if node.get_type_name() in _AT_MAX and et in INTS \
                    and _holds_max(node, known, et):
                found.add(name)
            node = v.get_node()
    return found
