"""The real-model corpus in ``ir_corpus/`` is read by ovgather and OpenVINO alike.

The IRs are what OpenVINO's own converters wrote (``tools/make_corpus.py``), so every
declared dim is right: any ``mismatch`` or ``invalid`` that ``check`` reports on them is
a false alarm. The corpus must also stay small enough to live in the repository and
keep covering what it was built for (both frontends, static and dynamic shapes, a
stateful LLM, convolutions, pooling, Interpolate and Pad). No torch is needed here:
only the generator uses it.
"""

from __future__ import annotations

import re
from pathlib import Path

import openvino as ov
import pytest
from corpus_report import classify, compare_model

from ovgather.infer import check
from ovgather.ir import read_ir

CORPUS = Path(__file__).resolve().parents[2] / "ir_corpus"
XMLS = sorted(CORPUS.rglob("*.xml"))
# 36 IRs; the batch-1 exports reshape --fix is proved on added ~1.1 MB, the ~5k-layer
# llama_deep that tools/bench_check.py times added ~3.5 MB, the dynamic ONNX exports of
# five text models (both torch exporters) that infer --symbols is measured on ~2.3 MB
MAX_BYTES = 15_500_000
# op types the corpus exists to cover, in at least one model each
MUST_HAVE = {"Convolution", "GroupConvolution", "MaxPool", "AvgPool", "Interpolate", "Pad",
             "ReadValue", "Assign", "ScaledDotProductAttention"}


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(CORPUS)) for p in paths]


def test_corpus_has_models_of_both_frontends_static_and_dynamic():
    variants = {p.stem for p in XMLS}
    assert {"pytorch_static", "pytorch_dynamic", "onnx_static", "onnx_dynamic",
            "pytorch_stateful"} <= variants
    assert len({p.parent.name for p in XMLS}) >= 10


def test_corpus_stays_small():
    total = sum(f.stat().st_size for f in CORPUS.rglob("*") if f.is_file())
    assert total <= MAX_BYTES, f"ir_corpus holds {total} bytes, more than {MAX_BYTES}"


def test_corpus_readme_lists_every_ir():
    listed = set(re.findall(r"^\| (\w+) \| `(\w+)` \|", (CORPUS / "README.md").read_text(),
                            re.MULTILINE))
    assert listed == {(p.parent.name, p.stem) for p in XMLS}


def test_corpus_covers_the_ops_it_was_built_for():
    seen: set[str] = set()
    for xml in XMLS:
        seen.update(re.findall(r'<layer id="\d+" name="[^"]*" type="(\w+)"', xml.read_text()))
    assert MUST_HAVE <= seen, f"no model has {sorted(MUST_HAVE - seen)}"


@pytest.fixture(scope="module")
def core() -> ov.Core:
    return ov.Core()


@pytest.mark.parametrize("xml", XMLS, ids=_ids(XMLS))
def test_corpus_ir_checks_without_false_alarm(xml: Path, core: ov.Core):
    model = core.read_model(str(xml))
    G = read_ir(xml)
    assert G.number_of_nodes() == len(model.get_ordered_ops())
    report = check(G)
    problems = [f"{lr.type} {lr.name}: {lr.status}: {lr.message}" for lr in report.layers
                if lr.status in ("mismatch", "invalid")]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("xml", XMLS, ids=_ids(XMLS))
def test_corpus_ir_infers_every_port_as_read_model(xml: Path):
    """Every layer checked (none unchecked) and every port's inferred text equal to what
    read_model gives, layer by layer, port by port: not looser, not contradicting."""
    report = compare_model(xml, CORPUS)
    wrong = [f"{d['op']} {d['layer']}: {d['ovgather']} vs {d['openvino']} ({d['kind']})"
             for d in report.diffs]
    assert not wrong, "\n".join(wrong)
    assert not report.unmatched
    assert all(lr.status != "unchecked" for lr in check(read_ir(xml)).layers)


@pytest.mark.parametrize(("ours", "theirs", "kind"), [
    ("[?,16,16]", "[?,16,16]", None),
    ("[?,?,?,?]", "[?,?,1..,1..]", "looser"),
    ("[?,..1]", "[?,1]", "looser"),
    ("[...]", "[2,3]", "looser"),
    ("[1,3]", "[?,3]", "tighter"),
    ("[1,?]", "[?,3]", "mixed"),
    ("[2,3]", "[2,4]", "contradicts"),
    ("[2,3]", "[2,3,1]", "contradicts"),
])
def test_corpus_report_classifies_a_port_by_what_both_shapes_allow(ours, theirs, kind):
    assert classify(ours, theirs) == kind
