"""``diff``: what changed between two IRs, layer by layer, without running either.

The question after a converter upgrade, an FP16 compression, ``ovgather convert`` or
``reshape``, or a hand edit. The layers of A and B are paired (``diff_match``: by weights,
structure and names, names only where the structure agrees, so a re-export that renames
everything still pairs); then for each pair exactly what differs: the name, type and version,
each attribute, each port's declared dims, element type and tensor names, where an input
comes from (when both producers are paired), each ``rt_info`` entry and the weights (same
bytes; values that differ by a largest absolute and relative amount; another shape or
element type), and the bodies of a Loop, TensorIterator or If, diffed the same way.
What stays unpaired is removed (only in A) or added (only in B); a connected run of
removed layers and a run of added ones that sit between the same paired layers (a block
fused or decomposed) is one replacement. Besides the layers: the model's inputs and
outputs and their names, the net name, the IR version and the model-level ``rt_info``.

:func:`diff` returns a :class:`DiffReport` (``equal``, ``to_dict()`` as in docs/json.md,
and a bounded HTML table in a notebook). Reading the bytes of the weights is the only I/O
besides the two files: a Const is compared by a hash of its bytes, its values only when
the hashes differ.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from .diff_match import CONST_TYPES, LAYOUT_ATTRS, Pairing, Side, pair_graphs
from .diff_values import rt_entries, value_change

__all__ = ["diff", "DiffReport", "LayerDiff", "change_text", "HTML_ROWS"]

#: rows of the notebook table at most (the rest counted)
HTML_ROWS = 200


@dataclass
class LayerDiff:
    """One layer that differs: ``status`` is ``changed`` (paired, something besides the
    name differs), ``renamed`` (paired, only the name differs), ``added`` or ``removed``;
    ``a``/``b`` are ``{"id", "name", "type"}`` (None on the side without it)."""

    status: str
    a: dict | None
    b: dict | None
    paired_by: str | None = None
    changes: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "a": self.a, "b": self.b, "paired_by": self.paired_by,
                "changes": self.changes}


@dataclass
class DiffReport:
    """What :func:`diff` found. ``equal`` when nothing differs."""

    a: str | None
    b: str | None
    summary: dict[str, Any]
    model: list[dict]
    inputs: list[dict]
    outputs: list[dict]
    layers: list[LayerDiff]
    replaced: list[dict]
    #: A's layer id -> B's, every pair (not in the JSON: for callers and tests)
    pairs: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def equal(self) -> bool:
        return not (self.model or self.inputs or self.outputs or self.layers or self.replaced)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "equal": self.equal, "summary": self.summary,
                "model": self.model, "inputs": self.inputs, "outputs": self.outputs,
                "layers": [d.to_dict() for d in self.layers], "replaced": self.replaced}

    def _repr_html_(self) -> str:
        from html import escape

        rows: list[tuple[str, str, str, str]] = []
        for c in self.model:
            rows.append(("model", "", "", change_text(c)))
        for io in (*self.inputs, *self.outputs):
            rows.append((io["status"], io["a"] or "", io["b"] or "",
                         "; ".join(change_text(c) for c in io["changes"])))
        for d in self.layers:
            rows.append((d.status, _ref_text(d.a), _ref_text(d.b),
                         "; ".join(change_text(c) for c in d.changes)))
        for r in self.replaced:
            rows.append(("replaced", ", ".join(map(_ref_text, r["removed"])),
                         ", ".join(map(_ref_text, r["added"])), ""))
        head = escape(stat_line(self))
        cells = "".join(
            "<tr>" + "".join(f"<td style='text-align:left'>{escape(x)}</td>" for x in row)
            + "</tr>" for row in rows[:HTML_ROWS])
        more = (f"<p>… and {len(rows) - HTML_ROWS} more rows (to_dict() has them all)</p>"
                if len(rows) > HTML_ROWS else "")
        table = ("<table><tr><th>status</th><th>A</th><th>B</th><th>what</th></tr>"
                 f"{cells}</table>") if rows else ""
        return f"<div><p><b>{head}</b></p>{table}{more}</div>"


def _ref_text(ref: dict | None) -> str:
    return "" if ref is None else f"{ref['name']} ({ref['type']})"


def change_text(c: dict) -> str:
    """One change in words: ``attribute batch_dims: 1 -> 2``."""
    where = c.get("where")
    what = c["what"] if where is None else (
        f"{where} {c['what']}" if where.startswith(("input ", "output ")) else
        f"{c['what']} {where}")
    a, b = ("-" if c["a"] is None else c["a"] or "(none)"), (
        "-" if c["b"] is None else c["b"] or "(none)")
    text = f"{what}: {a} -> {b}"
    said = []
    if c.get("max_abs") is not None:
        said.append(f"max abs {c['max_abs']:.3g}")
    if c.get("max_rel") is not None:
        said.append(f"max rel {c['max_rel']:.3g}")
    if c.get("note"):
        said.insert(0, c["note"])
    elif said:
        said.insert(0, "values differ")
    if said:
        text += f" ({', '.join(said)})"
    return text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def stat_line(report: DiffReport) -> str:
    """``a.xml -> b.xml: 2 changed, 1 added``, or ``…: no difference``."""
    s = report.summary
    said = [f"{s[k]} {k}" for k in ("changed", "renamed", "added", "removed") if s[k]]
    if s["replaced"]:
        said.append(f"{_plural(s['replaced'], 'replacement')}")
    for what in ("inputs", "outputs"):
        n = len(getattr(report, what))
        if n:
            said.append(f"{n} {what[:-1]}{'' if n == 1 else 's'} differ{'s' if n == 1 else ''}")
    if report.model:
        said.append(f"{_plural(len(report.model), 'model field')}")
    label_a, label_b = labels(report.a, report.b)
    return f"{label_a} -> {label_b}: {', '.join(said) if said else 'no difference'}"


def labels(a: str | None, b: str | None) -> tuple[str, str]:
    """The two paths by their shortest distinct suffixes (the basenames when they differ)."""
    if a is None or b is None:
        return (os.path.basename(a) if a else "A", os.path.basename(b) if b else "B")
    pa = [p for p in os.path.normpath(a).replace(os.sep, "/").split("/") if p] or [a]
    pb = [p for p in os.path.normpath(b).replace(os.sep, "/").split("/") if p] or [b]
    for n in range(1, max(len(pa), len(pb)) + 1):
        sa, sb = "/".join(pa[-n:]), "/".join(pb[-n:])
        if sa != sb:
            return sa, sb
    return pa[-1], pb[-1]


# -- the model ----------------------------------------------------------------------------------
def _read(model: Any, which: str) -> tuple[Any, str | None]:
    """A graph and its path: a path is read (without networkx), a graph taken as it is."""
    if isinstance(model, (str, os.PathLike)):
        from ..ir.reader import read_layer_graph

        path = os.fspath(model)
        if path.lower().endswith(".onnx"):
            raise UsageError("diff compares OpenVINO IRs (.xml with its .bin); convert an "
                             ".onnx model first (openvino.save_model of "
                             "openvino.convert_model)", file=path)
        return read_layer_graph(path, records=False), path
    if hasattr(model, "_node") and hasattr(model, "_pred") and hasattr(model, "graph"):
        return model, model.graph.get("xml_path")
    raise UsageError(f"diff takes two IR paths or graphs (read_ir), but model {which} is "
                     f"a {type(model).__name__}")


def diff(a: Any, b: Any) -> DiffReport:
    """What changed from model ``a`` to model ``b`` (each a path to an IR ``.xml`` or a
    graph from ``read_ir``): see the module docstring. Raises an
    :class:`~ovgather.errors.IRError` naming the file for a model that cannot be read."""
    GA, path_a = _read(a, "A")
    GB, path_b = _read(b, "B")
    report = _diff_graphs(GA, GB)
    report.a, report.b = path_a, path_b
    return report


def _diff_graphs(GA: Any, GB: Any) -> DiffReport:
    from ..ir.reader import gc_paused

    with gc_paused():  # many small objects, all kept till the end
        return _diff_paused(GA, GB)


def _diff_paused(GA: Any, GB: Any) -> DiffReport:
    P = pair_graphs(GA, GB)
    A, B = P.A, P.B
    layers: list[LayerDiff] = []
    changed = renamed = 0
    for a in A.order:
        b = P.a2b.get(a)
        if b is None:
            continue
        changes = layer_changes(P, a, b)
        if changes:
            only_name = all(c["what"] in ("name", "tensor names") for c in changes)
            status = "renamed" if only_name else "changed"
            renamed += only_name
            changed += not only_name
            layers.append(LayerDiff(status, _ref(A, a), _ref(B, b), P.how[a], changes))
    removed = [a for a in A.order if a not in P.a2b]
    added = [b for b in B.order if b not in P.b2a]
    replaced, lone_removed, lone_added = _replacements(P, removed, added)
    layers += [LayerDiff("removed", _ref(A, a), None) for a in lone_removed]
    layers += [LayerDiff("added", None, _ref(B, b)) for b in lone_added]
    how: dict[str, int] = {}
    for v in P.how.values():
        how[v] = how.get(v, 0) + 1
    summary = {"layers_a": len(A.order), "layers_b": len(B.order), "paired": len(P.a2b),
               "paired_by": how, "changed": changed, "renamed": renamed,
               "added": len(added), "removed": len(removed), "replaced": len(replaced)}
    return DiffReport(None, None, summary, _model_changes(GA, GB), _inputs(P), _outputs(P),
                      layers, replaced, dict(P.a2b))


def _ref(S: Side, n: str) -> dict:
    attrs = S.node[n]
    return {"id": str(n), "name": attrs.get("name"), "type": attrs.get("type")}


def _change(what: str, where: str | None, a: Any, b: Any, **extra: Any) -> dict:
    return {"what": what, "where": where, "a": a, "b": b, **extra}


def _model_changes(GA: Any, GB: Any) -> list[dict]:
    out = []
    for key in ("name", "ir_version"):
        va, vb = GA.graph.get(key), GB.graph.get(key)
        if va != vb:
            out.append(_change(key, None, _text(va), _text(vb)))
    out += _rt_changes(GA.graph.get("rt_info"), GB.graph.get("rt_info"))
    return out


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _rt_changes(ta: str | None, tb: str | None, where: str = "") -> list[dict]:
    if ta == tb:
        return []
    ea, eb = rt_entries(ta), rt_entries(tb)
    return [_change("rt_info", f"{where}{k}", ea.get(k), eb.get(k))
            for k in dict.fromkeys([*ea, *eb]) if ea.get(k) != eb.get(k)]


# -- one pair of layers -------------------------------------------------------------------------
def dims_text(dims: Any) -> str:
    return "[" + ",".join("?" if d == -1 else str(d) for d in dims or ()) + "]"


def _same_sources(P: Pairing, a: str, b: str) -> bool:
    a2b = P.a2b
    for pa, pb in zip(P.A.ins[a], P.B.ins[b], strict=False):
        if pa is not None and pb is not None and (a2b.get(pa[0]), pa[1]) != pb:
            return False
    return True


#: what must be equal for :func:`_names_only`
_SAME = ("type", "version", "layer_attrs", "inputs", "rt_info", "bodies", "port_maps",
         "back_edges", "extra_xml")
#: what must be equal of each output port for :func:`_names_only`
_SAME_PORT = ("id", "dims", "precision", "rt_info", "attrs", "extra_xml")


def _names_only(P: Pairing, a: str, b: str, na: dict, nb: dict) -> list[dict] | None:
    """The changes of a pair when at most its names differ (the friendly name, the tensor
    names: what a re-export changes in every layer), else None; the quick path."""
    for k in _SAME:
        if na.get(k) != nb.get(k):
            return None
    da, db = na.get("data"), nb.get("data")
    is_const = na.get("type") in CONST_TYPES
    if da != db and not (is_const and {k: v for k, v in (da or {}).items()
                                       if k not in LAYOUT_ATTRS}
                         == {k: v for k, v in (db or {}).items() if k not in LAYOUT_ATTRS}):
        return None
    if not _same_sources(P, a, b) or (is_const and P.A.content(a) != P.B.content(b)):
        return None
    out: list[dict] = []
    if na.get("name") != nb.get("name"):
        out.append(_change("name", None, na.get("name"), nb.get("name")))
    oa, ob = na.get("outputs") or [], nb.get("outputs") or []
    if oa != ob:
        if len(oa) != len(ob):
            return None
        for k, (x, y) in enumerate(zip(oa, ob, strict=True)):
            if x == y:
                continue
            if any(x.get(f) != y.get(f) for f in _SAME_PORT):
                return None
            out.append(_change("tensor names", f"output {k}", ", ".join(x.get("names") or ()),
                               ", ".join(y.get("names") or ())))
    return out


def layer_changes(P: Pairing, a: str, b: str) -> list[dict]:
    """Everything that differs between layer ``a`` of A and its partner ``b`` of B."""
    A, B = P.A, P.B
    na, nb = A.node[a], B.node[b]
    quick = _names_only(P, a, b, na, nb)
    if quick is not None:
        return quick
    out: list[dict] = []
    for key in ("name", "type", "version"):
        if na.get(key) != nb.get(key):
            out.append(_change(key, None, na.get(key), nb.get(key)))
    is_const = na.get("type") in CONST_TYPES and nb.get("type") in CONST_TYPES
    skip = LAYOUT_ATTRS | {"element_type", "shape"} if is_const else frozenset()
    for what, da, db in (("attribute", na.get("data") or {}, nb.get("data") or {}),
                         ("attribute", na.get("layer_attrs") or {},
                          nb.get("layer_attrs") or {})):
        if da == db:
            continue
        for k in dict.fromkeys([*da, *db]):
            if k not in skip and da.get(k) != db.get(k):
                out.append(_change(what, k, da.get(k), db.get(k)))
    out += _port_changes(na, nb)
    for i, (pa, pb) in enumerate(zip(A.ins[a], B.ins[b], strict=False)):
        if pa is None or pb is None:
            continue
        mapped = P.a2b.get(pa[0])
        if mapped is None or pb[0] not in P.b2a or (mapped, pa[1]) == tuple(pb):
            continue
        out.append(_change("source", f"input {i}", f"{A.node[pa[0]].get('name')}:{pa[1]}",
                           f"{B.node[pb[0]].get('name')}:{pb[1]}"))
    out += _rt_changes(na.get("rt_info"), nb.get("rt_info"))
    if is_const:
        ca, cb = A.content(a), B.content(b)
        if ca != cb:
            out.append(value_change(A.G, a, B.G, b, ca, cb))
    if na.get("bodies") or nb.get("bodies"):
        out += _body_changes(na, nb)
    if na.get("extra_xml") != nb.get("extra_xml"):
        out.append(_change("extra XML", None, _count(na.get("extra_xml")),
                           _count(nb.get("extra_xml"))))
    return out


def _count(items: Any) -> str:
    return _plural(len(items or ()), "element")


def _port_changes(na: dict, nb: dict) -> list[dict]:
    out = []
    for kind in ("inputs", "outputs"):
        pa, pb = na.get(kind) or [], nb.get(kind) or []
        if pa == pb:
            continue
        word = kind[:-1]
        if len(pa) != len(pb):
            out.append(_change("ports", kind, str(len(pa)), str(len(pb))))
        for k, (x, y) in enumerate(zip(pa, pb, strict=False)):
            where = f"{word} {k}"
            if tuple(x.get("dims") or ()) != tuple(y.get("dims") or ()):
                out.append(_change("dims", where, dims_text(x.get("dims")),
                                   dims_text(y.get("dims"))))
            if x.get("precision") != y.get("precision"):
                out.append(_change("element type", where, x.get("precision"),
                                   y.get("precision")))
            if kind == "outputs" and list(x.get("names") or ()) != list(y.get("names") or ()):
                out.append(_change("tensor names", where, ", ".join(x.get("names") or ()),
                                   ", ".join(y.get("names") or ())))
            out += _rt_changes(x.get("rt_info"), y.get("rt_info"), f"{where} ")
    return out


def _body_changes(na: dict, nb: dict) -> list[dict]:
    out = []
    ba, bb = na.get("bodies") or {}, nb.get("bodies") or {}
    for name in dict.fromkeys([*ba, *bb]):
        ga, gb = ba.get(name), bb.get(name)
        if ga is None or gb is None:
            out.append(_change("body", name, None if ga is None else "present",
                               None if gb is None else "present"))
            continue
        sub = _diff_graphs(ga, gb)
        if not sub.equal:
            s = sub.summary
            said = ", ".join(f"{s[k]} {k}" for k in ("changed", "renamed", "added", "removed")
                             if s[k]) or "inputs or outputs differ"
            named = [_ref_text(d.a or d.b) for d in sub.layers]
            if named:
                said += ": " + ", ".join(named[:5]) + (" …" if len(named) > 5 else "")
            out.append(_change("body", name, f"{s['layers_a']} layers",
                               f"{s['layers_b']} layers", note=said))
    for key in ("port_maps", "back_edges"):
        if (na.get(key) or {}) != (nb.get(key) or {}):
            out.append(_change(key.replace("_", " "), None, "as in A", "differs"))
    return out


# -- inputs, outputs ----------------------------------------------------------------------------
def _of_type(P: Pairing, kind: str) -> tuple[list[str], list[str]]:
    """The layers of ``kind`` in A and in B, each in its model's order."""
    return tuple([n for n in S.order if S.node[n].get("type") == kind] for S in (P.A, P.B))


def _inputs(P: Pairing) -> list[dict]:
    pa, pb = _of_type(P, "Parameter")

    def facts(S: Side, n: str) -> dict:
        attrs = S.node[n]
        data = attrs.get("data") or {}
        outs = attrs.get("outputs") or [{}]
        return {"name": attrs.get("name"), "tensor names": ", ".join(outs[0].get("names") or ()),
                "shape": data.get("shape"), "element type": data.get("element_type")}

    return _io(P, pa, pb, facts)


def _outputs(P: Pairing) -> list[dict]:
    ra, rb = _of_type(P, "Result")

    def facts(S: Side, n: str) -> dict:
        attrs = S.node[n]
        src = S.ins[n][0] if S.ins[n] else None
        names = ""
        if src is not None:
            ports = S.node[src[0]].get("outputs") or []
            if src[1] < len(ports):
                names = ", ".join(ports[src[1]].get("names") or ())
        ins = attrs.get("inputs") or [{}]
        return {"name": attrs.get("name"), "tensor names": names,
                "shape": dims_text(ins[0].get("dims")), "element type": ins[0].get("precision")}

    return _io(P, ra, rb, facts)


def _io(P: Pairing, la: list[str], lb: list[str], facts: Any) -> list[dict]:
    out = []
    for a in la:
        b = P.a2b.get(a)
        fa = facts(P.A, a)
        if b is None or b not in lb:
            out.append({"status": "removed", "a": fa["name"], "b": None, "changes": []})
            continue
        fb = facts(P.B, b)
        changes = [_change(k, None, fa[k], fb[k]) for k in fa if fa[k] != fb[k]]
        if changes:
            out.append({"status": "changed", "a": fa["name"], "b": fb["name"],
                        "changes": changes})
    paired = {P.a2b.get(a) for a in la}
    for b in lb:
        if b not in paired:
            out.append({"status": "added", "a": None, "b": facts(P.B, b)["name"],
                        "changes": []})
    return out


# -- runs replaced by runs ----------------------------------------------------------------------
def _replacements(P: Pairing, removed: list[str], added: list[str]
                  ) -> tuple[list[dict], list[str], list[str]]:
    """Connected runs of removed layers and of added ones that touch the same paired
    layers (in B's ids), merged into replacements; the layers of no replacement."""
    A, B = P.A, P.B

    def runs(S: Side, nodes: list[str]) -> list[list[str]]:
        inside = set(nodes)
        seen: set[str] = set()
        out = []
        for n in nodes:
            if n in seen:
                continue
            run, todo = [], [n]
            seen.add(n)
            while todo:
                x = todo.pop()
                run.append(x)
                for y in [*(p[0] for p in S.ins[x] if p is not None), *S.cons[x]]:
                    if y in inside and y not in seen:
                        seen.add(y)
                        todo.append(y)
            order = {m: k for k, m in enumerate(run)}
            out.append(sorted(run, key=lambda m: (S.order_index[m], order[m])))
        return out

    runs_a, runs_b = runs(A, removed), runs(B, added)

    def border(S: Side, run: list[str]) -> set[str]:
        inside = set(run)
        near = {p[0] for x in run for p in S.ins[x] if p is not None}
        return (near | {c for x in run for c in S.cons[x]}) - inside

    # union-find over the runs: A's runs 0..n-1, B's n..; joined by a paired layer both touch
    parent = list(range(len(runs_a) + len(runs_b)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    touch: dict[str, list[int]] = {}
    for k, run in enumerate(runs_b):
        for n in border(B, run):
            touch.setdefault(n, []).append(len(runs_a) + k)
    for k, run in enumerate(runs_a):
        for n in border(A, run):
            for other in touch.get(P.a2b.get(n, ""), ()):
                parent[root(k)] = root(other)
    members: dict[int, list[int]] = {}
    for k in range(len(parent)):
        members.setdefault(root(k), []).append(k)
    groups: list[dict] = []
    lone_a: list[str] = []
    lone_b: list[str] = []
    for ks in members.values():
        ra = [n for k in ks if k < len(runs_a) for n in runs_a[k]]
        rb = [n for k in ks if k >= len(runs_a) for n in runs_b[k - len(runs_a)]]
        if ra and rb:
            groups.append({"removed": [_ref(A, n) for n in ra],
                           "added": [_ref(B, n) for n in rb]})
        else:
            lone_a += ra
            lone_b += rb
    lone_a.sort(key=A.order_index.__getitem__)
    lone_b.sort(key=B.order_index.__getitem__)
    return groups, lone_a, lone_b
