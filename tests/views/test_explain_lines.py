"""Every line ``explain`` prints for every gather layer of every sample is re-evaluated
from the layer's actual input shapes and attributes: a step marked ok must state a fact
that holds and that satisfies its rule, a failed one a fact that breaks it. (Gather's
rank step once said "rank 0" for data of every rank.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ovgather.cli import main
from ovgather.element_types import is_integral_number
from ovgather.infer import check
from ovgather.ir import read_ir
from ovgather.shapes import PartialShape

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))
_CMP = {"<=": int.__le__, "<": int.__lt__, ">": int.__gt__, ">=": int.__ge__,
        "==": int.__eq__}


def _gather_docs(path: Path, capsys) -> list[dict]:
    layers = [lr for lr in check(read_ir(path)).layers
              if lr.type.startswith("Gather") and "/" not in lr.id]
    docs = []
    for lr in layers:
        assert main(["explain", str(path), "--layer", lr.id, "--json"]) in (0, 1)
        docs.append(json.loads(capsys.readouterr().out))
    return docs


def _rank(text: str) -> int | None:
    dims = PartialShape.parse(text).dims
    return None if dims is None else len(dims)


def _claims(doc: dict, step: dict) -> list[tuple[bool, str]]:
    """(holds, what) for every fact the step states that the test can re-evaluate."""
    rule, detail, ok = step["rule"], step["detail"], step["ok"]
    rd, ri = _rank(doc["inputs"]["data"]), _rank(doc["inputs"]["indices"])
    b = doc.get("batch_dims")
    out = []
    m = re.fullmatch(r"(-?\d+) (<=|<|>|>=|==) (-?\d+)", detail)
    if m:
        a, op, c = int(m[1]), m[2], int(m[3])
        out.append((_CMP[op](a, c), f"the comparison {detail} holds"))
        if "must not exceed" in rule:
            out.append((ok == (a <= c), f"ok={ok} agrees with {a} <= {c}"))
    m = re.fullmatch(r"rank (-?\d+)", detail)
    if m:
        which = ri if rule.startswith("indices") else rd
        out.append((int(m[1]) == which, f"the rank {m[1]} is the input's rank {which}"))
        if "at least 1" in rule:
            out.append((ok == (int(m[1]) >= 1), f"ok={ok} agrees with rank {m[1]} >= 1"))
    m = re.fullmatch(r"indices are (\w+)", detail)
    if m:
        out.append((m[1] == doc["inputs"]["indices_type"], f"indices type {m[1]}"))
        if "integer type" in rule:
            out.append((ok == is_integral_number(m[1]), f"ok={ok} for an integer {m[1]}"))
    m = re.fullmatch(r"the axis must lie in \[-(\d+), (-?\d+)\] for data of rank (\d+)", rule)
    if m:
        r = int(m[3])
        out.append((r == rd, f"data rank {r} is {rd}"))
        axis = int(re.fullmatch(r"axis = (-?\d+)", detail)[1])
        out.append((ok == (-max(r, 1) <= axis <= max(r, 1) - 1), f"ok={ok} for axis {axis}"))
    m = re.fullmatch(r"rank\(data\) \+ rank\(indices\) - 1 - batch_dims = (-?\d+)", detail)
    if m:
        out.append((int(m[1]) == rd + ri - 1 - b, f"{m[1]} = {rd} + {ri} - 1 - {b}"))
        out.append((ok == (int(m[1]) >= 0), f"ok={ok} for an output rank {m[1]}"))
    m = re.fullmatch(r"(\d+) and (\d+)", detail)
    if m and "same rank" in rule:
        out.append(((int(m[1]), int(m[2])) == (rd, ri), f"ranks {detail} are {rd}, {ri}"))
        out.append((ok == (m[1] == m[2]), f"ok={ok} for ranks {detail}"))
    m = re.fullmatch(r"batch_dims (\d+), rank (\d+)", detail)
    if m:
        which = ri if "indices" in rule else rd
        out.append((int(m[2]) == which and int(m[1]) == b, f"{detail}: b={b}, rank {which}"))
        out.append((ok == (int(m[1]) < int(m[2])), f"ok={ok} for {detail}"))
    m = re.search(r"-> (\S+)$", detail)
    if m and (rule.startswith("output") or rule.startswith("the output")):
        out.append((m[1] in doc["outputs"].values() or m[1] in doc["layer"]["inferred"],
                    f"the output {m[1]} is one explain gives"))
    return out


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_explain_line_states_what_the_shapes_say(path: Path, capsys) -> None:
    docs = _gather_docs(path, capsys)
    checked = 0
    for doc in docs:
        for step in doc["steps"]:
            for holds, what in _claims(doc, step):
                checked += 1
                assert holds, (doc["layer"]["name"], step, what)
    assert checked or not docs


def test_the_gather_rank_line_names_the_data_rank(capsys) -> None:
    docs = _gather_docs(ROOT / "ir_samples" / "gather_versions.xml", capsys)
    lines = [s["detail"] for d in docs for s in d["steps"]
             if s["rule"].startswith("data must have rank at least 1 to gather")]
    assert lines and "rank 0" not in lines

