"""What a picture of a whole model draws, so that a 1,000-layer transformer stays readable.

Three steps, each one noted on the picture:

- **fold**: a Const, and every layer computed from Consts only (the ``Const -> Convert``
  of FP16 weights, ``Const -> Convert -> Subtract -> Multiply`` of INT8 ones, a shape
  computed from constants), is no node of its own but one line in the label of each
  layer that reads it: ``weights [768,768] f16``. Real models have as many of them as
  compute layers, and as nodes they say no more than that line.
- **group**: layers whose names share a module path up to an index
  (``__module.model.encoder.layer.3``: one transformer block) are drawn in one box: the
  innermost such path that holds at least :data:`MIN_BLOCK` drawn layers.
- **bound**: past ``max_layers`` nodes, whole blocks are collapsed into one node each
  (the first block of each kind stays open, so one of each is seen in full), then the
  layers after the first ``max_layers`` in topological order are left out. A block or
  layer whose check says ``mismatch`` or ``invalid`` is never collapsed nor left out.

>>> block_paths("__module.model.encoder.layers.0.blocks.1.attention/aten::view/Reshape_1")
['__module.model.encoder.layers.0', '__module.model.encoder.layers.0.blocks.1']
>>> block_paths("__module.model.embeddings/aten::add/Add")
[]
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import networkx as nx

from ...element_types import element_type_name, is_real
from ...shapes import PartialShape

__all__ = ["Outline", "outline", "block_paths", "CONST_TYPES", "MIN_BLOCK"]

CONST_TYPES = ("Const", "Constant")
#: The fewest drawn layers that make a block a box of its own (else its layers join the
#: enclosing block).
MIN_BLOCK = 3
#: Layers that never fold, even when computed from constants: the model's ends and state.
_KEPT_TYPES = ("Parameter", "Result", "ReadValue", "Assign")
#: Layers of a decompression chain: the folded line then says "weights".
_DECOMPRESSION = ("Convert", "Subtract", "Multiply")
_BAD = ("mismatch", "invalid", "unknown")


def block_paths(name: str) -> list[str]:
    """The blocks a layer may belong to, outermost first: its module path (the name
    before the first ``/``) cut after each numeric part."""
    if "/" not in name:
        return []
    parts = name.split("/", 1)[0].split(".")
    return [".".join(parts[:i + 1]) for i, p in enumerate(parts) if p.isdigit()]


@dataclass
class Outline:
    """The drawing plan: which layers are nodes, which are lines, boxes or left out."""

    order: list[str]
    lines: dict[str, list[str]] = field(default_factory=dict)
    folded: set[str] = field(default_factory=set)
    clusters: dict[str, list[str]] = field(default_factory=dict)
    collapsed: dict[str, list[str]] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)
    _node: dict[str, str | None] = field(default_factory=dict)

    def node_of(self, layer: str) -> str | None:
        """The DOT node that stands for ``layer`` (its own ``n<id>``, its collapsed
        block's ``b<i>``), None when it is folded or left out."""
        return self._node.get(layer)

    @property
    def drawn(self) -> list[str]:
        """The layers drawn as a node of their own, in topological order."""
        return [n for n in self.order if self._node.get(n) == f"n{n}"]

    def notes(self, G: nx.MultiDiGraph) -> list[str]:
        """One line per step that left something out of sight, for the picture's title."""
        out = []
        if self.folded:
            kinds = Counter(G.nodes[n]["type"] for n in self.folded)
            what = ", ".join(f"{c} {t}" for t, c in kinds.most_common())
            out.append(f"{len(self.folded)} constant layers folded into their readers ({what})")
        if self.collapsed:
            inside = sum(len(v) for v in self.collapsed.values())
            out.append(f"{len(self.collapsed)} block{'s' * (len(self.collapsed) > 1)} "
                       f"collapsed ({inside} layers)")
        if self.left_out:
            out.append(f"{len(self.left_out)} layers not drawn, from "
                       f"{G.nodes[self.left_out[0]]['name']} on")
        if self.collapsed or self.left_out:
            out.append("--max-layers 0 draws every layer; --layer NAME draws a neighbourhood")
        return out


def outline(G: nx.MultiDiGraph, status: dict[str, str],
            known: dict[tuple[str, int], PartialShape], max_layers: int | None) -> Outline:
    """Plan a picture of ``G``: ``status`` is each layer's check status, ``known`` each
    output port's shape, ``max_layers`` the most nodes (None or 0: no bound)."""
    plan = Outline(order=list(nx.topological_sort(G)))
    plan.folded = _constants(G, plan.order, status)
    plan.lines = _folded_lines(G, plan.folded, known)
    visible = [n for n in plan.order if n not in plan.folded]
    plan._node = {n: f"n{n}" for n in visible}
    plan.clusters = _blocks(G, visible)
    if max_layers:
        _collapse(plan, status, max_layers)
        _leave_out(plan, visible, status, max_layers)
    return plan


def _blocks(G: nx.MultiDiGraph, visible: list[str]) -> dict[str, list[str]]:
    """Each layer in the innermost of its blocks that holds at least MIN_BLOCK drawn
    layers: a ResNet's ``stages.0.layers.0`` rather than each of its convolutions'
    ``stages.0.layers.0.layer.1``, a Swin's ``layers.0.blocks.1`` rather than ``layers.0``."""
    paths = {n: block_paths(G.nodes[n]["name"]) for n in visible}
    sizes = Counter(p for n in visible for p in paths[n])
    blocks: dict[str, list[str]] = {}
    for n in visible:
        key = next((p for p in reversed(paths[n]) if sizes[p] >= MIN_BLOCK), None)
        if key is not None:
            blocks.setdefault(key, []).append(n)
    return {k: v for k, v in blocks.items() if len(v) > 1}


def _constants(G: nx.MultiDiGraph, order: list[str], status: dict[str, str]) -> set[str]:
    """Consts and the layers computed from them alone (a layer the check faults stays)."""
    const: set[str] = set()
    for n in order:
        kind = G.nodes[n]["type"]
        if status.get(n) in _BAD or kind in _KEPT_TYPES or G.nodes[n].get("bodies"):
            continue
        preds = G._pred[n]
        if kind in CONST_TYPES or (preds and all(p in const for p in preds)):
            const.add(n)
    # a constant nobody outside the constants reads (a dead branch) stays visible
    read: set[str] = set()
    for n in reversed(order):
        if n in const and any(v not in const or v in read for v in G._succ[n]):
            read.add(n)
    return read


def _folded_lines(G: nx.MultiDiGraph, folded: set[str],
                  known: dict[tuple[str, int], PartialShape]) -> dict[str, list[str]]:
    """Per reader, one line per constant input: ``weights [768,768] f16``."""
    lines: dict[str, list[str]] = {}
    for u, v, key in G.edges(keys=True):
        if u in folded and v not in folded:
            lines.setdefault(v, []).append(_const_line(G, u, key[0], known))
    return lines


def _const_line(G: nx.MultiDiGraph, u: str, port_id: int,
                known: dict[tuple[str, int], PartialShape]) -> str:
    """``weights [768,768] f16``: a decompression chain, with the type its largest
    converted Const is stored in; ``const [2] i64``: anything else, with the type the
    reader receives. Both with the shape the reader receives."""
    chain = nx.ancestors(G, u) | {u}
    kinds = {G.nodes[n]["type"] for n in chain}
    shape = known.get((u, port_id), "?")
    stored = [n for n in chain if G.nodes[n]["type"] in CONST_TYPES
              and any(_decompresses(G, v) for v in G._succ[n])]
    if not stored or not kinds <= {*CONST_TYPES, *_DECOMPRESSION}:
        port = next(p for p in G.nodes[u]["outputs"] if p["id"] == port_id)
        return f"const {shape} {element_type_name(port['precision'])}"
    root = max(stored, key=lambda n: _size(G, n))
    text = f"weights {shape} {G.nodes[root]['data'].get('element_type', '?')}"
    return text + (" (zero point, scale)" if kinds & {"Subtract", "Multiply"} else "")


def _decompresses(G: nx.MultiDiGraph, n: str) -> bool:
    """A Convert to a floating-point type: how FP16 and INT8 weights are unpacked."""
    attrs = G.nodes[n]
    return attrs["type"] == "Convert" and is_real(attrs["data"].get("destination_type", ""))


def _size(G: nx.MultiDiGraph, n: str) -> int:
    try:
        return int(G.nodes[n]["data"].get("size", 0))
    except ValueError:
        return 0


def _collapse(plan: Outline, status: dict[str, str], max_layers: int) -> None:
    """Collapse blocks until at most ``max_layers`` nodes are left: later blocks of a kind
    (the same path but for its indices) first, larger first; never one with a fault."""
    count = len(plan._node)
    first: dict[str, str] = {}
    for key in plan.clusters:
        first.setdefault(re.sub(r"\.\d+(?=\.|$)", ".#", key), key)  # layers.#.blocks.#
    firsts = set(first.values())
    index = {key: i for i, key in enumerate(plan.clusters)}
    candidates = sorted((k for k, v in plan.clusters.items()
                         if not any(status.get(n) in _BAD for n in v)),
                        key=lambda k: (k in firsts, -len(plan.clusters[k]), -index[k]))
    for key in candidates:
        if count <= max_layers:
            break
        members = plan.clusters.pop(key)
        plan.collapsed[key] = members
        for n in members:
            plan._node[n] = f"b{index[key]}"
        count -= len(members) - 1


def _leave_out(plan: Outline, visible: list[str], status: dict[str, str],
               max_layers: int) -> None:
    """Past ``max_layers`` nodes, leave out the rest in topological order (a faulted layer
    stays; a collapsed block counts as one node, met at its first layer)."""
    blocks = {plan._node[v[0]]: v for v in plan.collapsed.values()}
    seen: set[str] = set()
    for n in visible:
        node = plan._node[n]
        if node is None or node in seen:  # left out with its block, or drawn already
            continue
        if len(seen) < max_layers or status.get(n) in _BAD:
            seen.add(node)
            continue
        members = blocks.get(node, [n])
        for m in members:
            plan._node[m] = None
        plan.left_out.extend(members)
    for key in [k for k, v in plan.collapsed.items() if plan._node.get(v[0]) is None]:
        del plan.collapsed[key]
    for key, members in list(plan.clusters.items()):
        kept = [n for n in members if plan._node.get(n) is not None]
        if len(kept) > 1:
            plan.clusters[key] = kept
        else:
            del plan.clusters[key]
    order = {n: i for i, n in enumerate(plan.order)}
    plan.left_out.sort(key=order.__getitem__)

