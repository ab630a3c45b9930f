"""The tensors that reach a layer: what a Parameter, a Const and an edge carry into a rule.

:func:`tensors_reaching` is the one answer to "which shape reaches this input" in the
package: the walk, ``explain``, ``validate``, the passes all ask it (through
``infer.input_tensors`` when they start from a graph).
"""

from __future__ import annotations

import struct
from functools import lru_cache, partial
from typing import Any

from ..element_types import FLOAT_VALUE_TYPES, INT_TYPES
from ..errors import OvgatherError, ShapeError, ShapeParseError
from ..graph import input_edges
from ..ops.core import numeric
from ..ops.core.numeric import UNPACKED
from ..ops.core.values import MAX_VALUE_SIZE, Tensor
from ..shapes import INF, Dimension, PartialShape
from .report import declared_shape, port_type

__all__ = ["tensors_reaching", "shapes_reaching", "shape_reaching", "parameter_tensor",
           "const_tensor"]


def shapes_reaching(G: Any, node: str, shapes: dict[str, list[PartialShape]]
                    ) -> list[tuple[str, int, PartialShape | None]]:
    """``(producer, from_port, shape)`` reaching each connected input of ``node``, in the
    order of its input ports, read from ``shapes`` (``infer_shapes``' answer, made once by
    a caller that asks about many layers); the shape is None where ``shapes`` has none.

    >>> import networkx as nx
    >>> from ovgather.shapes import PartialShape as P
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("0", outputs=[{"id": 3}, {"id": 5}]); G.add_node("1", inputs=[{"id": 0}])
    >>> _ = G.add_edge("0", "1", key=(5, 0))
    >>> [(u, port, str(s)) for u, port, s in shapes_reaching(G, "1", {"0": [P.parse("[2]"),
    ...                                                                    P.parse("[4]")]})]
    [('0', 5, '[4]')]
    """
    found = []
    for u, from_port, _ in input_edges(G, node):
        ports = [p["id"] for p in G.nodes[u]["outputs"]]
        known = shapes.get(u) or []
        i = ports.index(from_port) if from_port in ports else len(known)
        found.append((u, from_port, known[i] if i < len(known) else None))
    return found


def shape_reaching(G: Any, node: str, position: int, shapes: dict[str, list[PartialShape]]
                   ) -> PartialShape | None:
    """The shape of :func:`shapes_reaching` at the ``position``-th connected input (None
    when there is no such input)."""
    found = shapes_reaching(G, node, shapes)
    return found[position][2] if position < len(found) else None


def tensors_reaching(attrs, preds, produced) -> list[Tensor]:
    found: dict[int, Tensor] = {}
    for u, keyed in preds.items():
        outs = produced[u]
        for from_port, to_port in keyed:
            t = outs.get(from_port)
            if t is not None:
                found[to_port] = t
    try:
        return [found[p["id"]] for p in attrs["inputs"]]
    except KeyError as err:
        raise ShapeError(f"every input of a {attrs['type']} layer must be connected, "
                         f"but input port {err.args[0]} has no edge") from None


def parameter_tensor(attrs, data, override: PartialShape | Tensor | None) -> Tensor:
    if isinstance(override, Tensor):  # a body's Parameter, as its layer feeds it
        return override
    etype = data.get("element_type", "dynamic")
    if override is not None:
        return Tensor(override, etype)
    text = data.get("shape")
    if text is None:
        return Tensor(declared_shape(attrs["outputs"][0]["dims"]), etype)
    return Tensor(_parse_param_shape(text), etype)


def _parse_param_shape(text: str) -> PartialShape:
    """The Parameter ``shape`` attribute; OpenVINO reads a reversed interval as ``?``.

    Text that is not a shape (``2,x``, ``-3``, a dim beyond int64) is a ShapeParseError,
    which the walk turns into an IRStructureError: OpenVINO reads some of these (``-3``
    as 0) but no user means them.
    """
    shape = _parse_shape_lenient(text)
    for d in shape.dims or ():
        if d.lo >= INF or (d.hi > INF):
            raise ShapeParseError(f"a dimension must fit in int64, but got '{text}'")
    return shape


def _parse_shape_lenient(text: str) -> PartialShape:
    try:
        return _parse_shape(text)
    except ShapeParseError:
        parts = [p.strip() for p in text.split(",")]
        dims = []
        for p in parts:
            lo, sep, hi = p.partition("..")
            if sep and lo.isascii() and hi.isascii() and lo.isdigit() and hi.isdigit() \
                    and len(lo) < 20 and len(hi) < 20 and int(lo) > int(hi):
                dims.append(Dimension.dynamic())
            else:
                dims.append(Dimension.parse(p))
        return PartialShape.of(tuple(dims))


#: the packed types, whose bytes only a Convert decodes (bf16 is a number type of its own)
PACKED = frozenset(UNPACKED) - {"bf16"}


def const_tensor(G, node, attrs, data) -> Tensor:
    etype = data.get("element_type") or port_type(attrs["outputs"][0])
    text = data.get("shape")
    if text is None:
        shape = declared_shape(attrs["outputs"][0]["dims"])
        if not attrs["outputs"][0]["dims"]:
            shape = PartialShape.of(())
        n = _value_size(etype, shape)
    else:  # a model has a few kinds of Const, and thousands of each
        shape, n = _shape_and_size(etype, text)
    if n is None:
        return Tensor(shape, etype, const=True)
    # partial, not a lambda: one object a Const rather than a function and its closure
    if etype in PACKED:  # its value is for a Convert only
        t = Tensor(shape, etype, const=True)
        t.unpacked = partial(_const_value, G, node, attrs, n)
        return t
    return Tensor(shape, etype, load=partial(_const_value, G, node, attrs, n), const=True)


@lru_cache(maxsize=4096)
def _shape_and_size(etype: str, text: str) -> tuple[PartialShape, int | None]:
    """The shape a Const's ``shape`` attribute gives, and :func:`_value_size`."""
    shape = _parse_shape(text)
    return shape, _value_size(etype, shape)


def _value_size(etype: str, shape: PartialShape) -> int | None:
    """The number of elements of a Const whose value the walk carries (a number type, a
    static shape of at most MAX_VALUE_SIZE elements), else None."""
    if (etype in INT_TYPES or etype in FLOAT_VALUE_TYPES or etype == "boolean"
            or etype in UNPACKED) and shape.dims is not None:
        n = 1
        for d in shape.dims:
            n = n * d.lo if d.lo == d.hi else MAX_VALUE_SIZE + 1
        if n <= MAX_VALUE_SIZE:
            return n
    return None


@lru_cache(maxsize=4096)
def _parse_shape(text: str) -> PartialShape:
    """Shape attributes repeat a lot in big models; PartialShape is immutable."""
    return PartialShape.parse(text)


_STRUCT = {"i64": "q", "i32": "i", "i16": "h", "i8": "b",
           "u64": "Q", "u32": "I", "u16": "H", "u8": "B", "f64": "d", "f32": "f", "f16": "e",
           "boolean": "?"}


@lru_cache(maxsize=256)
def _unpacker(n: int, code: str) -> struct.Struct:
    return struct.Struct(f"<{n}{code}")


def _const_value(G, node, attrs, n: int):
    """The ``n`` numbers of a Const: its bytes read raw and unpacked with ``struct`` (10×
    cheaper than a numpy array per Const); ``ir.const_value`` does the checked, general
    read when that does not work out (a short file, an odd type)."""
    ir = _ir()
    data = attrs.get("data") or {}
    code = _STRUCT.get(data.get("element_type"))
    vals = None
    if attrs.get("value") is None and code is not None:
        unpack = _unpacker(n, code)
        try:
            vals = unpack.unpack(ir.weights_bytes(G, int(data["offset"]), unpack.size))
        except (KeyError, ValueError, struct.error, OvgatherError):
            pass
    if vals is None:
        arr = attrs.get("value")
        if arr is None:
            arr = ir.const_value(G, node)
            etype = data.get("element_type") or port_type(attrs["outputs"][0])
            if etype in UNPACKED:  # the bytes as read: their values, as OpenVINO packs them
                arr = numeric.unpack(arr, etype, n)
        vals = tuple(arr.reshape(-1).tolist())
    if data.get("element_type") == "boolean":
        vals = tuple([int(v) for v in vals])  # 0 and 1, as the ops' values are
    return vals, vals  # one tuple: an exact value (inf and nan too, for the real types)


@lru_cache(maxsize=1)
def _ir():
    """``ovgather.ir``, imported on first use (it brings numpy and lxml)."""
    from .. import ir

    return ir
