"""What ``check`` says of each layer: :class:`LayerResult`, :class:`CheckReport` and the
comparison of declared dims with inferred shapes (statuses in docs/json.md)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from ..element_types import element_type_name
from ..errors import UnsupportedOpError
from ..ops.core import registry
from ..shapes import Dimension, PartialShape

__all__ = ["STATUSES", "PROBLEMS", "known_ops", "LayerResult", "CheckReport", "rule_words",
           "dims_fit", "compare_ports", "follow_resize", "declared_text", "declared_shape",
           "port_type"]

STATUSES = ("ok", "mismatch", "invalid", "unchecked", "unknown")
#: The statuses that fail a model's check (exit 1): ``unknown`` is a layer OpenVINO's
#: reader refuses, so it cannot read the model.
PROBLEMS = ("mismatch", "invalid", "unknown")
_PROBLEM_SET = frozenset(PROBLEMS)
_STATUS = attrgetter("status")

def known_ops() -> list[str]:
    """The op types whose output shapes ovgather infers (others are ``unchecked``, or
    ``unknown`` when OpenVINO's reader refuses them too)."""
    return sorted({"Parameter", "Const", "Constant", *registry.known_types()})


class LayerResult:
    """One layer's verdict: its declared and inferred output shapes (texts, one per port).

    The texts are built on first use: a clean 20k-layer model reports only a summary.
    """

    __slots__ = ("id", "name", "type", "version", "status", "line", "message",
                 "declared_dims", "inferred_shapes")

    def __init__(self, id: str, name: str, type: str, version: str | None, status: str,
                 declared_dims: list[tuple[int, ...]], inferred_shapes: list[PartialShape],
                 line: int | None, message: str = "") -> None:
        self.id, self.name, self.type, self.version = id, name, type, version
        self.status, self.line, self.message = status, line, message
        self.declared_dims = declared_dims
        self.inferred_shapes = inferred_shapes

    @property
    def declared(self) -> list[str]:
        """The declared dims as shape texts (``-1`` shown as ``?``)."""
        return [declared_text(d, s) for d, s in
                zip(self.declared_dims, self.inferred_shapes, strict=False)]

    @property
    def inferred(self) -> list[str]:
        """The inferred shapes as OpenVINO prints them."""
        return [str(s) for s in self.inferred_shapes]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.name, "type": self.type, "version": self.version,
            "status": self.status, "declared": self.declared, "inferred": self.inferred,
            "line": self.line, "message": self.message,
        }

    def __repr__(self) -> str:
        return f"LayerResult({self.to_dict()!r})"


@dataclass
class CheckReport:
    """The result of :func:`check` for one model (one ``models`` entry of the JSON in docs/json.md).

    ``to_dict(all_layers=False)`` lists only the layers that are not ``ok`` (as the CLI
    does without ``--all``); ``to_json()`` is the same as JSON text.
    """

    path: str | None
    ir_version: int | None
    layers: list[LayerResult] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for status, n in Counter(map(_STATUS, self.layers)).items():  # at C speed
            counts[status] += n
        return {"layers": len(self.layers), **counts}

    @property
    def ok(self) -> bool:
        """True when no layer is ``mismatch``, ``invalid`` or ``unknown`` (unchecked is not
        a problem: OpenVINO reads the layer, ovgather only has no rule for it)."""
        return _PROBLEM_SET.isdisjoint(map(_STATUS, self.layers))

    def unread(self) -> list[LayerResult]:
        """The layers OpenVINO's reader refuses (``unknown``): it cannot read the model."""
        return [lr for lr in self.layers if lr.status == "unknown"]

    def problems(self) -> list[LayerResult]:
        """The layers that are not ``ok``, in walk order."""
        return [lr for lr in self.layers if lr.status != "ok"]

    def to_dict(self, all_layers: bool = False) -> dict[str, Any]:
        shown = self.layers if all_layers else self.problems()
        return {
            "path": self.path, "ir_version": self.ir_version, "summary": self.summary,
            "layers": [lr.to_dict() for lr in shown],
        }

    def to_json(self, all_layers: bool = False, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(all_layers), indent=indent)




def follow_resize(report: CheckReport, original: CheckReport) -> list[LayerResult]:
    """``check --shape``: make the layers of ``report`` (the check at new input shapes)
    whose declared dims contradict it only because the inputs were resized ``ok``: at the
    original input shapes (``original``) they were ``ok``, so their dims follow the old
    inputs, and what changed is listed as a change, not a mismatch. Invalid layers are put
    first (what stops the model at the new shapes), the rest keep walk order. Returns the
    layers made ``ok``."""
    before = {lr.id: lr.status for lr in original.layers}
    followed = []
    for lr in report.layers:
        if lr.status == "mismatch" and before.get(lr.id) == "ok":
            lr.status = "ok"
            lr.message = (f"the declared {' '.join(lr.declared)} follow the original input "
                          f"shapes; at the new ones OpenVINO gives {' '.join(lr.inferred)}")
            followed.append(lr)
    report.layers.sort(key=lambda lr: lr.status != "invalid")
    return followed


# -- comparison --------------------------------------------------------------------------
def dims_fit(declared: tuple[int, ...], inferred: PartialShape) -> bool:
    dims = inferred.dims
    if dims is None or not declared:
        return True
    if len(dims) != len(declared):
        return False
    for v, d in zip(declared, dims, strict=False):
        if v != -1 and not d.lo <= v <= d.hi:
            return False
    return True


def rule_words(attrs: Mapping[str, Any]) -> str:
    """How the output shape of this layer is computed, in words (its spec's words)."""
    op = attrs.get("type")
    try:
        spec = registry.find(op, attrs.get("version"))
    except UnsupportedOpError:
        spec = None
    if spec is None or not spec.words:
        return f"OpenVINO's {op} ({attrs.get('version')}) shape rule gives"
    data = attrs.get("data") or {}
    extra = ", ".join(f"{k}={data[k]}" for k in ("batch_dims", "axis") if k in data)
    return f"{spec.words}{f' ({extra})' if extra else ''}, which is"


def compare_ports(declared: list[tuple[int, ...]], inferred: list[PartialShape],
             attrs: Mapping[str, Any] | None = None) -> tuple[str, str]:
    pairs = enumerate(zip(declared, inferred, strict=False))
    bad = [i for i, (d, s) in pairs if not dims_fit(d, s)]
    if len(declared) != len(inferred):
        return "mismatch", (
            f"the layer declares {len(declared)} output ports, but the op has {len(inferred)}"
        )
    if not bad:
        return "ok", ""
    how = rule_words(attrs or {})
    parts = [
        f"output {i} declares {declared_text(declared[i], inferred[i])}, but {how} "
        f"{inferred[i]}"
        for i in bad
    ]
    return "mismatch", "; ".join(parts)


def declared_text(dims: tuple[int, ...], inferred: PartialShape | None = None) -> str:
    if not dims and inferred is not None and inferred.dims != ():
        return "[...]"
    return "[" + ",".join("?" if d == -1 else str(d) for d in dims) + "]"


def declared_shape(dims: tuple[int, ...]) -> PartialShape:
    if not dims:
        return PartialShape.dynamic()
    return PartialShape.of(tuple(Dimension.dynamic() if d == -1 else Dimension.static(d)
                                 for d in dims))


def port_type(port: Mapping[str, Any]) -> str:
    return element_type_name(port.get("precision"))
