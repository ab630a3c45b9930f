"""Rewrite what an older OpenVINO release cannot load or compile into what it runs.

``check --target-runtime X`` names the layers (``infer.target``); this pass rewrites each
of them, with the same outputs, or refuses the whole model before any edit:

* a newer version of an op the release has in an older version becomes that version
  when the two compute the same thing here: Pad-12 → Pad-1 (pads that cannot be
  negative), MaxPool-14 → MaxPool-8 and AvgPool-14 → AvgPool-1 (``ceil_torch`` →
  ``ceil`` only where both give the same output size), ScatterElementsUpdate-12 → 3 and
  ScatterNDUpdate-15 → 3 (no ``reduction``), Squeeze-15 → Squeeze-0 (no
  ``allow_axis_skip``), OneHot-16 → OneHot-1 (``ignore_negative``), TopK-11 → TopK-3
  (not ``stable``), BitwiseAnd/Or/Xor/Not-13 on booleans → LogicalAnd/Or/Xor/Not-1;
* an op the release lacks is decomposed (``decompose.py``): ScaledDotProductAttention,
  GroupNormalization, Pad-12 with negative pads, ConvertPromoteTypes; Identity is
  bypassed; IsNaN, which 2023.0's CPU plugin refuses to feed into another layer, becomes
  NotEqual(x, x); a boolean attention mask 2024.0 refuses in stateful models becomes
  0 / the lowest number;
* a Const of an element type the release cannot read (f8, f4, nf4, u2/u3/u6) holds the
  same values in a wider type when every reader converts it anyway.

Anything else (an input of an unreadable type, an op with no older counterpart, a
condition above not met) is refused: :class:`DowngradeError` lists every such layer and
the graph is left as it was. New layers get unique names (an older reader refuses a
model whose names repeat).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from ..edit import add_const, bypass, connect, editing, reinfer, replace_layer
from ..element_types import element_type_name, numpy_dtype
from ..errors import RewriteError
from ..graph import consumers, input_edges, locate, new_port, op_spec, output_port
from ..infer.target import TargetProblem, op_refused, target_problems, unread_types
from ..ops.core.releases import NEWEST, builds, release_of
from ..ops.core.spec import Attrs
from . import decompose
from .base import Pass, PassResult

__all__ = ["Downgrade", "DowngradeError", "downgrade"]

#: a planned rewrite (run after every layer was planned) or why there is none
Plan = Callable[[], None] | str


class DowngradeError(RewriteError):
    """Layers the pass cannot rewrite for the release; ``refused`` holds one dict per
    layer (``id``, ``name``, ``type``, ``version``, ``line``, ``why``), the first in
    the message."""

    def __init__(self, message: str, refused: list[dict[str, Any]], **where: Any) -> None:
        super().__init__(message, **where)
        self.refused = refused


@dataclass
class _Site:
    """One layer to rewrite: its graph (the model or a body), id, the release and what
    the release refuses of it."""

    G: nx.MultiDiGraph
    node: str
    release: str
    problem: TargetProblem

    @property
    def attrs(self) -> dict[str, Any]:
        return self.G.nodes[self.node]

    @property
    def data(self) -> dict[str, str]:
        return self.attrs.get("data") or {}

    def source(self, i: int) -> tuple[str, int]:
        u, port, _ = input_edges(self.G, self.node)[i]
        return u, port

    def input_type(self, i: int) -> str:
        return element_type_name(output_port(self.G, *self.source(i)).get("precision"))

    def input_rank(self, i: int) -> int | None:
        dims = output_port(self.G, *self.source(i)).get("dims")
        return None if dims is None else len(dims)

    def input_dims(self, i: int) -> tuple[int, ...]:
        return tuple(output_port(self.G, *self.source(i)).get("dims") or ())

    def const_input(self, i: int) -> np.ndarray | None:
        """The value of input ``i`` when a Const feeds it, else None."""
        u, _ = self.source(i)
        return _value(self.G, u) if self.G.nodes[u]["type"] == "Const" else None

    def as_version(self, op: str, opset: int, drop: tuple[str, ...] = (),
                   data: dict[str, str] | None = None) -> Plan:
        """Plan: the layer becomes ``op`` of ``opset`` (as today's OpenVINO builds it
        there), without the attributes ``drop`` and with ``data`` set."""
        built = builds(self.release, op, opset)
        if built is None or built != builds(NEWEST, op, opset):
            return f"OpenVINO {self.release} has no {op} of opset{opset} either"

        def run() -> None:
            attrs = self.attrs
            attrs["type"], attrs["version"] = op, f"opset{opset}"
            kept = {k: v for k, v in self.data.items() if k not in drop}
            attrs["data"] = {**kept, **(data or {})}
        return run


def _plan(site: _Site) -> Plan:
    """How to rewrite the layer of ``site``, or why it cannot be."""
    attrs, release = site.attrs, site.release
    types = unread_types(release, attrs)
    if types:
        return _widen_const(site, types) if attrs["type"] == "Const" else (
            f"OpenVINO {release} cannot read its element type {types[0]}"
            + (": the model's input must be fed another type" if attrs["type"] == "Parameter"
               else ", and there is no rewrite for it"))
    planner = _PLANNERS.get(attrs["type"])
    if planner is None:
        kind = "read" if op_refused(release, attrs) else "compile"
        return (f"OpenVINO {release} cannot {kind} {attrs['type']}-"
                f"{(attrs.get('version') or '?').removeprefix('opset')} and there is no "
                "rewrite of it into the ops it has")
    return planner(site)


def _sdpa(site: _Site) -> Plan:
    if op_refused(site.release, site.attrs):
        if not site.input_rank(0):
            return "its query has no known rank, which the decomposition needs"
        return lambda: decompose.sdpa(site.G, site.node)
    return lambda: decompose.sdpa_float_mask(site.G, site.node)


def _group_norm(site: _Site) -> Plan:
    rank = site.input_rank(0)
    if not rank or rank < 2:
        return "its input has no known rank of 2 or more, which the decomposition needs"
    return lambda: decompose.group_norm(site.G, site.node, rank)


def _pad(site: _Site) -> Plan:
    pads = [site.const_input(i) for i in (1, 2)]
    if all(p is not None and (p >= 0).all() for p in pads):
        return site.as_version("Pad", 1)
    rank = site.input_rank(0)
    if site.data.get("pad_mode", "constant") != "constant":
        return ("Pad-1 has no negative pads, and this Pad's may be negative outside "
                "constant mode")
    if rank is None:
        return "its input has no known rank, which cropping negative pads needs"
    return lambda: decompose.pad_cropped(site.G, site.node, rank)


def _pool(site: _Site) -> Plan:
    op = site.attrs["type"]
    version = 8 if op == "MaxPool" else 1
    if site.data.get("rounding_type") != "ceil_torch" or _ceil_is_ceil_torch(site):
        rounding = {"rounding_type": "ceil"} if site.data.get("rounding_type") == \
            "ceil_torch" else {}
        return site.as_version(op, version, data=rounding)  # MaxPool-8 is in opset8
    return (f"{op}-{version} has no rounding_type ceil_torch, and ceil gives another "
            "output size here (or the input's spatial size is not known)")


def _ceil_is_ceil_torch(site: _Site) -> bool:
    """Whether ``ceil`` and ``ceil_torch`` give the same output size on every spatial
    axis: ceil_torch drops a last window that would start in the end padding, which
    cannot happen when stride + pad_end <= the dilated kernel, nor when the size shows
    it does not."""
    data = site.data
    if data.get("auto_pad", "explicit") not in ("explicit", "notset"):
        return True  # the pads are computed; the rounding type is not used
    attrs = Attrs(data)
    ints = {k: attrs.ints(k) for k in ("kernel", "strides", "pads_begin", "pads_end",
                                        "dilations")}
    sizes = site.input_dims(0)[2:]
    for axis, k in enumerate(ints["kernel"]):
        d = ints["dilations"][axis] if ints["dilations"] else 1
        s, pb, pe = ints["strides"][axis], ints["pads_begin"][axis], ints["pads_end"][axis]
        reach = (k - 1) * d + 1
        if s + pe <= reach:
            continue
        size = sizes[axis] if axis < len(sizes) else -1
        if size < 0:
            return False
        windows = -(-(size + pb + pe - reach) // s) + 1
        if (windows - 1) * s >= size + pb:
            return False
    return True


def _bitwise(site: _Site) -> Plan:
    count = len(input_edges(site.G, site.node))
    if any(site.input_type(i) != "boolean" for i in range(count)):
        return (f"{site.attrs['type']} on {site.input_type(0)} has no counterpart in "
                f"OpenVINO {site.release} (only boolean inputs become Logical ops)")
    return site.as_version(site.attrs["type"].replace("Bitwise", "Logical"), 1)


def _is_nan(site: _Site) -> Plan:
    return lambda: decompose.is_nan(site.G, site.node)


def _if_attribute(attribute: str, allowed: tuple[str, ...], op: str, version: int,
                  opset: int, drop: tuple[str, ...]) -> Callable[[_Site], Plan]:
    """A planner for the change to ``op``-``version`` (in ``opset``) that holds while
    ``attribute`` is one of ``allowed`` (its first value being the default)."""
    def plan(site: _Site) -> Plan:
        value = site.data.get(attribute, allowed[0])
        if value not in allowed:
            return f"{op}-{version} has no {attribute} {value}"
        return site.as_version(op, opset, drop=drop)
    return plan


def _input(site: _Site) -> Plan:
    kind = element_type_name(site.data.get("element_type"))
    return (f"the CPU plugin of OpenVINO {site.release} does not take a model input of "
            f"element type {kind}: the input must be fed another type")


def _read_value(site: _Site) -> Plan:
    """A ReadValue without initializer (a state that starts at zeros) gets zeros of the
    variable's static shape as its initializer; a state of dynamic shape cannot run."""
    port = site.attrs["outputs"][0]
    dims = tuple(port.get("dims") or ())
    if site.attrs.get("inputs") or any(d < 0 for d in dims):
        return (f"the CPU plugin of OpenVINO {site.release} runs a state (ReadValue/Assign) "
                "only of static shape")
    kind = numpy_dtype(element_type_name(port.get("precision")))
    if kind is None:
        return f"a state of element type {element_type_name(port.get('precision'))}"

    def run() -> None:
        G, node = site.G, site.node
        if port["id"] == 0:  # the input takes port 0: the output moves to 1, as IRs number
            for _, reader, key in list(G.out_edges(node, keys=True)):
                G.remove_edge(node, reader, key=key)
                G.add_edge(node, reader, key=(1, key[1]))
            port["id"] = 1
        zeros = add_const(G, np.zeros(dims, kind), name=f"{site.attrs['name']}/zeros")
        site.attrs["inputs"] = [new_port(0, port.get("precision"), dims)]
        connect(site.G, (zeros, site.G.nodes[zeros]["outputs"][0]["id"]), (site.node, 0))
    return run


def _identity(site: _Site) -> Plan:
    return lambda: bypass(site.G, site.node)


def _promote(site: _Site) -> Plan:
    return lambda: decompose.promote_types(site.G, site.node)


def _widen_const(site: _Site, types: list[str]) -> Plan:
    """A Const of a type the release cannot read, every reader a Convert to a type it
    reads: the same values in a wider type (the Converts then give the same results)."""
    from ..runtime.constants import WIDER, widened

    kind = types[0]
    readers = consumers(site.G, site.node, site.attrs["outputs"][0]["id"])
    if kind not in WIDER or not readers or any(
            site.G.nodes[r]["type"] != "Convert" or unread_types(site.release, site.G.nodes[r])
            for r, _ in readers):
        return (f"OpenVINO {site.release} cannot read its element type {kind}, and only a "
                "constant that every reader converts can be stored in a wider type")
    shape = tuple(output_port(site.G, site.node, site.attrs["outputs"][0]["id"])["dims"])

    def run() -> None:
        values = widened(_value(site.G, site.node), kind, shape)
        wide = add_const(site.G, values, name=f"{site.attrs['name']}/{values.dtype}")
        replace_layer(site.G, site.node, wide)
    return run


def _value(G: nx.MultiDiGraph, const: str) -> np.ndarray:
    """A Const's data (raw bytes for the packed types numpy has no dtype for)."""
    from ..ir.weights import const_value

    return np.asarray(const_value(G, const))


_PLANNERS: dict[str, Callable[[_Site], Plan]] = {
    "ScaledDotProductAttention": _sdpa,
    "GroupNormalization": _group_norm,
    "Pad": _pad,
    "MaxPool": _pool,
    "AvgPool": _pool,
    "BitwiseAnd": _bitwise, "BitwiseOr": _bitwise, "BitwiseXor": _bitwise,
    "BitwiseNot": _bitwise,
    "IsNaN": _is_nan,
    "Identity": _identity,
    "Parameter": _input,
    "ReadValue": _read_value,
    "ConvertPromoteTypes": _promote,
    "ScatterElementsUpdate": _if_attribute("reduction", ("none",), "ScatterElementsUpdate", 3,
                                           3, ("reduction", "use_init_val")),
    "ScatterNDUpdate": _if_attribute("reduction", ("none",), "ScatterNDUpdate", 3, 4,
                                     ("reduction",)),
    "Squeeze": _if_attribute("allow_axis_skip", ("false",), "Squeeze", 0, 1,
                             ("allow_axis_skip",)),
    "OneHot": _if_attribute("negative_indices_mode", ("ignore_negative",), "OneHot", 1, 1,
                            ("negative_indices_mode",)),
    "TopK": _if_attribute("stable", ("false",), "TopK", 3, 3, ("stable",)),
}


class Downgrade(Pass):
    """Rewrite every layer OpenVINO ``release`` (``"2023.0"``, a patch such as
    ``"2023.0.2"``) cannot read or compile; see the module docstring.

    A model the release already takes is left alone (``modified=False``). A layer that
    cannot be rewritten raises :class:`DowngradeError` before any edit.
    """

    def __init__(self, release: str) -> None:
        self.release = release_of(release)

    def call(self, G: nx.MultiDiGraph) -> PassResult:
        problems = _one_per_layer(target_problems(G, self.release))
        if not problems:
            return PassResult(G, False)
        sites = [_Site(*locate(G, p.id), self.release, p) for p in problems]
        plans = [(site, _plan(site)) for site in sites]
        refused = [_refusal(site, why) for site, why in plans if isinstance(why, str)]
        if refused:
            raise _error(G, self.release, refused)
        changes = []
        with ExitStack() as stack:
            for graph in {id(site.G): site.G for site in sites}.values():
                stack.enter_context(editing(graph))
            for site, run in plans:
                before, was = set(site.G), _op_name(site.G, site.node)
                run()
                changes.append(_record(site, was, before))
        reinfer(G)
        left = target_problems(G, self.release)
        if left:  # pragma: no cover - a rewrite above that built what the release lacks
            raise _error(G, self.release, [_refusal(
                _Site(G, p.id, self.release, p), "the rewrite left " + p.message)
                for p in left])
        return PassResult(G, True, changes)


def downgrade(G: nx.MultiDiGraph, release: str) -> list[dict[str, Any]]:
    """Rewrite ``G`` in place for OpenVINO ``release``; return one record per rewritten
    layer (``id``, ``name``, ``type``, ``version``, ``to``, ``inserted``). An empty list
    means the release takes the model as it is."""
    return Downgrade(release).call(G).changes


def _one_per_layer(problems: list[TargetProblem]) -> list[TargetProblem]:
    """One problem per layer (a layer may be refused by the reader and the plugin)."""
    seen: dict[str, TargetProblem] = {}
    for p in problems:
        seen.setdefault(p.id, p)
    return list(seen.values())


def _refusal(site: _Site, why: str) -> dict[str, Any]:
    p = site.problem
    return {"id": p.id, "name": p.name, "type": p.type, "version": p.version,
            "line": p.line, "why": why}


def _error(G: nx.MultiDiGraph, release: str, refused: list[dict[str, Any]]) -> DowngradeError:
    first = refused[0]
    more = f" (and {len(refused) - 1} more layer(s))" if len(refused) > 1 else ""
    return DowngradeError(
        f"convert rewrites for OpenVINO {release} only layers it has a rewrite for, but "
        f"{first['type']} '{first['name']}' (id {first['id']}) has none: {first['why']}"
        f"{more}", refused, file=G.graph.get("xml_path"), line=first["line"],
        layer_name=first["name"], layer_id=first["id"])


def _op_name(G: nx.MultiDiGraph, node: str) -> str:
    """``Pad-12``: the layer's op as OpenVINO's specification names it."""
    spec = op_spec(G, node)
    version = spec.version if spec else G.nodes[node].get("version")
    return f"{G.nodes[node]['type']}-{version}"


def _record(site: _Site, was: str, before: set[str]) -> dict[str, Any]:
    """What became of one layer: ``from`` its op, ``to`` the op it now is, or the
    layers that replace it (``inserted``; none when it was bypassed)."""
    p, G = site.problem, site.G
    added = sorted((n for n in G if n not in before), key=lambda n: (len(n), n))
    if site.node in G:
        to = _op_name(G, site.node)
    else:
        to = f"{len(added)} layers" if added else "bypassed"
    return {"id": p.id, "name": p.name, "type": p.type, "from": was, "to": to,
            "inserted": [{"id": n, "name": G.nodes[n]["name"], "type": G.nodes[n]["type"]}
                         for n in added]}
