"""Blocks of a model by name scope: the tree the page and the bounded pictures draw.

A layer's name says where it sits: a PyTorch module path before the first ``/``
(``__module.model.layers.3.self_attn/aten::linear/MatMul``), ONNX scopes between ``/``
(``/model/layers.3/self_attn/q_proj/MatMul``), Model Optimizer scopes the same way
(``data/norm/bn/mean``). :func:`scope_path` reads them; :func:`group` builds the tree:

- each drawn layer goes into the innermost scope that holds at least :data:`MIN_BLOCK`
  drawn layers (a smaller scope is dissolved into its parent); a layer named like a block
  (``conv8_1`` beside ``conv8_1/bn``) goes into it; a layer without a scope goes into the
  innermost block that holds all its neighbours with one;
- a block that holds nothing but one block is that block;
- consecutive sibling blocks with the same layers (48 decoder layers) are put into one
  block that says ``×48``;
- a block of more than :data:`CHUNK` items is cut into parts in topological order, so that
  no open block is a strip of thousands of layers;
- each block's items (layers and blocks) are laid out in ranks (longest path over the
  edges between them) and ordered in each rank by their predecessors: the page only adds
  the sizes up when a block opens.

>>> scope_path("__module.model.layers.3.self_attn/aten::linear/MatMul")
['__module.model', '__module.model.layers.3', '__module.model.layers.3.self_attn']
>>> scope_path("/model/layers.3/self_attn/q_proj/MatMul")
['/model', '/model/layers.3', '/model/layers.3/self_attn', '/model/layers.3/self_attn/q_proj']
>>> scope_path("data/norm/bn/mean")
['data', 'data/norm', 'data/norm/bn']
>>> scope_path("Constant_1120")
[]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import networkx as nx

__all__ = ["Block", "Groups", "group", "scope_path", "MIN_BLOCK", "CHUNK", "choose_open"]

#: The fewest drawn layers that make a scope a block of its own.
MIN_BLOCK = 3
#: The most items (layers and blocks) directly in one block; more are cut into parts.
CHUNK = 40
_ENDS = ("Parameter", "Result")


def scope_path(name: str) -> list[str]:
    """The name scopes of a layer, outermost first, each spelled as the prefix of the name."""
    lead = "/" if name.startswith("/") else ""
    parts = name[len(lead):].split("/")[:-1]
    cut = next((i for i, p in enumerate(parts) if "::" in p), len(parts))
    parts = parts[:cut]
    if not parts:
        return []
    keys: list[str] = []
    first = parts[0]
    if first.startswith("__module.") or (cut < len(name.split("/")) - 1 and "." in first):
        segs: list[str] = []
        for p in first.split("."):
            if p.isdigit() and segs:
                segs[-1] += "." + p
            else:
                segs.append(p)
        keys += [".".join(segs[:i + 1]) for i in range(len(segs)) if segs[:i + 1] != ["__module"]]
    else:
        keys.append(lead + first)
    keys += [lead + "/".join(parts[:i + 1]) for i in range(1, len(parts))]
    return keys


@dataclass
class Block:
    """One box: its scope ``key`` (or a made-up one for a repeat or a part), the ``label``
    it shows, its ``parent`` (-1: the root, the whole model), its ``items`` (a layer id or a
    block index), each item's ``rank``, the edges ``(u, v, port)`` between drawn layers
    whose innermost common block it is, ``repeat`` (how many identical blocks it holds),
    ``size`` (drawn layers inside) and the shapes that enter and leave it."""

    key: str
    label: str
    parent: int
    items: list[str | int] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    edges: list[tuple[str, str, int]] = field(default_factory=list)
    repeat: int = 0
    kind: str = "scope"
    size: int = 0
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)


@dataclass
class Groups:
    """The tree: ``blocks[0]`` is the whole model; ``block_of`` the block each drawn layer
    sits in directly; ``order`` each layer's topological position."""

    blocks: list[Block]
    block_of: dict[str, int]
    order: dict[str, int]

    def chain(self, b: int) -> list[int]:
        """``b`` and the blocks that hold it, innermost first (the root last)."""
        out = []
        while b >= 0:
            out.append(b)
            b = self.blocks[b].parent
        return out

    def depth(self, b: int) -> int:
        return len(self.chain(b)) - 1


def group(G: nx.MultiDiGraph, drawn: list[str], label: Callable[[str, int], str],
          scoped: bool = True) -> Groups:
    """The tree of ``drawn`` (layer ids of ``G`` in topological order); ``label(u, port)``
    is the text of an edge (the shape). ``scoped`` False: no scopes (one block, in parts)."""
    order = {n: i for i, n in enumerate(drawn)}
    names = {n: G.nodes[n]["name"] for n in drawn}
    paths = {n: scope_path(names[n]) if scoped else [] for n in drawn}
    counts = Counter(k for n in drawn for k in paths[n])
    for n in drawn:  # a layer named like a scope belongs to it
        if counts.get(names[n]):
            paths[n] = [*paths[n], names[n]]
            counts[names[n]] += 1
    keys = sorted({k for k, c in counts.items() if c >= MIN_BLOCK}, key=len)
    blocks = [Block("", "", -1)]
    index: dict[str, int] = {}
    for k in keys:  # parents before children: a prefix is shorter
        parent = next((index[p] for p in reversed(_prefixes(k)) if p in index), 0)
        index[k] = len(blocks)
        blocks.append(Block(k, k, parent))
    block_of = {}
    for n in drawn:
        inner = [k for k in paths[n] if k in index]
        block_of[n] = index[inner[-1]] if inner else 0
    tree = Groups(blocks, block_of, order)
    _adopt(G, tree, drawn, paths)
    _fill(tree, drawn)
    _compress(tree)
    _repeats(G, tree)
    _chunk(tree)
    _fill_sizes(tree)
    _layout(G, tree, label)
    return tree


def _prefixes(key: str) -> list[str]:
    """The shorter keys a key may sit in (any prefix ending before a ``.`` or ``/``)."""
    return [key[:i] for i, c in enumerate(key) if c in "./" and i > 0]


def _adopt(G: nx.MultiDiGraph, tree: Groups, drawn: list[str],
           paths: dict[str, list[str]]) -> None:
    """A layer without a scope joins the innermost block that holds its scoped neighbours."""
    for n in drawn:
        if paths[n] or G.nodes[n]["type"] in _ENDS:
            continue
        near = {tree.block_of[m] for m in (*G._pred[n], *G._succ[n])
                if m in tree.block_of and paths.get(m)}
        if near:
            tree.block_of[n] = _lca(tree, near)


def _lca(tree: Groups, blocks: Iterable[int]) -> int:
    chains = [tree.chain(b) for b in blocks]
    common = set(chains[0]).intersection(*chains[1:])
    return next(b for b in chains[0] if b in common)


def _fill(tree: Groups, drawn: list[str]) -> None:
    """Each block's items: its layers and its child blocks, by their first layer."""
    first: dict[int, int] = {}
    for n in drawn:
        for b in tree.chain(tree.block_of[n]):
            if b in first:
                break
            first[b] = tree.order[n]
    for b in tree.blocks:
        b.items = []
    for i, b in enumerate(tree.blocks):
        if i and i in first:
            tree.blocks[b.parent].items.append(i)
    for n in drawn:
        tree.blocks[tree.block_of[n]].items.append(n)
    for b in tree.blocks:
        b.items.sort(key=lambda it: first[it] if isinstance(it, int) else tree.order[it])


def _compress(tree: Groups) -> None:
    """A block that holds nothing but one block gives its place to that block."""
    for i in range(len(tree.blocks) - 1, 0, -1):
        b = tree.blocks[i]
        if len(b.items) == 1 and isinstance(b.items[0], int):
            child = tree.blocks[b.items[0]]
            child.parent = b.parent
            siblings = tree.blocks[b.parent].items
            siblings[siblings.index(i)] = b.items[0]
            b.items = []
            b.parent = -2  # gone
    for i, b in enumerate(tree.blocks):
        if not b.items and i:
            b.parent = -2


def _signature(G: nx.MultiDiGraph, tree: Groups, b: int) -> tuple:
    out: list[tuple[str, str]] = []
    todo = [b]
    key = tree.blocks[b].key
    while todo:
        for it in tree.blocks[todo.pop()].items:
            if isinstance(it, int):
                todo.append(it)
            else:
                inner = tree.blocks[tree.block_of[it]].key
                out.append((G.nodes[it]["type"], inner[len(key):] if inner.startswith(key) else ""))
    return tuple(sorted(out))


def _repeats(G: nx.MultiDiGraph, tree: Groups) -> None:
    """Runs of sibling blocks with the same layers become one block ``×N``."""
    for p in range(len(tree.blocks)):
        parent = tree.blocks[p]
        if parent.parent == -2 or (p and parent.kind != "scope"):
            continue
        kids = [it for it in parent.items if isinstance(it, int)]
        sigs = {k: _signature(G, tree, k) for k in kids}
        run: list[int] = []
        for k in [*kids, None]:
            if k is not None and run and sigs[run[-1]] == sigs[k] and tree.blocks[k].items:
                run.append(k)
                continue
            if len(run) > 1:
                _group_run(tree, p, run)
            run = [k] if k is not None else []


def _group_run(tree: Groups, p: int, run: list[int]) -> None:
    parent = tree.blocks[p]
    first, last = tree.blocks[run[0]].key, tree.blocks[run[-1]].key
    common = 0
    while common < min(len(first), len(last)) and first[common] == last[common]:
        common += 1
    label = f"{first} … {last[common:] or last} ×{len(run)}"
    r = len(tree.blocks)
    tree.blocks.append(Block(first + "×", label, p, list(run), repeat=len(run), kind="repeat"))
    at = parent.items.index(run[0])
    parent.items = [it for it in parent.items if it not in set(run)]
    parent.items.insert(at, r)
    for k in run:
        tree.blocks[k].parent = r


def _chunk(tree: Groups) -> None:
    """A block of more than CHUNK items: its runs of layers become parts, then, if it is
    still too many, its items are cut into parts of consecutive items (a repeat block
    stays whole: it is its count)."""
    todo = [i for i, b in enumerate(tree.blocks) if b.parent != -2 and b.kind != "repeat"]
    while todo:
        i = todo.pop()
        b = tree.blocks[i]
        if len(b.items) <= CHUNK:
            continue
        runs: list[list[str | int]] = []
        for it in b.items:
            if isinstance(it, str) and runs and isinstance(runs[-1][-1], str):
                runs[-1].append(it)
            else:
                runs.append([it])
        if len(runs) > CHUNK or len(runs) == 1:
            size = CHUNK
            while -(-len(b.items) // size) > CHUNK:
                size *= CHUNK
            runs = [b.items[s:s + size] for s in range(0, len(b.items), size)]
        parts = [r for r in runs if len(r) > 1 or isinstance(r[0], str)]
        b.items = []
        for run in runs:
            if len(run) == 1 and (isinstance(run[0], int) or len(parts) == 1):
                b.items.append(run[0])
                continue
            c = len(tree.blocks)
            j = len([it for it in b.items if isinstance(it, int)
                     and tree.blocks[it].kind == "part"]) + 1
            name = b.label or "the model"
            tree.blocks.append(Block(f"{b.key}#part{j}", f"{name}, part {j} of {len(parts)}",
                                     i, run, kind="part"))
            for it in run:
                if isinstance(it, int):
                    tree.blocks[it].parent = c
                else:
                    tree.block_of[it] = c
            b.items.append(c)
            todo.append(c)


def _fill_sizes(tree: Groups) -> None:
    for b in tree.block_of.values():
        for c in tree.chain(b):
            tree.blocks[c].size += 1


def _layout(G: nx.MultiDiGraph, tree: Groups, label: Callable[[str, int], str]) -> None:
    """Edges to their innermost common block; ranks and order of each block's items;
    the shapes entering and leaving each block."""
    item_edges: dict[int, set[tuple[str | int, str | int]]] = {}
    seen = set()
    ins: dict[int, dict[str, None]] = {}
    outs: dict[int, dict[str, None]] = {}
    for u, v, key in G.edges(keys=True):
        if u not in tree.block_of or v not in tree.block_of or (u, v, key[0]) in seen:
            continue
        seen.add((u, v, key[0]))
        cu, cv = tree.chain(tree.block_of[u]), tree.chain(tree.block_of[v])
        common = set(cu) & set(cv)
        lca = next(b for b in cu if b in common)
        tree.blocks[lca].edges.append((u, v, key[0]))
        text = label(u, key[0])
        for b in cu[:cu.index(lca)]:
            outs.setdefault(b, {})[text] = None
        for b in cv[:cv.index(lca)]:
            ins.setdefault(b, {})[text] = None
        a = cu[cu.index(lca) - 1] if cu[0] != lca else u
        z = cv[cv.index(lca) - 1] if cv[0] != lca else v
        if a != z:
            item_edges.setdefault(lca, set()).add((a, z))
    for i, b in enumerate(tree.blocks):
        b.inputs, b.outputs = list(ins.get(i, {}))[:4], list(outs.get(i, {}))[:4]
        if b.parent != -2:
            _rank(b, item_edges.get(i, set()))


def _rank(b: Block, edges: set[tuple[str | int, str | int]]) -> None:
    pos = {it: k for k, it in enumerate(b.items)}
    preds: dict[str | int, list[str | int]] = {}
    for a, z in edges:
        if pos[a] < pos[z]:
            preds.setdefault(z, []).append(a)
    rank: dict[str | int, int] = {}
    for it in b.items:
        rank[it] = max((rank[p] + 1 for p in preds.get(it, ())), default=0)
    rows: dict[int, list[str | int]] = {}
    for it in b.items:
        rows.setdefault(rank[it], []).append(it)
    place: dict[str | int, float] = {}
    items = []
    for r in sorted(rows):
        row = sorted(rows[r], key=lambda it: (
            sum(place[p] for p in preds.get(it, ())) / len(preds[it]) if preds.get(it)
            else float(pos[it]), pos[it]))
        for k, it in enumerate(row):
            place[it] = float(k)
        items += row
    b.items = items
    b.ranks = [rank[it] for it in items]


def choose_open(tree: Groups, budget: int, must: Iterable[int] = (),
                max_ranks: int | None = None) -> set[int]:
    """The blocks open in a first view: ``must`` and the blocks that hold them, then
    breadth first (no repeat block) while at most ``budget`` items are visible and, with
    ``max_ranks``, the picture is at most that many ranks tall."""
    opened = {0}
    for b in must:
        opened.update(tree.chain(b))
    visible = _visible(tree, opened)
    queue = [it for b in sorted(opened) for it in tree.blocks[b].items if isinstance(it, int)]
    while queue:
        c = queue.pop(0)
        blk = tree.blocks[c]
        if c in opened:
            continue
        if blk.kind == "repeat" or visible + len(blk.items) - 1 > budget:
            continue
        if max_ranks is not None and _height(tree, opened | {c}, 0) > max_ranks:
            continue
        opened.add(c)
        visible += len(blk.items) - 1
        queue += [it for it in blk.items if isinstance(it, int)]
    return opened


def _visible(tree: Groups, opened: set[int]) -> int:
    return sum(len(tree.blocks[b].items) - 1 for b in opened) + 1


def _height(tree: Groups, opened: set[int], b: int) -> int:
    """Ranks a block takes when drawn with ``opened`` open."""
    blk = tree.blocks[b]
    rows: dict[int, int] = {}
    for it, r in zip(blk.items, blk.ranks, strict=True):
        h = _height(tree, opened, it) + 1 if isinstance(it, int) and it in opened else 1
        rows[r] = max(rows.get(r, 0), h)
    return sum(rows.values())
