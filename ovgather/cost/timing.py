"""Where the CPU spends its time, by IR layer and block (``stats --profile``).

The CPU plugin times the nodes of its compiled graph (``runtime.profiling``); each node
names the IR layers it was made from. A node's time goes to those layers in equal
shares; a layer that is an original of a node named after another layer was fused into
it, and one that no executed node names was folded away (a constant subgraph) or
optimised out. The share of the run's time that reaches IR layers is the profile's
``coverage``. A node that names no IR layer was made by the plugin: a reorder, or a piece
of an IR layer it decomposed (ScaledDotProductAttention into MatMul, Softmax, Select…,
whose pieces lose the name). Such a node's time goes to the IR layers that no executed
node names and that lie between the nearest named nodes before and after it: the layer
it was cut from (``decomposed``); what is left is ``unmapped``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError

__all__ = ["Profile", "profile", "by_block", "layer_rows"]


@dataclass
class Profile:
    """Time per IR layer (ms per inference), the executed nodes that name no IR layer,
    the layers fused into another's node, and the sizes run at."""

    sizes: dict[str, list[int]]
    iterations: int
    total_ms: float = 0.0
    layer_ms: dict[str, float] = field(default_factory=dict)  # by friendly name
    fused: dict[str, str] = field(default_factory=dict)  # layer -> the node it ran in
    unmapped: list[tuple[str, str, float]] = field(default_factory=list)  # node, type, ms
    kernels: dict[str, str] = field(default_factory=dict)  # layer -> the kernel it ran in

    @property
    def mapped_ms(self) -> float:
        return sum(self.layer_ms.values())

    @property
    def coverage(self) -> float:
        """The share of the run's time given to IR layers."""
        return self.mapped_ms / self.total_ms if self.total_ms else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"sizes": self.sizes, "iterations": self.iterations,
                "total_ms": round(self.total_ms, 4), "mapped_ms": round(self.mapped_ms, 4),
                "coverage": round(self.coverage, 4),
                "unmapped": [{"node": n, "type": t, "ms": round(ms, 4)}
                             for n, t, ms in self.unmapped],
                "fused": [{"layer": lay, "into": node} for lay, node in self.fused.items()]}


def _static_sizes(G: Any, shapes: Mapping[str, Any] | None) -> dict[str, list[int]]:
    """A concrete size for every input: the ``shapes`` given, else one the model's rules
    accept (validate's size chooser)."""
    import numpy as np

    from ..validate.sizes import dim_rules, one_size_tries, parameter_shapes

    params = parameter_shapes(G)
    if shapes:
        from ..shapes import as_partial_shape

        params = {**params, **{n: as_partial_shape(s) for n, s in shapes.items()}}
    if all(s.dims is not None and s.is_static for s in params.values()):
        return {n: [d.lo for d in s.dims] for n, s in params.items()}
    _, first = next(one_size_tries(params, np.random.default_rng(0), dim_rules(G)))
    return {n: [d.lo for d in s.dims] for n, s in first.items()}


def _refuse_states(G: Any, shapes: Mapping[str, Any] | None) -> None:
    """The profile runs from the model's initial state (an empty cache): a state's shape
    given with it would put the counts at one length and the times at another."""
    from ..infer.walk import override_targets

    parameters, states = override_targets(G)
    sized = sorted(n for n in shapes or () if n in states and n not in parameters)
    if sized:
        raise UsageError(f"the profile runs the model from its initial state, so a state "
                         f"cannot be sized with it, but the shapes size '{sized[0]}'",
                         file=G.graph.get("xml_path"))


def profile(G: Any, shapes: Mapping[str, Any] | None = None, iterations: int = 5,
            seed: int = 0, threads: int | None = None) -> Profile:
    """Run ``G`` (a graph read by ``read_ir``) on the CPU plugin with profiling on, at
    ``shapes`` (or sizes its rules accept), and give each IR layer its time."""
    from ..runtime import to_openvino
    from ..runtime.profiling import profile_nodes

    _refuse_states(G, shapes)
    sizes = _static_sizes(G, shapes)
    nodes = profile_nodes(to_openvino(G), sizes, iterations, seed, threads)
    names = {a["name"] for _, a in G.nodes(data=True)}
    out = Profile(sizes, iterations)
    pieces = _pieces(G, nodes, names)
    for node in nodes:
        if not node.ran:
            continue
        out.total_ms += node.ms
        known = [n for n in node.originals if n in names] or pieces.get(node.name, [])
        if not known:
            if node.ms:
                out.unmapped.append((node.name, node.type, node.ms))
            continue
        share = node.ms / len(known)
        for name in known:
            out.layer_ms[name] = out.layer_ms.get(name, 0.0) + share
            out.kernels[name] = node.exec_type
            if name != node.name and len(known) > 1:
                out.fused[name] = node.name
    out.unmapped.sort(key=lambda row: -row[2])
    return out


def _pieces(G: Any, nodes: Sequence[Any], names: set[str]) -> dict[str, list[str]]:
    """Runtime node -> the IR layers it was likely cut from, for the nodes that name none:
    the layers no executed node names, downstream of the IR layers of the nearest named
    nodes it reads and upstream of those of the nearest named nodes reading it."""
    import networkx as nx

    by_name = {n.name: n for n in nodes}
    named = {n.name: [o for o in n.originals if o in names] for n in nodes}
    children: dict[str, list[str]] = {}
    for n in nodes:
        for p in n.parents:
            children.setdefault(p, []).append(n.name)
    ran = {o for layers in named.values() for o in layers}
    # a layer cut into pieces may keep its name on one of them (SDPA on its last MatMul):
    # it counts as not run whole when no node of its own type names it
    id_of = {a["name"]: n for n, a in G.nodes(data=True)}
    whole = {o for n in nodes for o in named[n.name] if n.type == G.nodes[id_of[o]]["type"]}

    def nearest(start: str, step: Any) -> set[str]:
        seen, todo, found = {start}, list(step(start)), set()
        while todo:
            cur = todo.pop()
            if cur in seen or cur not in by_name and cur not in children:
                continue
            seen.add(cur)
            if named.get(cur):
                found |= {id_of[o] for o in named[cur] if o in id_of}
            else:
                todo += step(cur)
        return found

    out: dict[str, list[str]] = {}
    for n in nodes:
        if named.get(n.name) or not n.ms or not n.ran:
            continue
        before = nearest(n.name, lambda x: by_name[x].parents if x in by_name else [])
        after = nearest(n.name, lambda x: children.get(x, []))
        if not before or not after:
            continue
        # the nearest named nodes themselves count: one may be a piece that kept the name
        down = before.union(*(nx.descendants(G, b) for b in before))
        up = after.union(*(nx.ancestors(G, a) for a in after))
        between = [v for v in down & up if G.nodes[v]["type"] not in ("Const", "Constant")]
        cut = [G.nodes[v]["name"] for v in between if G.nodes[v]["name"] not in ran] or \
            [G.nodes[v]["name"] for v in between if G.nodes[v]["name"] not in whole]
        if cut:
            out[n.name] = sorted(cut)
    return out


def by_block(report: Any, prof: Profile) -> list[tuple[str, float, Any]]:
    """``(block, ms, FLOP/s)`` for every block of a stats ``report``, slowest first."""
    ms: dict[str, float] = {}
    flops: dict[str, Any] = {}
    for lc in report.layers:
        if lc.name in prof.layer_ms:
            ms[lc.block] = ms.get(lc.block, 0.0) + prof.layer_ms[lc.name]
            if isinstance(lc.flops, int):
                flops[lc.block] = flops.get(lc.block, 0) + lc.flops
    rows = [(b, t, flops[b] / (t / 1000) if t and b in flops else None)
            for b, t in ms.items()]
    return sorted(rows, key=lambda row: -row[1])


def layer_rows(report: Any, prof: Profile, top: int | None = None
               ) -> Sequence[tuple[str, str, float, Any, str]]:
    """``(layer, type, ms, FLOP/s, kernel or 'fused into NODE')``, slowest first."""
    rows = []
    for lc in report.layers:
        if lc.name not in prof.layer_ms:
            continue
        t = prof.layer_ms[lc.name]
        rate = lc.flops / (t / 1000) if t and isinstance(lc.flops, int) else None
        how = (f"fused into {prof.fused[lc.name]}" if lc.name in prof.fused
               else prof.kernels.get(lc.name, ""))
        rows.append((lc.name, lc.type, t, rate, how))
    rows.sort(key=lambda row: -row[2])
    return rows[:top] if top else rows
