"""What a picture of a whole model draws, so that a 1,000-layer transformer stays readable.

Three steps, each one noted on the picture:

- **fold**: a Const, and every layer computed from Consts only (the ``Const -> Convert``
  of FP16 weights, ``Const -> Convert -> Subtract -> Multiply`` of INT8 ones, a shape
  computed from constants), is no node of its own but one line in the label of each
  layer that reads it: ``weights [768,768] f16``. Real models have as many of them as
  compute layers, and as nodes they say no more than that line.
- **group**: layers are boxed by their name scope, nested (:mod:`.groups`: PyTorch module
  paths, ONNX and Model Optimizer scopes), identical sibling blocks put together as one
  ``×N`` block, a block of too many items cut into parts.
- **bound**: a picture opens the blocks breadth first while at most ``max_layers`` nodes
  are drawn and it is at most ``max_ranks`` ranks tall; the other blocks are drawn closed,
  one node each (their name, layer count, commonest ops, the shapes in and out). No layer
  is left out: the HTML page opens any block. A block that holds a layer whose check says
  ``mismatch`` or ``invalid`` is always open.

>>> block_paths("__module.model.encoder.layers.0.blocks.1.attention/aten::view/Reshape_1")
['__module.model.encoder.layers.0', '__module.model.encoder.layers.0.blocks.1']
>>> block_paths("__module.model.embeddings/aten::add/Add")
[]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import networkx as nx

from ...element_types import element_type_name, is_real
from ...shapes import PartialShape
from .groups import Groups, choose_open, group

__all__ = ["Outline", "outline", "block_paths", "CONST_TYPES", "MIN_BLOCK", "MAX_RANKS"]

CONST_TYPES = ("Const", "Constant")
#: The fewest drawn layers that make a block a box of its own (else its layers join the
#: enclosing block).
MIN_BLOCK = 3
#: Layers that never fold, even when computed from constants: the model's ends and state.
_KEPT_TYPES = ("Parameter", "Result", "ReadValue", "Assign")
#: Layers of a decompression chain: the folded line then says "weights".
_DECOMPRESSION = ("Convert", "Subtract", "Multiply")
_BAD = ("mismatch", "invalid", "unknown")
#: The most ranks (rows of nodes) of a bounded picture: an SVG or PNG stays a picture,
#: not a strip tens of thousands of pixels long.
MAX_RANKS = 60


def block_paths(name: str) -> list[str]:
    """The blocks a layer may belong to, outermost first: its module path (the name
    before the first ``/``) cut after each numeric part."""
    if "/" not in name:
        return []
    parts = name.split("/", 1)[0].split(".")
    return [".".join(parts[:i + 1]) for i, p in enumerate(parts) if p.isdigit()]


@dataclass
class Outline:
    """The drawing plan: which layers are nodes, which are lines, which blocks are open
    (boxes) and which closed (one node); ``left_out`` stays empty (every layer is drawn)."""

    order: list[str]
    lines: dict[str, list[str]] = field(default_factory=dict)
    folded: set[str] = field(default_factory=set)
    clusters: dict[str, list[str]] = field(default_factory=dict)
    collapsed: dict[str, list[str]] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)
    groups: Groups | None = None
    opened: set[int] = field(default_factory=set)
    _node: dict[str, str | None] = field(default_factory=dict)

    def node_of(self, layer: str) -> str | None:
        """The DOT node that stands for ``layer`` (its own ``n<id>``, its closed
        block's ``b<i>``), None when it is folded."""
        return self._node.get(layer)

    @property
    def drawn(self) -> list[str]:
        """The layers drawn as a node of their own, in topological order."""
        return [n for n in self.order if self._node.get(n) == f"n{n}"]

    def notes(self, G: nx.MultiDiGraph) -> list[str]:
        """One line per step that put something out of sight, for the picture's title."""
        out = []
        if self.folded:
            kinds = Counter(G.nodes[n]["type"] for n in self.folded)
            what = ", ".join(f"{c} {t}" for t, c in kinds.most_common())
            out.append(f"{len(self.folded)} constant layers folded into their readers ({what})")
        if self.collapsed:
            inside = sum(len(v) for v in self.collapsed.values())
            out.append(f"{len(self.collapsed)} block{'s' * (len(self.collapsed) > 1)} "
                       f"closed ({inside} layers); the HTML page (--format html) opens them")
        return out


def outline(G: nx.MultiDiGraph, status: dict[str, str],
            known: dict[tuple[str, int], PartialShape], max_layers: int | None,
            max_ranks: int | None = MAX_RANKS, label=None) -> Outline:
    """Plan a picture of ``G``: ``status`` is each layer's check status, ``known`` each
    output port's shape, ``max_layers`` the most nodes (None or 0: every block open),
    ``max_ranks`` the most ranks, ``label(u, port)`` an edge's text."""
    plan = Outline(order=list(nx.topological_sort(G)))
    plan.folded = _constants(G, plan.order, status)
    plan.lines = _folded_lines(G, plan.folded, known)
    visible = [n for n in plan.order if n not in plan.folded]
    tree = group(G, visible, label or (lambda u, p: str(known.get((u, p), "?"))))
    plan.groups = tree
    if max_layers:
        must = {tree.block_of[n] for n in visible if status.get(n) in _BAD}
        plan.opened = choose_open(tree, max_layers, must, max_ranks)
    else:
        plan.opened = {i for i, b in enumerate(tree.blocks) if b.parent != -2}
    for n in visible:
        chain = tree.chain(tree.block_of[n])
        closed = [b for b in chain if b not in plan.opened]
        plan._node[n] = f"b{closed[-1]}" if closed else f"n{n}"
    for i, b in enumerate(tree.blocks):
        if b.parent == -2 or not i:
            continue
        if i in plan.opened:
            plan.clusters[b.label] = [n for n in b.items if isinstance(n, str)]
        elif b.parent in plan.opened:
            plan.collapsed[b.label] = [n for n in visible if plan._node[n] == f"b{i}"]
    return plan


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
