"""Which layer of model A is which layer of model B: the pairing behind ``diff``.

Both graphs are read through networkx's adjacency layout only (``_node``, ``_pred``,
``_succ``), so a ``MultiDiGraph`` and the reader's ``LayerGraph`` (what ``ovgather diff``
reads, without importing networkx) are paired alike. The stages:

1. **weights**: a Const of A and a Const of B with the same element type, shape and bytes
   (a blake2b of the bytes), each the only one of its kind: anchors no renaming moves (a
   Const that moved in the .bin is not a change); so is a model input that is the only
   one of its element type and shape.
2. **structure**, from every pair made: a producer of a paired layer pairs with the
   producer at the same input of its partner when both are of one type (a decompression
   ``Convert`` in one model only is looked through, so the FP16 Const pairs with the FP32
   one); the consumers of a pair pair up by their signature (type, version, attributes,
   the partners of their producers) when it is unique among them.
3. **names**: a friendly name, then an output tensor name, that one layer of each model
   holds, on two layers of one type (two Consts: of one element type and shape). A name
   is only a hint (a re-export may hand the names out anew): a pair stands when more of
   its neighbours agree with it than contradict it (:func:`_support`), so a shuffle of
   the names pairs nothing wrong.
4. **structure again**, strict, then with the version and attributes left out of the
   consumers' signature (a layer whose attributes changed), then the consumers at the
   same input of a pair that are the only ones of their type there; and the name pairs
   the result now supports (a Result or Parameter also when nothing contradicts it).

A pair whose friendly names agree is counted ``by name`` whichever stage found it.
What stays unpaired is removed (A) or added (B). Nothing here reads the values of the
weights besides their hash; the report (``diff_report.py``) says what differs in each pair.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ..ir import const_nbytes, weights_bytes
from ..ir.weights import const_layout

__all__ = ["Side", "Pairing", "pair_graphs", "CONST_TYPES"]

#: the layer types that hold weights
CONST_TYPES = frozenset({"Const", "Constant"})
#: data attributes of a Const that say where its bytes are, not what they are
LAYOUT_ATTRS = frozenset({"offset", "size"})


class Side:
    """One model as the pairing reads it: each layer's inputs (producer, output index) in
    port order, its consumers, its signature and, for a Const, its content key."""

    def __init__(self, G: Any) -> None:
        self.G = G
        self.node: dict[str, dict] = G._node
        self.order = list(self.node)
        self.order_index = {n: k for k, n in enumerate(self.order)}
        pred, succ = G._pred, G._succ
        self.ins: dict[str, list[tuple[str, int] | None]] = {}
        self.cons: dict[str, list[str]] = {}
        node = self.node
        for n, attrs in node.items():
            by_port: dict[int, tuple[str, int]] = {}
            for u, keys in pred[n].items():
                outs = node[u].get("outputs") or ()
                for from_port, to_port in keys:
                    if len(outs) == 1 and outs[0]["id"] == from_port:
                        by_port[to_port] = (u, 0)
                    else:
                        by_port[to_port] = (u, next((k for k, p in enumerate(outs)
                                                     if p["id"] == from_port), from_port))
            ins = attrs.get("inputs") or ()
            if len(ins) == 1:
                self.ins[n] = [by_port.get(ins[0]["id"])]
            else:
                self.ins[n] = [by_port.get(p["id"]) for p in ins]
            self.cons[n] = list(succ[n])
        self.names: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.tensors: dict[str, list[str]] = defaultdict(list)
        for n, attrs in self.node.items():
            self.names[(attrs.get("name"), attrs.get("type"))].append(n)
            for p in attrs.get("outputs") or ():
                for t in p.get("names") or ():
                    self.tensors[t].append(n)
        self._content: dict[str, tuple] = {}
        self._sig: dict[str, tuple] = {}

    def content(self, n: str) -> tuple:
        """(element type, shape, hash of the bytes) of Const ``n``."""
        got = self._content.get(n)
        if got is None:
            got = self._content[n] = const_content(self.G, n)
        return got

    def sig(self, n: str) -> tuple:
        """What a layer is, apart from its name and neighbours: type, version, attributes
        (a Const: its content)."""
        got = self._sig.get(n)
        if got is None:
            attrs = self.node[n]
            kind = attrs.get("type")
            if kind in CONST_TYPES:
                rest: tuple = self.content(n)
            else:
                rest = tuple(sorted((attrs.get("data") or {}).items()))
            got = self._sig[n] = (kind, attrs.get("version"), len(attrs.get("inputs") or ()),
                                  rest)
        return got


def const_content(G: Any, n: str) -> tuple:
    """(element type, shape, digest) of a Const's data: the bytes of a ``value`` added in
    memory, else the bytes its ``<data>`` points at in the weights."""
    attrs = G._node[n]
    value = attrs.get("value")
    if value is not None:
        from .._lazy import numpy as np

        array = np.asarray(value)  # (ascontiguousarray would make a scalar 1-d)
        data = attrs.get("data") or {}
        return (data.get("element_type"), tuple(array.shape),
                hashlib.blake2b(array.tobytes(), digest_size=16).digest())
    try:
        et, shape, offset, size = const_layout(attrs)
    except Exception:  # an unreadable <data>: the layer is compared by its attributes
        data = attrs.get("data") or {}
        return (data.get("element_type"), data.get("shape"), None)
    need = const_nbytes(et.name, shape)
    raw = weights_bytes(G, offset, size if need is None else need)
    return (et.name, shape, hashlib.blake2b(raw, digest_size=16).digest())


class Pairing:
    """A ↔ B, with how each pair was found (``how[a]``)."""

    def __init__(self, A: Side, B: Side) -> None:
        self.A, self.B = A, B
        self.a2b: dict[str, str] = {}
        self.b2a: dict[str, str] = {}
        self.how: dict[str, str] = {}
        self.queue: list[tuple[str, str]] = []

    def add(self, a: str, b: str, how: str) -> None:
        self.a2b[a] = b
        self.b2a[b] = a
        self.how[a] = how
        self.queue.append((a, b))

    # -- stage 3: structure -------------------------------------------------------------------
    def spread(self, loose: int = 0) -> None:
        """Pair producers and consumers from every pair in the queue until it is empty;
        ``loose`` 1 leaves the version and attributes out of the consumers' signature,
        2 also their other producers."""
        A, B, a2b, b2a = self.A, self.B, self.a2b, self.b2a
        queue = self.queue
        while queue:
            a, b = queue.pop()
            for i, (pa, pb) in enumerate(zip(A.ins[a], B.ins[b], strict=False)):
                if pa is None or pb is None:
                    continue
                self._producers(pa[0], pb[0], i)
            ca = [c for c in A.cons[a] if c not in a2b]
            cb = [c for c in B.cons[b] if c not in b2a]
            if ca and cb:
                self._consumers(a, b, ca, cb, loose)

    def _producers(self, pa: str, pb: str, i: int) -> None:
        A, B = self.A, self.B
        if pa in self.a2b or pb in self.b2a:
            return
        ta, tb = A.node[pa].get("type"), B.node[pb].get("type")
        if ta == tb:
            self.add(pa, pb, "structure")
            return
        # a decompression Convert (FP16 weights) in one model only: look through it
        if tb == "Convert" and ta in CONST_TYPES and B.ins[pb] and B.ins[pb][0]:
            inner = B.ins[pb][0][0]
            if inner not in self.b2a and B.node[inner].get("type") == ta:
                self.add(pa, inner, "structure")
        elif ta == "Convert" and tb in CONST_TYPES and A.ins[pa] and A.ins[pa][0]:
            inner = A.ins[pa][0][0]
            if inner not in self.a2b and A.node[inner].get("type") == tb:
                self.add(inner, pb, "structure")

    def _consumers(self, a: str, b: str, ca: list[str], cb: list[str], loose: int) -> None:
        A, B, a2b, b2a = self.A, self.B, self.a2b, self.b2a

        def key_a(c: str) -> tuple:
            if loose == 2:  # where it reads ``a``
                return (A.sig(c)[::2][:2], tuple(i for i, p in enumerate(A.ins[c])
                                            if p is not None and p[0] == a))
            return (A.sig(c) if not loose else A.sig(c)[::2][:2],
                    tuple(None if p is None or p[0] not in a2b else (a2b[p[0]], p[1])
                          for p in A.ins[c]))

        def key_b(c: str) -> tuple:
            if loose == 2:
                return (B.sig(c)[::2][:2], tuple(i for i, p in enumerate(B.ins[c])
                                            if p is not None and p[0] == b))
            return (B.sig(c) if not loose else B.sig(c)[::2][:2],
                    tuple(None if p is None or p[0] not in b2a else p for p in B.ins[c]))

        if len(ca) == 1 and len(cb) == 1:  # the usual chain: no grouping needed
            if key_a(ca[0]) == key_b(cb[0]):
                self.add(ca[0], cb[0], "structure")
            return
        ka = _unique((key_a(c), c) for c in dict.fromkeys(ca))
        kb = _unique((key_b(c), c) for c in dict.fromkeys(cb))
        for k, c in ka.items():
            other = kb.get(k)
            if other is not None and c not in a2b and other not in b2a:
                self.add(c, other, "structure")


def _unique(items: Iterable[tuple[Any, str]]) -> dict[Any, str]:
    """key -> item for the keys that only one item has."""
    seen: dict[Any, str | None] = {}
    for k, c in items:
        seen[k] = None if k in seen else c
    return {k: c for k, c in seen.items() if c is not None}


def _name_pairs(A: Side, B: Side) -> dict[str, tuple[str, str]]:
    """a -> (b, how) for the layers one friendly name, or else one tensor name, pairs
    (each name held by one layer of each model, the two of one type)."""
    pairs: dict[str, tuple[str, str]] = {}
    taken: set[str] = set()
    for key, found in A.names.items():
        other = B.names.get(key)
        if len(found) == 1 and other is not None and len(other) == 1:
            pairs[found[0]] = (other[0], "name")
            taken.add(other[0])
    for t, found in A.tensors.items():
        other = B.tensors.get(t)
        if len(found) != 1 or other is None or len(other) != 1:
            continue
        a, b = found[0], other[0]
        if a in pairs or b in taken or A.node[a].get("type") != B.node[b].get("type"):
            continue
        pairs[a] = (b, "tensor name")
        taken.add(b)
    return pairs


def _support(A: Side, B: Side, a: str, b: str, a2b: dict[str, str],
             b2a: dict[str, str]) -> tuple[int, int]:
    """(agree, contradict): the neighbours of ``a`` whose partners are the neighbours of
    ``b`` at the same place, and those paired elsewhere."""
    agree = contradict = 0
    for pa, pb in zip(A.ins[a], B.ins[b], strict=False):
        if pa is None or pb is None:
            continue
        got = a2b.get(pa[0])
        if got == pb[0]:
            agree += 1
        elif got is not None and pb[0] in b2a:
            contradict += 1
    for c in A.cons[a]:
        got = a2b.get(c)
        if got is None:
            continue
        if any(p is not None and p[0] == b for p in B.ins[got]):
            agree += 1
        else:
            contradict += 1
    return agree, contradict


def _alike(A: Side, B: Side, a: str, b: str) -> bool:
    """Two layers a name may pair at first sight: as many inputs, and two Consts of one
    element type and shape (a pair that fails this may still stand at the end)."""
    if len(A.ins[a]) != len(B.ins[b]):
        return False
    if A.node[a].get("type") in CONST_TYPES:
        return A.content(a)[:2] == B.content(b)[:2]
    return True


def _open(S: Side, n: str, paired: dict[str, str]) -> bool:
    """Whether a neighbour of ``n`` is unpaired."""
    return any(p is not None and p[0] not in paired for p in S.ins[n]) or any(
        c not in paired for c in S.cons[n])


def _supported(agree: int, contradict: int, final: bool = False) -> bool:
    """A name pair stands when more neighbours agree with it than contradict it: a name
    alone is no proof (a shuffle of the names would pair the wrong layers). ``final``:
    after the structure, when a pair no neighbour contradicts also stands (a Result that
    now reads an added layer)."""
    return agree > contradict or (final and contradict == 0)


def pair_graphs(GA: Any, GB: Any) -> Pairing:
    """Pair the layers of ``GA`` with those of ``GB`` (see the module docstring)."""
    A, B = Side(GA), Side(GB)
    P = Pairing(A, B)
    # 1. weights by content: the anchors a renaming cannot move
    consts_a = [n for n in A.order if A.node[n].get("type") in CONST_TYPES]
    consts_b = [n for n in B.order if B.node[n].get("type") in CONST_TYPES]
    if consts_a and consts_b:
        ka = _unique((A.content(n), n) for n in consts_a)
        kb = _unique((B.content(n), n) for n in consts_b)
        for k, a in ka.items():
            b = kb.get(k)
            if b is not None and k[2] is not None:
                P.add(a, b, "weights")
    # the model inputs each the only one of its element type and shape
    la = [n for n in A.order if A.node[n].get("type") == "Parameter"]
    lb = [n for n in B.order if B.node[n].get("type") == "Parameter"]
    if la and lb:
        kb = _unique((B.sig(n), n) for n in lb)
        for k, a in _unique((A.sig(n), n) for n in la).items():
            if kb.get(k) is not None and a not in P.a2b and kb[k] not in P.b2a:
                P.add(a, kb[k], "structure")
    # 2. structure from them, strictly
    P.spread()
    # 3. names, where the neighbours agree with them more than they contradict them
    cand = _name_pairs(A, B)
    a2b = dict(P.a2b)
    b2a = dict(P.b2a)
    tried = {a: b for a, (b, _) in cand.items()
             if a not in P.a2b and b not in P.b2a and _alike(A, B, a, b)}
    a2b.update(tried)
    b2a.update({b: a for a, b in tried.items()})
    for _ in range(8):
        drop = [a for a, b in tried.items()
                if not _supported(*_support(A, B, a, b, a2b, b2a))]
        if not drop:
            break
        for a in drop:
            del b2a[tried.pop(a)]
            del a2b[a]
    for a, b in tried.items():
        P.add(a, b, cand[a][1])
    # the model inputs: one of each side left
    la = [n for n in A.order if n not in P.a2b and A.node[n].get("type") == "Parameter"]
    lb = [n for n in B.order if n not in P.b2a and B.node[n].get("type") == "Parameter"]
    if len(la) == 1 and len(lb) == 1:
        P.add(la[0], lb[0], "structure")
    # 4. structure again, strict then looser; the names the result now supports
    for _ in range(4):
        before = len(P.a2b)
        P.spread()
        for loose in (1, 2):
            if len(P.a2b) in (len(A.order), len(B.order)):
                break
            P.queue = [(a, b) for a, b in P.a2b.items() if _open(A, a, P.a2b)]
            P.spread(loose)
            P.spread()
        for a, (b, how) in cand.items():
            if a not in P.a2b and b not in P.b2a and _supported(
                    *_support(A, B, a, b, P.a2b, P.b2a),
                    final=A.node[a].get("type") in ("Result", "Parameter")):
                P.add(a, b, how)
        if len(P.a2b) == before:
            break
    for a, b in P.a2b.items():  # a pair whose names agree was found by its name, too
        if A.node[a].get("name") == B.node[b].get("name"):
            P.how[a] = "name"
    return P
