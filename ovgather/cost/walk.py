"""``stats``: one pass over the layers ``check`` inferred, putting a cost on each.

The shapes are ovgather's own (``infer.check``, with ``--shape`` overrides); with
``symbols`` the dims are expressions in the user's names (``infer.infer_symbols``) and the
FLOPs, MACs and output bytes with them. Each layer gets its formula (``flops.py``), its
output bytes, the weights it owns (``memory.py``), its block (``blocks.py``) and whether
it computes on quantized data; the report (``report.py``) adds them up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import UsageError
from ..infer.report import port_type
from ..ops.core import registry
from ..ops.core.spec import openvino_type
from ..ops.core.symbolic import Expr
from ..shapes import ShapeLike
from .blocks import assign_blocks
from .flops import BODIES, DATA_MOVEMENT, FORMULAS, Layer, Uncountable, elements, layer_cost
from .memory import constant_layers, live_peaks, owners, tensor_bytes, weight_of
from .report import LayerCost, StatsReport

__all__ = ["stats", "LOW_BIT_TYPES"]

#: element types of quantized or compressed-integer weights (f16/bf16 are not quantized)
LOW_BIT_TYPES = frozenset(("u8", "i8", "u4", "i4", "nf4", "u2", "u3", "u6", "u1",
                           "f8e4m3", "f8e5m2", "f8e8m0", "f4e2m1"))
#: the layers a quantized input passes through on its way (a FakeQuantize's Reshape)
_PASS_THROUGH = frozenset(("Reshape", "Transpose", "Squeeze", "Unsqueeze", "Convert",
                           "Subtract", "Multiply", "Broadcast", "Concat",
                           *registry.family("gather")))
_NOT_RUN = ("unchecked", "invalid", "unknown")
_CONSTS = frozenset(("Const", "Constant"))


def stats(model: Any, shapes: Mapping[str, ShapeLike] | None = None,
          symbols: Mapping[str, str | Sequence] | None = None,
          depth: int | None = None) -> StatsReport:
    """What ``model`` costs: every layer's MACs, FLOPs, weights and output bytes, the
    peak activation memory, by layer, block and op type (docs/cli/stats.md).

    ``model``: a graph (``read_ir``), or the path of an IR .xml or an .onnx model.
    ``shapes``: Parameter and state shape overrides, as :func:`~ovgather.check` takes them.
    ``symbols``: names for input dims (``{"input_ids": "[B,S]"}``, a state's by its
    ``variable_id``): the totals become expressions in them, evaluated at ``shapes`` when
    those make the names static.
    ``depth``: keep the first N dotted parts of every block name.
    """
    G = _graph(model)
    from ..infer import check

    report = check(G, shapes)
    sym = None
    env: dict[str, int] = {}
    if symbols:
        from ..infer import infer_symbols

        sym = infer_symbols(G, symbols)
        if shapes:
            env = _environment(G, sym, report, symbols)
    from ..ir.reader import gc_paused

    with gc_paused():  # a big graph makes every collection a long one, for no garbage
        costs = _Costing(G, report, sym, depth)
        layers = costs.run()
        return StatsReport(
            path=G.graph.get("xml_path") or G.graph.get("source_path"), layers=layers,
            weights=costs.weights, peak_known=costs.peak_known,
            symbols=dict(symbols) if symbols else None, environment=env)


def _graph(model: Any) -> Any:
    if not isinstance(model, str) and not hasattr(model, "__fspath__"):
        if not hasattr(model, "_node"):
            raise UsageError(f"stats takes a graph (og.read_ir) or a model path, not a "
                             f"{type(model).__name__}")
        return model
    path = str(model)
    if path.lower().endswith(".onnx"):
        from ..runtime.interop import load_model

        return load_model(path)
    from ..ir import read_layer_graph

    return read_layer_graph(path)


def _environment(G: Any, sym: dict[str, list], report: Any,
                 symbols: Mapping[str, Any]) -> dict[str, int]:
    """The names' values at the numeric shapes: a dim of a Parameter, or of a state the
    symbols name (a cache length), written as one name takes the number the numeric walk
    gives it there."""
    env: dict[str, int] = {}
    shapes = {lr.id: lr.inferred_shapes for lr in report.layers}
    for node, attrs in G._node.items():
        kind = openvino_type(attrs["type"] or "")
        named = kind == "Parameter" or (kind == "ReadValue" and (
            attrs.get("data") or {}).get("variable_id") in symbols)
        if not named or node not in sym or node not in shapes:
            continue
        for s, shape in zip(sym[node], shapes[node], strict=False):
            if s.dims is None or shape.dims is None:
                continue
            for e, d in zip(s.dims, shape.dims, strict=False):
                atom = e.atom
                if atom is not None and atom[0] == "n" and d.lo == d.hi:
                    env[atom[1]] = d.lo
    return env


_DIMS: dict[Any, tuple | None] = {}


def _numeric(shape: Any) -> tuple | None:
    """A PartialShape as a tuple of ints (None for a dim not static; None for a dynamic
    rank)."""
    found = _DIMS.get(shape)
    if found is None and shape not in _DIMS:
        found = None if shape.dims is None else tuple(
            d.lo if d.lo == d.hi else None for d in shape.dims)
        if len(_DIMS) < 100_000:
            _DIMS[shape] = found
    return found


def _symbolic(s: Any) -> tuple | None:
    if s is None or s.dims is None:
        return None
    return tuple(e.const if e.const is not None else e for e in s.dims)


class _Costing:
    """The pass over one model (and, for a layer with bodies, over each body)."""

    def __init__(self, G: Any, report: Any, sym: dict | None, depth: int | None) -> None:
        self.G, self.sym, self.depth = G, sym, depth
        self.results = {lr.id: lr for lr in report.layers}
        self.weights: list[tuple[str, Any, str]] = []  # (owner id, record, block)
        self.peak_known = True
        self.seen: set[Any] = set()  # the storages counted

    def run(self) -> list[LayerCost]:
        G = self.G
        order = [lr.id for lr in self.results.values() if "/" not in lr.id]
        layers = self._graph(G, order, "", self._dims_top)
        return layers

    # -- shapes ------------------------------------------------------------------------
    def _dims_top(self, node: str) -> list[tuple | None]:
        if self.sym is not None:
            found = self.sym.get(node)
            if found is not None:
                return [_symbolic(s) for s in found]
        lr = self.results.get(node)
        return [] if lr is None else [_numeric(s) for s in lr.inferred_shapes]

    def _dims_numeric(self, key: str) -> list[tuple | None]:
        lr = self.results.get(key)
        return [] if lr is None else [_numeric(s) for s in lr.inferred_shapes]

    # -- one graph -----------------------------------------------------------------------
    def _graph(self, G: Any, order: list[str], prefix: str, dims_of) -> list[LayerCost]:
        nodes, pred = G._node, G._pred
        step = {node: i for i, node in enumerate(order)}
        outs: dict[str, list] = {node: dims_of(prefix + node) for node in order}
        port_index: dict[str, dict[int, int]] = {}
        readers: dict[str, list[str]] = {}
        last_read: dict[tuple[str, int], int] = {}
        kept: set[tuple[str, int]] = set()
        ins: dict[str, list] = {}
        for node in order:
            attrs = nodes[node]
            by_port: dict[int, tuple | None] = {}
            is_result = attrs["type"] == "Result"
            for u, keys in pred[node].items():
                index = port_index.get(u)
                if index is None:
                    index = port_index[u] = {p["id"]: i for i, p in
                                             enumerate(nodes[u]["outputs"])}
                made = outs.get(u, ())
                for from_port, to_port in keys:
                    i = index.get(from_port)
                    by_port[to_port] = made[i] if i is not None and i < len(made) else None
                    key = (u, from_port)
                    if is_result:
                        kept.add(key)
                    last_read[key] = step[node]
                readers.setdefault(u, []).append(node)
            ins[node] = [by_port.get(p["id"]) for p in attrs["inputs"]]
        constant = constant_layers(order, nodes, pred)
        owner = owners(order, constant, readers)
        names = {n: "" if nodes[n]["type"] == "Result" else nodes[n]["name"] for n in order}
        blocks = assign_blocks(order, names, readers,
                               lambda n: pred[n], self.depth)
        layers: list[LayerCost] = []
        produced: dict[str, list] = {}
        by_id: dict[str, LayerCost] = {}
        numeric_only = self.sym is None or bool(prefix)
        for node in order:
            attrs = nodes[node]
            if attrs["type"] in _CONSTS:  # the usual layer of a model: nothing to count
                lc = LayerCost(prefix + node, attrs["name"], attrs["type"],
                               attrs.get("version"), blocks[node], "counted", 0, 0, 0, 0)
                layers.append(lc)
                by_id[node] = lc
                continue
            ports = attrs["outputs"]
            sizes = [_port_bytes(p, d) for p, d in zip(ports, outs[node], strict=False)]
            lc = self._layer(G, node, attrs, prefix, ins[node], outs[node], blocks[node],
                             sizes)
            layers.append(lc)
            by_id[node] = lc
            if node not in constant:
                if not numeric_only:
                    sizes = [_port_bytes(p, d) for p, d in
                             zip(ports, self._dims_numeric(node), strict=False)]
                produced[node] = [(p["id"], b) for p, b in zip(ports, sizes, strict=False)]
        for node in order:
            if nodes[node]["type"] in _CONSTS:
                self._weight(by_id[owner.get(node, node)], weight_of(node, nodes[node]),
                             count=not prefix)
            elif not prefix and nodes[node]["type"] in BODIES:
                for n, a in _body_layers(nodes[node], f"{node}/"):
                    if a["type"] in ("Const", "Constant"):
                        self._weight(by_id[node], weight_of(n, a))
        self._fake_quantized(order, nodes, pred, by_id)
        if not prefix:
            steps, known = live_peaks(order, produced, last_read, kept)
            self.peak_known = known
            for node, live in zip(order, steps, strict=True):
                by_id[node].live = live
        return layers

    def _weight(self, holder: LayerCost, record: Any, count: bool = True) -> None:
        """Put a Const's storage on the layer that owns it (once per storage)."""
        if record.element_type in LOW_BIT_TYPES and holder.type != "Result":
            holder.quantized = True
        if not count or record.key in self.seen:
            return
        self.seen.add(record.key)
        holder.params += record.params
        holder.weight_bytes += record.nbytes
        self.weights.append((holder.id, record, holder.block))

    def _fake_quantized(self, order, nodes, pred, by_id) -> None:
        """A layer fed by a FakeQuantize (through reshapes, converts and the like)."""
        if not any(nodes[node]["type"] == "FakeQuantize" for node in order):
            return
        quant: dict[str, bool] = {}
        for node in order:
            op = nodes[node]["type"]
            reached = any(quant.get(u, False) for u in pred[node])
            quant[node] = op == "FakeQuantize" or (op in _PASS_THROUGH and reached)
            if reached and op != "FakeQuantize":
                by_id[node].quantized = True

    def _layer(self, G, node, attrs, prefix, ins, outs, block, sizes) -> LayerCost:
        op = _canonical(attrs["type"])
        key = prefix + node
        lr = self.results.get(key)
        status = "uncounted"
        note = ""
        macs: Any = 0
        flops: Any = 0
        if lr is not None and lr.status in _NOT_RUN and op not in ("Parameter", "Constant"):
            note = (f"{lr.status}: ovgather has no shape rule for {op}"
                    if lr.status == "unchecked" else f"{lr.status}: {lr.message}")
        elif op in BODIES:
            status, macs, flops, note = self._bodies(G, node, attrs, key, ins, outs)
        elif op in DATA_MOVEMENT:
            status = "counted"
        elif op in FORMULAS:
            try:
                found = layer_cost(Layer(op, attrs.get("data"), ins, outs))
            except Uncountable as err:
                found, note = None, str(err)
            if found is None:
                status, macs, flops = "dynamic", None, None
                note = note or "a dim it needs is not known: give --shape or --symbols"
            else:
                status, (macs, flops) = "counted", found
        else:
            note = f"ovgather has no FLOPs formula for {op}"
        if status == "uncounted":
            macs = flops = None
        out_bytes: Any = 0
        for b in sizes:
            out_bytes = _plus(out_bytes, b)
        moved = out_bytes if (status == "counted" and flops == 0 and op not in
                              ("Parameter", "Const", "Constant", "Result")) else 0
        if self.sym is not None:
            macs, flops, moved, out_bytes = (_simple(macs), _simple(flops), _simple(moved),
                                             _simple(out_bytes))
        return LayerCost(key, attrs["name"], attrs["type"], attrs.get("version"), block, status,
                         macs, flops, moved, out_bytes, note)

    def _bodies(self, G, node, attrs, key, ins, outs) -> tuple[str, Any, Any, str]:
        """A TensorIterator or Loop: its body's FLOPs times the iterations; an If: the
        larger branch. Counted with the numeric shapes of the body's last run."""
        bodies = attrs.get("bodies") or {}
        totals: list[tuple[Any, Any]] = []
        for name, body in bodies.items():
            prefix = f"{key}/{name}/"
            order = [k[len(prefix):] for k in self.results
                     if k.startswith(prefix) and "/" not in k[len(prefix):]]
            inner = self._graph(body, order, prefix, self._dims_numeric)
            if any(lc.status == "uncounted" for lc in inner):
                return "uncounted", None, None, f"its {name} holds a layer ovgather cannot count"
            macs = flops = 0
            for lc in inner:
                macs, flops = _plus(macs, lc.macs), _plus(flops, lc.flops)
            totals.append((macs, flops))
        if not totals:
            return "uncounted", None, None, "it holds no body"
        if attrs["type"] == "If":
            if any(m is None for pair in totals for m in pair):
                return "dynamic", None, None, "a branch's size is not known"
            macs, flops = max(totals, key=lambda t: t[1])
            return "counted", macs, flops, "the larger branch"
        macs, flops = totals[0]
        runs = _iterations(G, attrs, ins, outs)
        if runs is None:
            return "uncounted", None, None, "the number of iterations is known only at run time"
        if macs is None or flops is None:
            return "dynamic", None, None, "the body's size is not known"
        return "counted", macs * runs, flops * runs, f"{runs} iterations"


def _body_layers(attrs: Mapping[str, Any], prefix: str) -> list[tuple[str, Any]]:
    """``(path id, node dict)`` of every layer in the bodies of a layer, at any depth."""
    found = []
    for name, body in (attrs.get("bodies") or {}).items():
        for n, a in body._node.items():
            found.append((f"{prefix}{name}/{n}", a))
            found += _body_layers(a, f"{prefix}{name}/{n}/")
    return found


def _iterations(G: Any, attrs: Mapping[str, Any], ins: list, outs: list) -> int | None:
    """How often a TensorIterator or Loop runs its body: a sliced input's length over its
    part size, a concatenated output's, or a Loop's constant trip count."""
    maps = (attrs.get("port_maps") or {}).get("body") or {}
    for side, dims in (("inputs", ins), ("outputs", outs)):
        for entry in maps.get(side, ()):
            axis = entry.get("axis")
            port = entry.get("external_port_id")
            if axis is None or port is None:
                continue
            index = _port_index(attrs[side], port)
            shape = dims[index] if index is not None and index < len(dims) else None
            if shape is None or not isinstance(shape[axis], int):
                continue
            part = abs(entry.get("part_size") or 1)
            return shape[axis] // part
    if attrs["type"] == "Loop":
        return _trip_count(G, attrs)
    return None


def _port_index(ports: list, port_id: int) -> int | None:
    for i, p in enumerate(ports):
        if p["id"] == port_id:
            return i
    return None


def _trip_count(G: Any, attrs: Mapping[str, Any]) -> int | None:
    """A Loop's trip count when its input 0 is a Const (not -1)."""
    first = attrs["inputs"][0]["id"] if attrs["inputs"] else None
    node = next((n for n, a in G._node.items() if a is attrs), None)
    if node is None or first is None:
        return None
    for u, keys in G._pred[node].items():
        if any(to_port == first for _, to_port in keys) and \
                G._node[u]["type"] in ("Const", "Constant"):
            from ..ir import const_value

            value = const_value(G, u)
            count = int(value.reshape(-1)[0]) if value.size else -1
            return count if count >= 0 else None
    return None


_CANONICAL: dict[str, str] = {}


def _canonical(op: str) -> str:
    """The op type as OpenVINO's reader reads it (``SoftMax`` is ``Softmax``)."""
    found = _CANONICAL.get(op)
    if found is None:
        found = _CANONICAL[op] = openvino_type(op) or op
    return found


_PRECISION: dict[Any, str] = {}


def _port_bytes(port: Mapping[str, Any], dims: tuple | None) -> Any:
    """The bytes of an output port's tensor of ``dims`` (None when not known)."""
    precision = port.get("precision")
    et = _PRECISION.get(precision)
    if et is None:
        et = _PRECISION[precision] = port_type(port)
    if dims is None:
        return None
    total: Any = 1
    for d in dims:
        if d is None:
            return None
        total = d * total
    return tensor_bytes(total, et)


def _elements(dims: tuple | None) -> Any:
    try:
        return elements(dims)
    except TypeError:
        return None


def _plus(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a + b


def _simple(value: Any) -> Any:
    """An expression that is a number, as the number."""
    if isinstance(value, Expr) and value.const is not None:
        return value.const
    return value
