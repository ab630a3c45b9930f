"""What ``stats`` returns: :class:`LayerCost` per layer and the :class:`StatsReport` that
adds them up by block and by op type (its JSON shape: docs/json.md, docs/schema/stats.json).

A number is an int, or with ``symbols`` an expression in the user's dim names (shown as
text, ``2*B*S*4096+…``), or None when it is not known: a layer whose dims are dynamic
(``dynamic``), or one ovgather has no formula or shape rule for (``uncounted``: never
counted as zero). A total with an unknown part is None too; ``counted`` says how many
layers it holds.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["LayerCost", "StatsReport", "human", "as_json_value", "COST_STATUSES"]

#: a layer's status in the report
COST_STATUSES = ("counted", "dynamic", "uncounted")


class LayerCost:
    """One layer's cost. ``status``: counted, dynamic (a dim it needs is not known) or
    uncounted (no shape rule or formula: its cost is not known, never zero)."""

    __slots__ = ("id", "name", "type", "version", "block", "status", "macs", "flops",
                 "moved", "out_bytes", "note", "params", "weight_bytes", "quantized", "live")

    def __init__(self, id: str, name: str, type: str, version: str | None, block: str,
                 status: str, macs: Any, flops: Any, moved: Any, out_bytes: Any,
                 note: str = "") -> None:
        self.id, self.name, self.type, self.version = id, name, type, version
        self.block, self.status, self.note = block, status, note
        self.macs, self.flops, self.moved, self.out_bytes = macs, flops, moved, out_bytes
        self.params = 0
        self.weight_bytes = 0
        self.quantized = False
        self.live: Any = None  # the live activation bytes while it runs

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "version": self.version,
                "block": self.block, "status": self.status, "macs": as_json_value(self.macs),
                "flops": as_json_value(self.flops), "moved_bytes": as_json_value(self.moved),
                "output_bytes": as_json_value(self.out_bytes), "params": self.params,
                "weight_bytes": self.weight_bytes, "quantized": self.quantized,
                "live_bytes": as_json_value(self.live), "note": self.note}

    def __repr__(self) -> str:
        return f"LayerCost({self.name!r}, {self.type}, flops={as_json_value(self.flops)})"


def as_json_value(value: Any) -> int | str | None:
    """An int, None, or an expression's text."""
    if value is None or isinstance(value, int):
        return value
    return str(value)


def _add(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a + b


def _max(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    return b if b > a else a


class _Group:
    """The sums over a set of layers (a block, an op type, the model)."""

    __slots__ = ("layers", "macs", "flops", "moved", "out_bytes", "params", "weight_bytes",
                 "peak", "quantized", "statuses")

    def __init__(self) -> None:
        self.layers = 0
        self.macs: Any = 0
        self.flops: Any = 0
        self.moved: Any = 0
        self.out_bytes: Any = 0
        self.params = 0
        self.weight_bytes = 0
        self.peak: Any = 0
        self.quantized = 0
        self.statuses = dict.fromkeys(COST_STATUSES, 0)

    def add(self, lc: LayerCost) -> None:
        self.layers += 1
        self.statuses[lc.status] += 1
        if lc.status == "counted":
            self.macs, self.flops = _add(self.macs, lc.macs), _add(self.flops, lc.flops)
            self.moved = _add(self.moved, lc.moved)
        elif lc.status == "dynamic":
            self.macs = self.flops = None
        self.out_bytes = _add(self.out_bytes, lc.out_bytes)
        self.params += lc.params
        self.weight_bytes += lc.weight_bytes
        self.peak = _max(self.peak, lc.live)
        self.quantized += lc.quantized

    def to_dict(self, env: Mapping[str, int] | None = None) -> dict[str, Any]:
        out = {"layers": self.layers, **self.statuses, "macs": as_json_value(self.macs),
               "flops": as_json_value(self.flops), "moved_bytes": as_json_value(self.moved),
               "output_bytes": as_json_value(self.out_bytes), "params": self.params,
               "weight_bytes": self.weight_bytes, "peak_activation_bytes":
               as_json_value(self.peak), "quantized_layers": self.quantized}
        if env:
            out["at"] = {key: _evaluate(getattr(self, attr), env) for key, attr in
                         (("macs", "macs"), ("flops", "flops"), ("output_bytes", "out_bytes"))}
        return out


def _evaluate(value: Any, env: Mapping[str, int]) -> int | None:
    if value is None or isinstance(value, int):
        return value
    try:
        return value.evaluate(env)
    except KeyError:  # a name the sizes do not set
        return None


class StatsReport:
    """What a model costs (:func:`ovgather.stats`): ``layers`` (:class:`LayerCost`, in
    execution order), ``total``, ``by_block`` and ``by_type`` (dicts of sums),
    ``weights_by_type``, ``peak_activation`` and ``uncounted`` (the layers with no cost).
    ``to_dict()`` is the JSON of ``ovgather stats --json`` (docs/json.md)."""

    def __init__(self, path: str | None, layers: list[LayerCost], weights: list,
                 peak_known: bool = True,
                 symbols: dict | None = None, environment: dict | None = None) -> None:
        self.path, self.layers, self.symbols = path, layers, symbols
        self.environment = environment or {}
        self.peak_known = peak_known
        self.total = _Group()
        self._blocks: dict[str, _Group] = {}
        self._types: dict[str, _Group] = {}
        for lc in layers:
            self.total.add(lc)
            group = self._blocks.get(lc.block)
            if group is None:
                group = self._blocks[lc.block] = _Group()
            group.add(lc)
            group = self._types.get(lc.type)
            if group is None:
                group = self._types[lc.type] = _Group()
            group.add(lc)
        if not peak_known:
            self.total.peak = None
        self.weights_by_type: dict[str, dict[str, int]] = {}
        for _, record, _ in weights:
            row = self.weights_by_type.setdefault(record.element_type,
                                                  {"consts": 0, "params": 0, "bytes": 0})
            row["consts"] += 1
            row["params"] += record.params
            row["bytes"] += record.nbytes

    # -- reading: the whole model's totals, and the groups ------------------------------
    flops = property(lambda self: self.total.flops, doc="FLOPs of the whole model")
    macs = property(lambda self: self.total.macs, doc="MACs of the whole model")
    weight_bytes = property(lambda self: self.total.weight_bytes, doc="each Const once")
    params = property(lambda self: self.total.params, doc="weight elements, each Const once")
    peak_activation = property(lambda self: self.total.peak, doc="the most live bytes")
    by_block = property(lambda self: self._blocks, doc="block name -> its totals")
    by_type = property(lambda self: self._types, doc="op type -> its totals")

    @property
    def uncounted(self) -> list[LayerCost]:
        return [lc for lc in self.layers if lc.status == "uncounted"]

    @property
    def ok(self) -> bool:
        """True when every layer has a cost (none uncounted)."""
        return not any(lc.status == "uncounted" for lc in self.layers)

    def evaluate(self, value: Any, env: Mapping[str, int] | None = None) -> int | None:
        """``value`` (a total) at the names' values ``env`` (default: at ``--shape``)."""
        return _evaluate(value, self.environment if env is None else env)

    def to_dict(self, layers: bool = True) -> dict[str, Any]:
        env = self.environment if self.symbols else None
        return {
            "path": self.path, "symbols": self.symbols, "at": env or None,
            "ok": self.ok, "total": self.total.to_dict(env),
            "weights_by_type": self.weights_by_type,
            "by_block": [{"block": name, **g.to_dict(env)} for name, g in self._blocks.items()],
            "by_type": [{"type": name, **g.to_dict(env)} for name, g in
                        sorted(self._types.items())],
            "uncounted": [{"id": lc.id, "name": lc.name, "type": lc.type,
                           "version": lc.version, "why": lc.note} for lc in self.uncounted],
            "layers": [lc.to_dict() for lc in self.layers] if layers else None,
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def __repr__(self) -> str:
        return (f"StatsReport({self.path!r}: {len(self.layers)} layers, "
                f"flops={as_json_value(self.flops)}, weights={self.weight_bytes} bytes)")

    def _repr_html_(self) -> str:
        """The totals and the 30 costliest blocks (a notebook shows this)."""
        t = self.total
        rows = sorted(self._blocks.items(), key=lambda kv: _rank(kv[1].flops), reverse=True)
        head = "".join(f"<th>{h}</th>" for h in ("block", "layers", "FLOPs", "MACs",
                                                  "weights", "peak activation"))
        body = "".join(
            f"<tr><td>{html.escape(name)}</td><td>{g.layers}</td><td>{human(g.flops)}</td>"
            f"<td>{human(g.macs)}</td><td>{human(g.weight_bytes, 'B')}</td>"
            f"<td>{human(g.peak, 'B')}</td></tr>" for name, g in rows[:30])
        more = (f"<p>… and {len(rows) - 30} more blocks (to_dict() has them all)</p>"
                if len(rows) > 30 else "")
        return (f"<div><b>{html.escape(str(self.path or 'model'))}</b>: {t.layers} layers, "
                f"{human(t.flops, 'FLOPs')}, {human(t.macs, 'MACs')}, {human(t.params)} params, "
                f"{human(t.weight_bytes, 'B')} weights, peak activation "
                f"{human(t.peak, 'B')}<table><tr>{head}</tr>{body}</table>{more}</div>")


def _rank(value: Any) -> float:
    if value is None:
        return float("inf")
    if isinstance(value, int):
        return float(value)
    return float("inf")


def human(value: Any, unit: str = "") -> str:
    """``1.23 G`` for a count, ``1.23 MB`` with ``unit='B'`` (powers of 1000); an
    expression as its text, None as ``?``.

    >>> human(1234567), human(999, "B"), human(None), human(2_500_000_000, "B")
    ('1.23 M', '999 B', '?', '2.50 GB')
    """
    if value is None:
        return "?"
    if not isinstance(value, int):
        return f"{value} {unit}".rstrip()
    for size, prefix in ((10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "K")):
        if abs(value) >= size:
            return f"{value / size:.2f} {prefix}{unit}"
    return f"{value} {unit}".rstrip()
