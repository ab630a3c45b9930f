"""Small IRs written by the installed OpenVINO, each holding one thing an older release
may lack (an op version, an element type, a layer its CPU plugin refuses): what
``tests/infer/test_target_runtime.py`` asks the releases about and what
``tools/downgrade_survey.py`` converts for them.

``PIECES`` are the cases ``check --target-runtime`` was measured on; ``MORE_PIECES`` add
the other rewrites of ``convert --target-runtime`` and cases it must refuse. Each builder
returns ``(parameters, outputs)`` (and the Assign sinks of a state); boolean masks are
computed from real inputs, so that random inputs make them vary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset5 as o5
import openvino.opset6 as o6
import openvino.opset12 as o12
import openvino.opset13 as o13
import openvino.opset14 as o14
import openvino.opset15 as o15
import openvino.opset16 as o16


def _named(node, name):
    node.set_friendly_name(name)
    return node


def _mask(shape):
    """A parameter and a boolean mask computed from it (True where it is positive)."""
    x = o13.parameter(shape, ov.Type.f32)
    return x, o13.greater(x, o13.constant(np.float32(0)))


def _bitwise(kind):
    a, mask_a = _mask([2, 3])
    b, mask_b = _mask([2, 3])
    if kind == "not":
        return [a], [_named(o13.bitwise_not(mask_a), "not13")]
    op = {"and": o13.bitwise_and, "or": o13.bitwise_or, "xor": o13.bitwise_xor}[kind]
    return [a, b], [_named(op(mask_a, mask_b), f"{kind}13")]


def _bitwise_int():
    a, b = o13.parameter([2, 3], ov.Type.i32), o13.parameter([2, 3], ov.Type.i32)
    return [a, b], [_named(o13.bitwise_and(a, b), "and13_i32")]


def _sdpa(q_shape=(1, 2, 4, 8), k_len=4, mask=None, causal=False, scale=False):
    q = o13.parameter(list(q_shape), ov.Type.f32)
    k_shape = [*q_shape[:-2], k_len, q_shape[-1]]
    k, v = (o13.parameter(k_shape, ov.Type.f32) for _ in range(2))
    params, inputs = [q, k, v], [q, k, v]
    if mask == "bool":
        m, made = _mask([q_shape[-2], k_len])
        params.append(m)
        inputs.append(made)
    elif mask == "float":
        m = o13.parameter([1, 1, q_shape[-2], k_len], ov.Type.f32)
        params.append(m)
        inputs.append(m)
    elif scale:
        inputs.append(o13.constant(np.float32(0)))
    if scale:
        inputs.append(o13.constant(np.float32(0.3)))
    node = o13.scaled_dot_product_attention(*inputs, causal=causal)
    return params, [_named(node, "sdpa13")]


def _pad12(begin=(0, -1), end=(1, 0), computed=False):
    x = o13.parameter([2, 3] if not computed else [-1, 3], ov.Type.f32)
    if computed:  # pads measured at run time: [rows - 3, -1] at the start
        rows = o13.gather(o13.shape_of(x), o13.constant([0]), o13.constant(0))
        begin = o13.concat([o13.subtract(rows, o13.constant([3], np.int64)),
                            o13.constant([-1], np.int64)], 0)
    return [x], [_named(o12.pad(x, begin, list(end), "constant"), "pad12")]


def _group_norm(batch=1):
    x = o13.parameter([batch, 4, 3, 3], ov.Type.f32)
    scale = np.linspace(0.5, 2, 4).astype(np.float32)
    bias = np.linspace(-1, 1, 4).astype(np.float32)
    return [x], [_named(o12.group_normalization(x, scale, bias, 2, 1e-5), "groupnorm12")]


def _pool(kind, rounding, size=5, kernel=2, stride=1, pads_end=0):
    x = o13.parameter([1, 2, size, size], ov.Type.f32)
    s, k, pe = [stride] * 2, [kernel] * 2, [pads_end] * 2
    if kind == "max":
        node = o14.max_pool(x, s, [1, 1], [0, 0], pe, k, rounding)
    else:
        node = o14.avg_pool(x, s, [0, 0], pe, k, True, rounding)
    return [x], [_named(node, f"{kind}pool14_{rounding}")]


def _const(etype):
    x = o13.parameter([4], ov.Type.f32)
    c = _named(ov.op.Constant(getattr(ov.Type, etype), ov.Shape([4]), [0.5, 1.0, 0.0, 1.0]),
               f"const_{etype}")
    return [x], [o13.add(x, o13.convert(c, ov.Type.f32))]


def _parameter(etype):
    p = o13.parameter([4], getattr(ov.Type, etype), name=f"param_{etype}")
    return [p], [o13.convert(p, ov.Type.f32)]


def _isnan_select():
    x = o13.parameter([2, 3], ov.Type.f32)
    nan = _named(o13.is_nan(x), "isnan")
    return [x], [o13.select(nan, o13.constant(np.float32(0)), x)]


def _loop_with_pad12():
    """A Loop whose body holds the Pad-12: the release names the body layer by its own id."""
    x, inner = o13.parameter([2, 3], ov.Type.f32), o13.parameter([2, 3], ov.Type.f32)
    pad = _named(o12.pad(inner, [0, 0], [0, 0], "constant"), "pad12_in_body")
    body = ov.Model([o13.result(pad), o13.result(o13.constant(True))], [inner], "body")
    loop = _named(o5.loop(o13.constant(np.int64(2)), o13.constant(True)), "loop")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_invariant_input(inner, x.output(0))
    return [x], [loop.get_iter_value(body.get_results()[0].output(0), -1)]


def _scatter_elements(reduction):
    x = o13.parameter([3, 4], ov.Type.f32)
    updates = o13.parameter([2, 4], ov.Type.f32)
    indices = np.array([[2, 0, 1, 1], [0, 2, 2, 0]], np.int64)
    node = o16.scatter_elements_update(x, indices, updates, 0, reduction)
    return [x, updates], [_named(node, f"scatter_elements12_{reduction}")]


def _scatter_nd():
    x = o13.parameter([4, 3], ov.Type.f32)
    updates = o13.parameter([2, 3], ov.Type.f32)
    node = o15.scatter_nd_update(x, np.array([[3], [1]], np.int64), updates, "none")
    return [x, updates], [_named(node, "scatter_nd15")]


def _squeeze15():
    x = o13.parameter([2, 1, 3], ov.Type.f32)
    return [x], [_named(o15.squeeze(x, np.array([1], np.int64)), "squeeze15")]


def _one_hot16():
    x = o13.parameter([5], ov.Type.f32)
    indices = o13.convert(o13.floor(o13.multiply(o13.abs(x), o13.constant(np.float32(3)))),
                          ov.Type.i64)
    node = o16.one_hot(indices, np.int64(4), np.float32(1), np.float32(0), -1,
                       "ignore_negative")
    return [x], [_named(node, "one_hot16")]


def _identity16():
    x = o13.parameter([2, 3], ov.Type.f32)
    return [x], [o13.relu(_named(o16.identity(x), "identity16"))]


def _promote14():
    a, b = o13.parameter([2, 3], ov.Type.f32), o13.parameter([2, 3], ov.Type.f16)
    node = _named(o14.convert_promote_types(a, b), "promote14")
    return [a, b], [o13.add(node.output(0), node.output(1))]


def _state(shape, initializer):
    """x -> ReadValue (zeros, or an initializer) + x -> Assign: a one-step state."""
    from openvino.op.util import Variable, VariableInfo

    x = o13.parameter(shape, ov.Type.f32)
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape(shape), ov.Type.f32, "v"
    variable = Variable(info)
    state = o6.read_value(x, variable) if initializer else o6.read_value(variable)
    total = o13.add(_named(state, "state"), x)
    return [x], [total], [o6.assign(total, variable)]


#: name -> builder of (parameters, outputs): one thing an old release may lack each
PIECES = {
    "and13": lambda: _bitwise("and"), "sdpa13": _sdpa, "pad12": _pad12,
    "groupnorm12": _group_norm,
    "maxpool14_floor": lambda: _pool("max", "floor"),
    "maxpool14_ceil_torch": lambda: _pool("max", "ceil_torch"),
    "avgpool14_ceil_torch": lambda: _pool("avg", "ceil_torch"),
    **{f"const_{t}": (lambda t=t: _const(t)) for t in ("f8e4m3", "nf4", "f4e2m1", "u2")},
    "param_f8e5m2": lambda: _parameter("f8e5m2"), "isnan_select": _isnan_select,
    "loop_pad12": _loop_with_pad12,
}

#: the other rewrites of ``convert --target-runtime``, and what it must refuse
MORE_PIECES = {
    "or13": lambda: _bitwise("or"), "xor13": lambda: _bitwise("xor"),
    "not13": lambda: _bitwise("not"), "and13_i32": _bitwise_int,
    "sdpa13_causal": lambda: _sdpa(k_len=6, causal=True),
    "sdpa13_bool_mask": lambda: _sdpa(k_len=5, mask="bool"),
    "sdpa13_float_mask_scale": lambda: _sdpa(mask="float", scale=True),
    "sdpa13_dynamic": lambda: _sdpa(q_shape=(-1, 2, -1, 8), k_len=-1, causal=True),
    "pad12_positive": lambda: _pad12(begin=(1, 0), end=(0, 2)),
    "pad12_computed": lambda: _pad12(computed=True),
    "groupnorm12_dynamic": lambda: _group_norm(batch=-1),
    "maxpool14_ceil_torch_differs": lambda: _pool("max", "ceil_torch", stride=3, pads_end=1),
    "avgpool14_ceil_torch_strided": lambda: _pool("avg", "ceil_torch", size=6, kernel=3,
                                                  stride=2),
    "const_f8e5m2": lambda: _const("f8e5m2"),
    "scatter_elements12_none": lambda: _scatter_elements("none"),
    "scatter_elements12_sum": lambda: _scatter_elements("sum"),
    "scatter_nd15": _scatter_nd, "squeeze15": _squeeze15, "one_hot16": _one_hot16,
    "identity16": _identity16, "promote14": _promote14,
    "state_without_initializer": lambda: _state([1, 2], initializer=False),
    "state_dynamic": lambda: _state([-1, 2], initializer=True),
}


def save(path: Path, pieces) -> Path:
    """One IR at ``path`` holding the outputs of every builder in ``pieces``."""
    params, outputs, sinks = [], [], []
    for build in pieces:
        p, o, *s = build()
        params += p
        outputs += [x if isinstance(x, ov.Output) else x.output(0) for x in o]
        sinks += s[0] if s else []
    ov.save_model(ov.Model(outputs, sinks, params, path.stem), str(path))
    return path


def write_all(folder: Path, pieces: dict) -> dict[str, Path]:
    """One IR per piece in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return {name: save(folder / f"{name}.xml", [build]) for name, build in pieces.items()}
