"""How far ovgather's shape inference is from OpenVINO's on the real-model corpus.

Run ``python tools/corpus_report.py [DIR] [--json OUT] [--examples N]``.

For every IR under ``ir_corpus/`` (or DIR), ``ovgather.check`` re-infers all layers and
``openvino.Core().read_model`` re-infers them too; the two are compared layer by layer
(matched by layer name, a body layer by its path name such as ``Loop_4/body/Add_6``) and
port by port, on the shape text. A port whose text differs is classed by what the two
shapes allow:

``looser``       ovgather's shape admits every shape OpenVINO's does, and more: it lost
                 precision (``[?,?]`` where OpenVINO knows ``[1,..128]``);
``tighter``      the reverse: ovgather claims more than OpenVINO knows;
``mixed``        compatible, but each is tighter somewhere;
``contradicts``  no shape satisfies both: a wrong rule (or a wrong OpenVINO);
``text``         the same shape written differently.

A differing port is an ``origin`` when every input of its layer agreed with OpenVINO:
that layer's rule is where precision was lost. The others only inherit a difference
from upstream, so the origins are what to fix first. Only shapes are compared, not the
values that shape subgraphs carry: an origin at a Reshape whose target comes from
ShapeOf -> ... -> Concat may mean the target's values were lost upstream.

Layers ovgather does not know are ``unchecked``: they keep the declared dims, which the
IR writes with ``-1`` for any dynamic dim, so their ports are counted apart from the
checked ones.

This is a report, not a test: it always exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import openvino as ov

from ovgather.graph import locate
from ovgather.infer import check
from ovgather.ir import read_ir

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = ROOT / "ir_corpus"
KINDS = ("looser", "tighter", "mixed", "contradicts", "text")


@dataclass
class ModelReport:
    """The comparison of one IR: counts, and every differing port."""

    path: str
    layers: int = 0
    statuses: Counter = field(default_factory=Counter)
    unchecked: Counter = field(default_factory=Counter)  # "Type-version" -> layers
    ports: int = 0
    equal_ports: int = 0
    unmatched: list[str] = field(default_factory=list)  # layers read_model does not have
    diffs: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "path": self.path, "layers": self.layers, "statuses": dict(self.statuses),
            "unchecked": dict(self.unchecked), "ports": self.ports,
            "equal_ports": self.equal_ports, "unmatched": self.unmatched,
            "diffs": self.diffs,
        }


def classify(ours: str, theirs: str) -> str | None:
    """How ovgather's shape text relates to OpenVINO's; None when the texts are equal."""
    if ours == theirs:
        return None
    a, b = ov.PartialShape(ours), ov.PartialShape(theirs)
    if a == b:
        return "text"
    if not a.compatible(b):
        return "contradicts"
    if a.relaxes(b):
        return "looser"
    if a.refines(b):
        return "tighter"
    return "mixed"


def _ov_ops(path: Path) -> dict[str, list[ov.Node]]:
    """OpenVINO's ops by name, body ops under their path name as ``check`` lists them
    (``Loop_4/body/Add_6``); a name may repeat, kept in walk order."""
    ops: dict[str, list[ov.Node]] = defaultdict(list)
    _collect_ops(ov.Core().read_model(str(path)), "", ops)
    return ops


def _collect_ops(model: ov.Model, prefix: str, ops: dict[str, list[ov.Node]]) -> None:
    for op in model.get_ordered_ops():
        name = prefix + op.get_friendly_name()
        ops[name].append(op)
        if op.get_type_name() == "If":
            _collect_ops(op.get_then_body(), f"{name}/then_body/", ops)
            _collect_ops(op.get_else_body(), f"{name}/else_body/", ops)
        elif op.get_type_name() in ("Loop", "TensorIterator"):
            _collect_ops(op.get_function(), f"{name}/body/", ops)


def compare_model(path: Path, root: Path) -> ModelReport:
    """Check one IR with ovgather and compare every output port with read_model's."""
    G = read_ir(path)
    result = check(G)
    ov_ops = _ov_ops(path)
    report = ModelReport(str(path.relative_to(root)), layers=len(result.layers))
    differs: set[tuple[str, int]] = set()  # (layer id, port id) already differing
    by_id = {lr.id: lr for lr in result.layers}
    for lr in result.layers:
        report.statuses[lr.status] += 1
        if lr.status == "unchecked":
            report.unchecked[f"{lr.type}-{lr.version}"] += 1
        candidates = ov_ops.get(lr.name)
        if not candidates:
            report.unmatched.append(lr.name)
            continue
        _compare_ports(G, lr, candidates.pop(0), by_id, differs, report)
    return report


def _compare_ports(G, lr, op: ov.Node, by_id: dict, differs: set, report: ModelReport) -> None:
    """Compare one layer's output ports with its OpenVINO op's, recording differences."""
    H, node = locate(G, lr.id)  # a body layer is found in its body's graph
    port_ids = [p["id"] for p in H.nodes[node]["outputs"]]
    for index, (port, ours) in enumerate(zip(port_ids, lr.inferred, strict=False)):
        report.ports += 1
        theirs = str(op.output(index).get_partial_shape())
        kind = classify(ours, theirs)
        if kind is None:
            report.equal_ports += 1
            continue
        differs.add((lr.id, port))
        report.diffs.append({
            "op": f"{lr.type}-{lr.version}", "status": lr.status, "kind": kind,
            "layer": lr.name, "id": lr.id, "port": port, "ovgather": ours,
            "openvino": theirs, "origin": _is_origin(H, lr.id, differs),
            "inputs": _input_texts(H, lr.id, by_id),
        })


def _is_origin(G, path: str, differs: set[tuple[str, int]]) -> bool:
    """True when no input of the layer at ``path`` (in ``G``, its graph) already differed
    from OpenVINO (the walk is in topological order, so every producer has been compared
    before)."""
    prefix, node = _split(path)
    return not any((prefix + u, d["from_port"]) in differs
                   for u, _, d in G.in_edges(node, data=True))


def _split(path: str) -> tuple[str, str]:
    """A path id cut into its body prefix and the layer's id there: ``("4/body/", "6")``."""
    prefix, _, node = path.rpartition("/")
    return prefix + "/" if prefix else "", node


def _input_texts(G, path: str, by_id: dict) -> list[str]:
    """The inferred shapes reaching the layer at ``path``, for the examples (what the
    rule saw)."""
    prefix, node = _split(path)
    texts = []
    for u, _, d in sorted(G.in_edges(node, data=True), key=lambda e: e[2]["to_port"]):
        ports = [p["id"] for p in G.nodes[u]["outputs"]]
        index = ports.index(d["from_port"])
        texts.append(by_id[prefix + u].inferred[index])
    return texts


# --------------------------------------------------------------------------------------
# Summaries


def group_diffs(reports: Sequence[ModelReport]) -> dict[str, dict]:
    """Differing ports by op type and version: counts per kind, origins, examples."""
    groups: dict[str, dict] = {}
    for rep in reports:
        for d in rep.diffs:
            key = d["op"] + (" (unchecked)" if d["status"] == "unchecked" else "")
            g = groups.setdefault(key, {"ports": 0, "origin": 0, "models": set(),
                                        "kinds": Counter(), "examples": []})
            g["ports"] += 1
            g["origin"] += d["origin"]
            g["models"].add(rep.path)
            g["kinds"][d["kind"]] += 1
            g["examples"].append({"model": rep.path, **d})
    return groups


def _pick_examples(examples: list[dict], n: int) -> list[dict]:
    """Origins first, one per distinct (ovgather, openvino) pair, so the few shown differ."""
    seen, picked = set(), []
    for ex in sorted(examples, key=lambda e: not e["origin"]):
        pair = (ex["ovgather"], ex["openvino"])
        if pair not in seen:
            seen.add(pair)
            picked.append(ex)
        if len(picked) == n:
            break
    return picked


def summary(reports: Sequence[ModelReport], examples: int = 3) -> dict:
    """The whole corpus in numbers (what ``--json`` writes, less the per-port lists)."""
    unchecked: Counter = Counter()
    unchecked_models: dict[str, set] = defaultdict(set)
    for rep in reports:
        unchecked.update(rep.unchecked)
        for op in rep.unchecked:
            unchecked_models[op].add(rep.path)
    groups = group_diffs(reports)
    kinds = Counter(d["kind"] for rep in reports for d in rep.diffs)
    return {
        "models": len(reports),
        "layers": sum(r.layers for r in reports),
        "statuses": dict(sum((r.statuses for r in reports), Counter())),
        "ports": sum(r.ports for r in reports),
        "equal_ports": sum(r.equal_ports for r in reports),
        "differing_ports": dict(kinds),
        "identical_models": sum(not r.diffs and not r.unchecked for r in reports),
        "equal_port_models": sum(not r.diffs for r in reports),
        "unmatched_layers": sum(len(r.unmatched) for r in reports),
        "unchecked": {op: {"layers": n, "models": len(unchecked_models[op])}
                      for op, n in unchecked.most_common()},
        "diffs_by_op": {
            op: {"ports": g["ports"], "origin": g["origin"], "models": len(g["models"]),
                 "kinds": dict(g["kinds"]),
                 "examples": _pick_examples(g["examples"], examples)}
            for op, g in sorted(groups.items(), key=lambda kv: (-kv[1]["origin"],
                                                                 -kv[1]["ports"]))
        },
    }


def format_table(reports: Sequence[ModelReport], summ: dict) -> str:
    """The printed report: one line per IR, then unchecked ops, then differing ports."""
    lines = [f"{'model':34} {'layers':>6} {'unchk':>5} {'ports':>6} {'equal':>6} "
             f"{'looser':>6} {'other':>5} {'contra':>6}"]
    for r in reports:
        kinds = Counter(d["kind"] for d in r.diffs)
        other = kinds["tighter"] + kinds["mixed"] + kinds["text"]
        lines.append(f"{r.path:34} {r.layers:>6} {sum(r.unchecked.values()):>5} "
                     f"{r.ports:>6} {r.equal_ports:>6} {kinds['looser']:>6} {other:>5} "
                     f"{kinds['contradicts']:>6}")
    lines += ["", _totals(summ), "", "unchecked layers by op type:"]
    for op, u in summ["unchecked"].items():
        lines.append(f"  {op:36} {u['layers']:>5} layers in {u['models']} IRs")
    lines += ["", "ports that differ from read_model, by op type (origin: every input agreed):"]
    for op, g in summ["diffs_by_op"].items():
        kinds = ", ".join(f"{k} {n}" for k, n in g["kinds"].items())
        lines.append(f"  {op:36} {g['ports']:>5} ports ({kinds}); origin {g['origin']}; "
                     f"{g['models']} IRs")
        for ex in g["examples"]:
            ins = " ".join(ex["inputs"])
            lines.append(f"      {ex['ovgather']} vs {ex['openvino']}  "
                         f"[{ex['model']} {ex['layer']}; inputs {ins}]"[:220])
    return "\n".join(lines)


def _totals(summ: dict) -> str:
    unchecked = summ["statuses"].get("unchecked", 0)
    pct = 100 * unchecked / max(summ["layers"], 1)
    return (f"{summ['models']} IRs, {summ['layers']} layers, {unchecked} unchecked "
            f"({pct:.1f}%), statuses {summ['statuses']}; {summ['ports']} ports, "
            f"{summ['equal_ports']} equal to read_model, differing {summ['differing_ports']}; "
            f"{summ['equal_port_models']} IRs with every port equal, "
            f"{summ['identical_models']} of them with no unchecked layer either; "
            f"{summ['unmatched_layers']} layers not found by name in read_model")


def corpus_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.xml"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--json", type=Path, help="write the summary and every port here")
    parser.add_argument("--examples", type=int, default=3, help="examples per op type")
    args = parser.parse_args(argv)
    reports = []
    for path in corpus_files(args.dir):
        try:
            reports.append(compare_model(path, args.dir))
        except Exception as err:  # a report: say what broke and go on
            print(f"{path}: {type(err).__name__}: {err}", file=sys.stderr)
    summ = summary(reports, args.examples)
    print(format_table(reports, summ))
    if args.json:
        args.json.write_text(json.dumps(
            {"summary": summ, "models": [r.to_dict() for r in reports]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
