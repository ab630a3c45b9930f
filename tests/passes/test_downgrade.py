"""``convert --target-runtime X`` against the releases themselves (OpenVINO 2023.0, 2024.0 and
2025.0, each in its own venv): every sample, corpus IR and piece a release cannot read or
compile is rewritten into an IR the release reads, compiles and runs with the outputs the
installed OpenVINO gives for the original (rtol 1e-3, both at f32 inference precision), or
refused with the layers named; nothing written is ever refused by the release. A model the
release cannot run on this CPU untouched either (the same error, or its process dies) is not
counted against the conversion (``downgrade_survey.Pair.cpu_limit``). Skipped, with the
reason, when the releases cannot be installed (``tests/helpers/old_releases.py``)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import downgrade_survey
import networkx as nx
import numpy as np
import old_releases
import pytest
import release_table
import target_pieces

from ovgather.cli import main
from ovgather.errors import UsageError
from ovgather.infer import target_problems
from ovgather.ir import read_ir
from ovgather.passes.base import PassResult
from ovgather.passes.downgrade import Downgrade, DowngradeError, downgrade

OLD = tuple(release_table.RELEASES)
#: the pieces built so that no rewrite exists: an input of a type the release cannot
#: take, a bitwise op on integers, a ceil_torch pool whose ceil output is larger, and a
#: scatter that sums
UNREWRITABLE = {"param_f8e5m2", "and13_i32", "maxpool14_ceil_torch_differs",
                "scatter_elements12_sum"}
#: OpenVINO 2023.0 runs no state of dynamic shape: a KV-cache LLM cannot run on it at all
NO_DYNAMIC_STATE = {"pytorch_stateful"}


@pytest.fixture(scope="module")
def pieces(tmp_path_factory) -> dict[str, Path]:
    return target_pieces.write_all(tmp_path_factory.mktemp("pieces"),
                                   {**target_pieces.PIECES, **target_pieces.MORE_PIECES})


@pytest.fixture(scope="module")
def surveyed(pieces, tmp_path_factory) -> list:
    old_releases.pythons()  # installed once, cached (CI installs them first), or skipped
    # llama_deep is llama/pytorch_dynamic at 44 blocks instead of 2: the same layers to
    # rewrite, a sixth of the survey's time on four releases
    paths = [*(p for p in downgrade_survey.stored_irs() if p.parent.name != "llama_deep"),
             *pieces.values()]
    return downgrade_survey.survey(paths, list(OLD), tmp_path_factory.mktemp("survey"))


def test_nothing_written_fails_on_the_release_it_was_written_for(surveyed):
    failed = [(p.release, p.path.name, p.after, p.differs) for p in surveyed
              if p.converted is not None and not p.proven and not p.cpu_limit]
    assert not failed


def _pair(before: str | None, after: str | None, differs=(), left=(), died=(),
          stage="compile", isa=None) -> downgrade_survey.Pair:
    """A pair whose untouched model failed with ``before`` and converted one with ``after``
    in ``stage``; ``died`` names which of the two ("before", "after") killed the process."""
    verdict = {"read": None, "compile": before}
    after_row = {"read": None, "compile": None, "run": None, stage: after}
    for row, which in ((verdict, "before"), (after_row, "after")):
        if which in died:
            row["died"] = True
    return downgrade_survey.Pair(Path("m.xml"), "2023.0", verdict,
                                 converted=Path("m-2023.0.xml"), differs=list(differs),
                                 after=after_row, left=list(left), isa=isa)


NO_KERNEL = "Check 'false' failed: could not create a primitive descriptor for node mm"
JIT = ("Exception from src/inference/src/core.cpp:116:\n[ GENERAL_ERROR ] Check 'false' "
       "failed at src/plugins/intel_cpu/src/emitters/x64/jit_emitter.cpp:{line}: "
       "[ jit_emitter ] Xmm(0) cannot be input register in SSE41 at 0x{address}")
BOOL = "Eltwise node with name `node_IsNaN_130` doesn't support BOOL precision."
SEGV = "the process died by SIGSEGV"


def test_only_a_failure_the_untouched_model_shares_is_the_cpus_not_the_conversions():
    assert _pair(NO_KERNEL, NO_KERNEL).cpu_limit
    assert not _pair(NO_KERNEL, NO_KERNEL).proven
    assert not _pair(None, NO_KERNEL).cpu_limit  # the untouched model compiled: the rewrite
    assert not _pair(BOOL, NO_KERNEL).cpu_limit
    assert not _pair(NO_KERNEL, BOOL).cpu_limit
    assert not _pair(NO_KERNEL, None, ["output: differs by up to 0.0035"]).cpu_limit
    assert _pair(BOOL, None).proven and not _pair(BOOL, None).cpu_limit


def test_any_message_the_untouched_model_shares_is_the_cpus_once_names_and_numbers_differ():
    # OpenVINO 2024.0 on a CPU with AVX and without AVX2: the same emitter error at other
    # source lines and addresses
    assert _pair(JIT.format(line=50, address="7f3a"), JIT.format(line=51, address="55d0")
                 ).cpu_limit
    assert not _pair(JIT.format(line=50, address="7f"), NO_KERNEL).cpu_limit
    # a name that differs in more than its numbers is another layer failing
    assert not _pair(BOOL, BOOL.replace("IsNaN", "NotEqual")).cpu_limit


def test_a_process_that_dies_on_both_models_is_the_cpus_and_on_the_converted_only_is_not():
    assert _pair(SEGV, SEGV, died=("before", "after")).cpu_limit
    assert _pair(SEGV.replace("SEGV", "ABRT"), SEGV, died=("before", "after"),
                 stage="run").cpu_limit
    # the release cannot run the untouched model at all: whatever the converted one does
    assert _pair(SEGV, NO_KERNEL, died=("before",)).cpu_limit
    assert _pair(SEGV, None, ["output: differs by up to 1"], died=("before",)).cpu_limit
    assert not _pair(BOOL, SEGV, died=("after",), stage="run").cpu_limit
    assert not _pair(None, SEGV, died=("after",)).cpu_limit
    # ... unless the release ran it with the original's outputs on a narrower instruction
    # set: OpenVINO 2023.0 on QEMU's AVX2, converted BERTs, with oneDNN limited to AVX
    assert _pair(BOOL, SEGV, died=("after",), stage="run", isa="AVX").cpu_limit


def test_the_same_failure_left_by_a_rewrite_that_did_not_happen_is_the_conversions():
    # a converter that leaves the layer the release refuses: the same message, but
    # ovgather's own check still finds the layer
    assert not _pair(BOOL, BOOL, left=["IsNaN-10 feeds a layer 2023.0 refuses"]).cpu_limit
    assert not _pair(NO_KERNEL, NO_KERNEL, left=["BitwiseAnd-13 is not in 2023.0"]).cpu_limit
    read = "Cannot create BitwiseAnd layer x id:68 from unsupported opset: opset13"
    assert not _pair(read, read, stage="read").cpu_limit  # reading is not the CPU's


def test_a_dying_release_is_a_row_and_the_jobs_after_it_still_run(tmp_path, monkeypatch):
    """``ask_release`` on a fake release whose process dies by SIGSEGV on one model."""
    fake = tmp_path / "python"
    fake.write_text(f"""#!{sys.executable}
import json, os, signal, sys
for line in sys.stdin:
    xml = line.split()[0]
    print("stage compile", file=sys.stderr, flush=True)
    if "bad" in xml and os.environ.get("ONEDNN_MAX_CPU_ISA") != "AVX":
        os.kill(os.getpid(), signal.SIGSEGV)
    print(json.dumps({{"read": None, "compile": None, "run": None}}), flush=True)
""")
    fake.chmod(0o755)
    monkeypatch.setattr(release_table, "release_python", lambda release: fake)
    jobs = [(Path(name), "-", "-") for name in ("a.xml", "bad.xml", "b.xml", "bad2.xml")]
    rows = downgrade_survey.ask_release("2023.0", jobs)
    assert [downgrade_survey.failure(r) for r in rows] == [None, "died", None, "died"]
    assert rows[1]["compile"] == SEGV and not rows[1]["read"]
    rows = downgrade_survey.ask_release("2023.0", jobs, isa="AVX")
    assert [downgrade_survey.failure(r) for r in rows] == [None] * 4


def test_a_model_the_release_runs_right_on_a_narrower_instruction_set_is_the_cpus(
        tmp_path, monkeypatch):
    """``survey``'s second try, on a fake release that dies on a model unless its kernels
    are limited to AVX, and then gives ``got`` as the output."""
    fake = tmp_path / "python"
    fake.write_text(f"""#!{sys.executable}
import json, os, signal, sys
import numpy as np
for line in sys.stdin:
    xml, feed, out = line.split()
    if os.environ.get("ONEDNN_MAX_CPU_ISA") != "AVX":
        os.kill(os.getpid(), signal.SIGSEGV)
    np.savez(out, **{{"0": np.load(xml.replace(".xml", ".npy")), "names0": np.array(["y"])}})
    print(json.dumps({{"read": None, "compile": None, "run": None}}), flush=True)
""")
    fake.chmod(0o755)
    monkeypatch.setattr(release_table, "release_python", lambda release: fake)
    want = np.arange(6, dtype=np.float32)
    pairs, inputs, expected = [], {}, {}
    for name, got in (("right", want), ("wrong", want + 1)):
        xml = tmp_path / f"{name}.xml"
        np.save(xml.with_suffix(".npy"), got)
        pair = _pair(BOOL, SEGV, died=("after",), stage="run")
        pair.path, pair.converted = Path(f"{name}-untouched.xml"), xml
        pairs.append(pair)
        inputs[pair.path], expected[pair.path] = "-", [({"y"}, want)]
    for isa in downgrade_survey.NARROWER:
        downgrade_survey._narrower(isa, [p for p in pairs if downgrade_survey._kernel_failure(p)],
                                   inputs, expected)
    assert [(p.isa, p.cpu_limit, p.proven) for p in pairs] == [("AVX", True, False),
                                                                (None, False, False)]


def test_a_converter_that_rewrites_nothing_fails_the_survey(pieces, tmp_path, monkeypatch):
    """What the survey makes of a broken ``Downgrade`` that says it rewrote a layer and did
    not: each model fails on 2023.0 the way the untouched one does, and none of it is
    put down to the CPU."""
    old_releases.pythons()
    monkeypatch.setattr(Downgrade, "call", lambda self, G: PassResult(G, True, [{"id": "0"}]))
    paths = [pieces[name] for name in ("isnan_select", "sdpa13", "groupnorm12")]
    pairs = downgrade_survey.survey(paths, ["2023.0"], tmp_path)
    assert [p.path for p in pairs] == paths and all(p.converted for p in pairs)
    assert [downgrade_survey.failure(p.after) for p in pairs] == \
        [downgrade_survey.failure(p.verdict) for p in pairs]
    assert not any(p.proven or p.cpu_limit for p in pairs)


def test_at_least_95_percent_of_what_each_release_refuses_is_converted(surveyed):
    assert {p.release for p in surveyed} >= {"2023.0", "2024.0"}
    for release in OLD:
        pairs = [p for p in surveyed if p.release == release
                 and p.path.stem not in UNREWRITABLE and not p.cpu_limit]
        proven = [p for p in pairs if p.proven]
        assert len(proven) >= 0.95 * len(pairs), (release, [
            (p.path.name, p.refused) for p in pairs if not p.proven])
    stored = [p for p in surveyed if ("ir_corpus" in str(p.path) or "ir_samples" in str(p.path))
              and not p.cpu_limit]
    assert len(stored) >= 30 and sum(p.proven for p in stored) >= 0.95 * len(stored)
    assert all(p.proven or p.path.stem in NO_DYNAMIC_STATE for p in stored), [
        (p.release, p.path.name, p.refused) for p in stored if not p.proven]


def test_what_has_no_rewrite_is_refused_naming_the_layer(surveyed):
    for pair in surveyed:
        if pair.path.stem in UNREWRITABLE:
            assert pair.refused and pair.converted is None, (pair.release, pair.path.name)
            assert all(r["why"] and r["id"] and r["name"] for r in pair.refused)
    assert {p.path.stem for p in surveyed if p.release == "2023.0" and p.refused} == \
        UNREWRITABLE | NO_DYNAMIC_STATE
    stateful = next(p for p in surveyed if p.release == "2023.0" and p.path.stem in
                    NO_DYNAMIC_STATE)
    assert all("static shape" in r["why"] for r in stateful.refused)


def test_a_second_run_changes_nothing_and_new_names_are_unique(pieces):
    for name in ("sdpa13_causal", "groupnorm12", "pad12_computed", "loop_pad12", "promote14"):
        G = read_ir(str(pieces[name]))
        before = {n: a["name"] for n, a in G.nodes(data=True)}
        changes = downgrade(G, "2023.0")
        assert changes and target_problems(G, "2023.0") == []
        names = [a["name"] for _, a in G.nodes(data=True)]
        assert len(names) == len(set(names)), name
        assert Downgrade("2023.0").call(G).modified is False
        kept = {n for n in before if n in G}
        assert all(G.nodes[n]["name"] == before[n] for n in kept
                   if G.nodes[n]["type"] in ("Parameter", "Result")), name


def test_a_refusal_names_every_layer_and_leaves_the_graph_as_it_was(tmp_path):
    path = target_pieces.save(tmp_path / "mixed.xml", [
        target_pieces.MORE_PIECES["and13_i32"], target_pieces.PIECES["sdpa13"],
        target_pieces.MORE_PIECES["scatter_elements12_sum"]])
    G = read_ir(str(path))
    copy = nx.node_link_data(G, edges="links")
    with pytest.raises(DowngradeError) as caught:
        Downgrade("2023.0").call(G)
    assert {r["name"] for r in caught.value.refused} == {"and13_i32",
                                                          "scatter_elements12_sum"}
    assert json.dumps(nx.node_link_data(G, edges="links"), default=str) == \
        json.dumps(copy, default=str)
    with pytest.raises(UsageError):
        Downgrade("2022.1")


def test_the_command_writes_only_what_the_release_takes(pieces, tmp_path, capsys):
    out = tmp_path / "out.xml"
    assert main(["convert", str(pieces["sdpa13"]), "--target-runtime", "2023.0.2",
                 "-o", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["target_runtime"] == "2023.0" and doc["output"] == str(out)
    assert doc["converted"][0]["from"] == "ScaledDotProductAttention-13"
    assert target_problems(read_ir(str(out)), "2023.0") == []

    refused = tmp_path / "refused.xml"
    assert main(["convert", str(pieces["and13_i32"]), "--target-runtime", "2023.0",
                 "-o", str(refused)]) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and re.search(r"\.xml:\d+, layer 'and13_i32'", err)
    assert not refused.exists() and not refused.with_suffix(".bin").exists()

    same = tmp_path / "same.xml"
    assert main(["convert", str(pieces["sdpa13"]), "--target-runtime", "2025.0",
                 "-o", str(same)]) == 0
    assert "nothing to convert" in capsys.readouterr().out and not same.exists()
    assert main(["convert", str(pieces["sdpa13"]), "--target-runtime", "2019.1",
                 "-o", str(same)]) == 2
    assert main(["convert", str(pieces["sdpa13"]), "--target-runtime", "2023.0", "--to",
                 "opset5", "-o", str(same)]) == 2


def test_in_place_replaces_the_model_only_when_it_converts(pieces, tmp_path):
    model = tmp_path / "m.xml"
    shutil.copy(pieces["groupnorm12"], model)
    shutil.copy(pieces["groupnorm12"].with_suffix(".bin"), model.with_suffix(".bin"))
    assert main(["convert", str(model), "--target-runtime", "2023.0", "-o", str(model)]) == 2
    assert main(["convert", str(model), "--target-runtime", "2023.0", "-o", str(model),
                 "--in-place"]) == 0
    assert target_problems(read_ir(str(model)), "2023.0") == []
