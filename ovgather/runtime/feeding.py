"""Inputs that exercise a model: what each integer or boolean input feeds, read from the
``openvino.Model`` (the graph, not the names), and seeded arrays made to suit it.

All zeros is a valid index and token id at any size, but an all-zero attention mask masks
every position, and a transformer's every output is then NaN: equal in two models, and
proving nothing. So each integer or boolean Parameter gets a :class:`Feed`:

- ``index``: its values reach the indices of an op that picks from a table (the gathers
  and the embedding bags: their spec's ``table_rows`` says which input and how many
  entries) through Convert, Reshape, Unsqueeze, Slice, Concat, an Add of a constant …:
  seeded random values inside the smallest table they index (the data's dim on the
  gathered axis, read from a copy of the model reshaped to the sizes run, :func:`feeds_at`;
  a dim still dynamic gives 1, index 0 being the one known valid);
- ``positions``: they reach a Range, or a Sin/Cos (rotary position embeddings), or they
  index a table and the input's name says positions (``position_ids``): ``0, 1, …`` along
  the last axis in every row (kept inside a table they also index);
- ``mask``: they reach a Select condition, a Convert to boolean, a logical op, the mask of
  a ScaledDotProductAttention or, as numbers, a Softmax (an additive mask): ones, with
  the last positions of some rows zero (padding), never a whole row;
- none of these: zeros, as before (a valid index, token id and size at any shape).

An input that indexes a table is an ``index`` (or ``positions``) whatever else it reaches.
Where rows must differ (reshape's row proof), ``make_array(..., vary=True)`` gives a
``zeros`` input random zeros and ones, and positions that start at the row's number.
Floating-point inputs are small random numbers (standard normal), as validate makes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import OvgatherError, UnsupportedOpError
from ..ops.core import registry
from ..ops.core.spec import Attrs

__all__ = ["Feed", "input_feeds", "feeds_at", "feeds_by_name", "merge_feeds", "make_array",
           "make_arrays"]

#: Ops that hand their input's values on unchanged (rearranged, sliced, repeated or
#: converted), by the input positions that carry values.
_CARRY: dict[str, tuple[int, ...] | None] = {
    "Convert": (0,), "Reshape": (0,), "Unsqueeze": (0,), "Squeeze": (0,),
    "Transpose": (0,), "Broadcast": (0,), "Tile": (0,), "Slice": (0,),
    "StridedSlice": (0,), "Split": (0,), "VariadicSplit": (0,), "Select": (1, 2),
    "Concat": None, "Identity": (0,),
}
#: Ops that compute new numbers from a mask and still carry its meaning (``1 - mask``,
#: ``mask == 0``, ``mask * -inf``): followed when looking for a mask's use only.
_ARITHMETIC = {
    "Add", "Subtract", "Multiply", "Divide", "Maximum", "Minimum", "Negative", "Equal",
    "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "BitwiseNot",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Abs", "Power",
}
#: Where a value is a mask: (op type, input position or None for any).
_MASK_USES = {("Select", 0), ("ScaledDotProductAttention", 3), ("LogicalAnd", None),
              ("LogicalOr", None), ("LogicalXor", None), ("LogicalNot", None),
              ("Softmax", 0), ("SoftMax", 0), ("LogSoftmax", 0)}
#: How far a mask's use is looked for, in ops from the input.
_MASK_DEPTH = 24


@dataclass(frozen=True)
class Feed:
    """What an input is fed: ``kind`` is ``index``, ``positions``, ``mask``, ``zeros`` or
    ``random`` (floats), with values in ``[low, high)`` for indices and positions;
    ``why`` names the layer that decided it."""

    kind: str
    low: int = 0
    high: int | None = None
    why: str = ""

    def describe(self) -> str:
        """The values in words, for a report (``random indices in [0,500)``)."""
        if self.kind == "index":
            return f"random indices in [{self.low},{self.high})"
        if self.kind == "positions":
            top = "" if self.high is None else f" (below {self.high})"
            return f"positions {self.low}, {self.low + 1}, … along the last axis{top}"
        if self.kind == "mask":
            return "mask: ones, the last positions of some rows zero"
        if self.kind == "random":
            return "random normal"
        return "zeros"


def _const(output) -> np.ndarray | None:
    node = output.get_node()
    if node.get_type_name() != "Constant":
        return None
    try:
        return node.get_data()
    except RuntimeError:  # pragma: no cover - an element type NumPy lacks
        return None


def _scalar_const(output) -> int | None:
    """The one integer value of a Constant (all its elements equal), or None."""
    shape = output.get_partial_shape()
    if shape.is_dynamic or int(np.prod([d.get_length() for d in shape])) > 64:
        return None
    values = _const(output)
    if values is None or values.size == 0 or values.dtype.kind not in "iuf":
        return None
    flat = values.reshape(-1)
    if not np.isfinite(flat[0]) or not np.all(flat == flat[0]) \
            or flat[0] != np.round(flat[0]):
        return None
    return int(flat[0])


def _spec(node):
    """ovgather's spec of the OpenVINO node's op and version, or None."""
    try:
        return registry.find(node.get_type_name(), node.get_type_info().version_id)
    except UnsupportedOpError:
        return None


def _shape(output) -> tuple[int | None, ...] | None:
    shape = output.get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in shape)


def _table(node, index: int, widest: bool = False) -> int | None:
    """How many entries input ``index`` of ``node`` may pick from when it holds indices
    (the op's spec says: ``OpSpec.table_rows``), or None when it holds none. ``widest``:
    the largest size any index may reach, None where unknown (a bound to hold a user's
    indices to, never a safe size to make them in)."""
    spec = _spec(node)
    if spec is None or spec.table_rows is None:
        return None
    inputs = node.input_values()
    consts = {k: v for k, out in enumerate(inputs) if (v := _scalar_const(out)) is not None}
    attrs = Attrs({k: str(v) for k, v in node.get_attributes().items()}, spec.version)
    try:
        found = spec.table_rows([_shape(out) for out in inputs], attrs, consts,
                                **({"widest": True} if widest else {})).get(index)
    except (OvgatherError, ValueError, IndexError, TypeError):  # attributes it cannot read
        return None if widest else 1
    return found if not widest or (found is not None and found > 0) else None


def _carries(node, index: int) -> bool:
    """Whether ``node`` hands the values at input ``index`` on unchanged (rearranged,
    sliced, repeated or converted): the ops of :data:`_CARRY`, and the data input of an
    op that picks from a table."""
    kind = node.get_type_name()
    if kind in _CARRY:
        return _CARRY[kind] is None or index in _CARRY[kind]
    spec = _spec(node)
    return index == 0 and spec is not None and spec.table_rows is not None


def _readers(output) -> Iterable[tuple[object, int]]:
    for target in output.get_target_inputs():
        yield target.get_node(), target.get_index()


def _offset(node, index: int) -> int | None:
    """``x + c`` for an Add (or ``x - c`` for a Subtract) of a constant ``c`` read at input
    ``index``: the shift, or None when the op is not such a shift."""
    kind = node.get_type_name()
    if kind not in ("Add", "Subtract") or node.get_input_size() != 2:
        return None
    c = _scalar_const(node.input_value(1 - index))
    if c is None or (kind == "Subtract" and index == 1):
        return None
    return c if kind == "Add" else -c


def _index_ranges(param) -> tuple[int, int | None, str, str]:
    """The range ``[low, high)`` the input's values must lie in to index every table they
    reach (high None: none reached), the layer that bounds it, and the Range or Sin/Cos
    they reach as positions ("" when none)."""
    low, high, why, positions = 0, None, "", ""
    todo, seen = [(param.output(0), 0)], set()
    while todo:
        output, shift = todo.pop()
        for node, index in _readers(output):
            key = (node.get_name(), index, shift)  # get_name(): unique, unlike friendly
            if key in seen:
                continue
            seen.add(key)
            kind = node.get_type_name()
            table = _table(node, index)
            if table is not None:  # x + shift in [0, table)
                if high is None or table - shift < high:
                    high, why = table - shift, f"{kind} '{node.get_friendly_name()}'"
                low = max(low, -shift)
                continue
            if kind in ("Range", "Sin", "Cos"):
                positions = positions or f"{kind} '{node.get_friendly_name()}'"
                continue
            step = _offset(node, index)
            if step is not None:
                todo += [(o, shift + step) for o in node.outputs()]
            elif _carries(node, index):
                todo += [(o, shift) for o in node.outputs()]
            elif kind in ("Multiply", "MatMul") and (trig := _reaches_trig(node)):
                positions = positions or trig
    return low, high, why, positions


def _reaches_trig(node, depth: int = 4) -> str:
    """The Sin or Cos ``node``'s values reach within ``depth`` ops ("" when none): rotary
    embeddings, positions times frequencies, then sin and cos."""
    frontier = [node]
    for _ in range(depth):
        nxt = []
        for n in frontier:
            for o in n.outputs():
                for reader, _ in _readers(o):
                    if reader.get_type_name() in ("Sin", "Cos"):
                        return f"{reader.get_type_name()} '{reader.get_friendly_name()}'"
                    nxt.append(reader)
        frontier = nxt[:64]
    return ""


def _mask_use(param) -> str | None:
    """The layer where the input's values are used as a mask, or None."""
    frontier, seen = [param.output(0)], set()
    for _ in range(_MASK_DEPTH):
        nxt = []
        for output in frontier:
            for node, index in _readers(output):
                key = (node.get_name(), index)
                if key in seen:
                    continue
                seen.add(key)
                kind = node.get_type_name()
                where = f"{kind} '{node.get_friendly_name()}'"
                if (kind, index) in _MASK_USES or (kind, None) in _MASK_USES:
                    return where
                if kind == "Convert" and node.get_output_element_type(0).get_type_name() \
                        == "boolean":
                    return where
                if kind in _ARITHMETIC or _carries(node, index):
                    nxt += list(node.outputs())
        frontier = nxt
        if not frontier:
            break
    return None


def _named_positions(param) -> bool:
    """Whether a name of the input says positions (``position_ids``, ``cache_position``):
    read only for an input the graph shows indexing a table."""
    names = {param.get_friendly_name(), *param.output(0).get_names()}
    return any("position" in n.lower() for n in names)


def input_feeds(model) -> list[Feed]:
    """A :class:`Feed` for each Parameter of the ``openvino.Model``, in order."""
    feeds = []
    for param in model.get_parameters():
        etype = param.get_element_type()
        if etype.is_real():
            feeds.append(Feed("random"))
            continue
        if not (etype.is_integral() or etype.get_type_name() == "boolean"):
            feeds.append(Feed("zeros"))
            continue
        low, high, why, positions = _index_ranges(param)
        if high is not None and not positions and _named_positions(param):
            positions = why  # a table of positions: the graph says index, the name which
        if positions:
            feeds.append(Feed("positions", low, high, positions))
        elif high is not None:
            feeds.append(Feed("index", low, max(high, low + 1), why))
        elif (use := _mask_use(param)) is not None:
            feeds.append(Feed("mask", why=use))
        else:
            feeds.append(Feed("zeros"))
    return feeds


def feeds_at(model, shapes: Sequence[Sequence[int]]) -> list[Feed]:
    """:func:`input_feeds` of a copy of ``model`` reshaped to the static input ``shapes``
    (by Parameter position), where a table whose size follows an input's (a state of the
    batch's size, a buffer of the sequence's) has a size; of ``model`` itself when
    OpenVINO cannot reshape the copy."""
    from .core import openvino

    ov, copy = openvino(), model.clone()
    try:
        copy.reshape({p.output(0): ov.PartialShape([int(d) for d in s])
                      for p, s in zip(copy.get_parameters(), shapes, strict=True)})
    except RuntimeError:
        return input_feeds(model)
    return input_feeds(copy)


def merge_feeds(a: Feed, b: Feed) -> Feed:
    """One feed that suits an input of two models: the narrower index range (positions
    when either model reads positions), else the first of index, mask, random, zeros.

    >>> merge_feeds(Feed("index", 0, 500), Feed("positions", 0, None)).describe()
    'positions 0, 1, … along the last axis (below 500)'
    """
    ranged = ("index", "positions")
    if a.kind in ranged and b.kind in ranged:
        highs = [h for h in (a.high, b.high) if h is not None]
        low = max(a.low, b.low)
        high = max(min(highs), low + 1) if highs else None
        kind = "positions" if "positions" in (a.kind, b.kind) else "index"
        return Feed(kind, low, high, a.why or b.why)
    order = ("positions", "index", "mask", "random", "zeros")
    return min(a, b, key=lambda f: order.index(f.kind))


def make_array(feed: Feed, shape: Sequence[int], dtype: np.dtype,
               rng: np.random.Generator, vary: bool = False) -> np.ndarray:
    """Seeded values of ``shape`` and ``dtype`` for ``feed``. ``vary``: rows (along the
    first axis) that differ where the values would repeat: an integer or boolean input
    that feeds nothing known gets random zeros and ones instead of zeros, and positions
    start at the row's number (``r, r + 1, …``, kept inside their table).

    >>> make_array(Feed("mask"), (3, 4), np.dtype("int64"), np.random.default_rng(0))
    array([[1, 1, 1, 0],
           [1, 1, 0, 0],
           [1, 1, 1, 1]])
    """
    dtype = np.dtype(dtype)
    shape = tuple(int(d) for d in shape)
    if dtype.kind == "f" or feed.kind == "random":
        return rng.standard_normal(shape, dtype=np.float32).astype(dtype, copy=False)
    if feed.kind == "index":
        high = feed.high if feed.high is not None else feed.low + 1
        lo, hi = _clip_range(feed.low, high, dtype)
        return rng.integers(lo, hi, size=shape, dtype=np.int64).astype(dtype)
    if feed.kind == "positions" and shape:
        values = np.arange(shape[-1], dtype=np.int64)
        if vary and len(shape) > 1:  # row r starts at r
            values = values + np.arange(shape[0], dtype=np.int64).reshape(
                (-1,) + (1,) * (len(shape) - 1))
        if feed.high is not None:
            lo, hi = _clip_range(feed.low, feed.high, dtype)
            values = lo + values % (hi - lo)
        else:
            values = values + feed.low
        return np.ascontiguousarray(np.broadcast_to(values, shape)).astype(dtype)
    if feed.kind == "mask" and shape:
        return _mask(shape).astype(dtype)
    if vary and feed.kind == "zeros":
        return rng.integers(0, 2, size=shape, dtype=np.int64).astype(dtype)
    return np.zeros(shape, dtype=dtype)


def _clip_range(low: int, high: int, dtype: np.dtype) -> tuple[int, int]:
    """``[low, high)`` inside what ``dtype`` holds, never empty."""
    info = np.iinfo(dtype) if dtype.kind in "iu" else np.iinfo(np.uint8)
    if dtype.kind == "b":
        info = np.iinfo(np.uint8)
        high = min(high, 2)
    lo = min(max(low, int(info.min)), int(info.max))
    hi = min(max(high, lo + 1), int(info.max) + 1)
    return lo, hi


def _mask(shape: tuple[int, ...]) -> np.ndarray:
    """Ones; row ``r`` (over the leading axes) has its last ``(r + 1) % min(S, 3)``
    positions zero, so that padding is seen and no row is all zeros."""
    size = shape[-1]
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    mask = np.ones((rows, size), dtype=np.int64)
    span = min(size, 3)
    for r in range(rows):
        pad = (r + 1) % span if span > 1 else 0
        if pad:
            mask[r, size - pad:] = 0
    return mask.reshape(shape)


def make_arrays(feeds: Sequence[Feed], shapes: Sequence[Sequence[int]],
                dtypes: Sequence[np.dtype], seed: int, k: int) -> list[np.ndarray]:
    """One array per input, in order, from one stream seeded by ``(seed, k)`` (``k``: the
    how-many-th input sizes tried), as validate seeds its inputs."""
    rng = np.random.default_rng([seed, k])
    return [make_array(f, s, d, rng) for f, s, d in zip(feeds, shapes, dtypes, strict=True)]


def feeds_by_name(model, sizes: Mapping[str, Sequence[int]] | None = None
                  ) -> Mapping[str, Feed]:
    """:func:`input_feeds` (:func:`feeds_at` when every input has one of ``sizes``) by
    Parameter friendly name."""
    params = model.get_parameters()
    names = [p.get_friendly_name() for p in params]
    if sizes is not None and all(n in sizes for n in names):
        feeds = feeds_at(model, [sizes[n] for n in names])
    else:
        feeds = input_feeds(model)
    return dict(zip(names, feeds, strict=True))
