"""``check --target-runtime X`` against the releases themselves: OpenVINO 2023.0, 2024.0 and
2025.0, each installed once in its own venv (``tools/release_table.py``), read (and compile)
every sample, corpus IR and IR written here by the installed OpenVINO; ovgather must name a
layer exactly when the release refuses the IR, name the layer the release names, and name
every refused layer of a model that holds several."""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path

import old_releases
import pytest
import release_table
import target_pieces

from ovgather.cli import main
from ovgather.element_types import element_type_name
from ovgather.errors import UsageError
from ovgather.infer import target_problems
from ovgather.ir import read_ir
from ovgather.ops.core.releases import NEWEST, RELEASES, builds

ROOT = Path(__file__).resolve().parents[2]
OLD = tuple(release_table.RELEASES)
#: llama_deep is llama/pytorch_dynamic at 44 blocks instead of 2: the same layers for each
#: release to read and compile, the slowest of them all
STORED = sorted([*ROOT.glob("ir_samples/**/*.xml"),
                 *(p for p in ROOT.glob("ir_corpus/**/*.xml") if p.parent.name != "llama_deep")])


# -- IRs with what the old releases lack, written by the installed OpenVINO --------------
PIECES = target_pieces.PIECES


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    """One IR per piece (those of ``convert --target-runtime`` too), and ``all`` with
    every piece the check was measured on side by side."""
    folder = tmp_path_factory.mktemp("targets")
    irs = target_pieces.write_all(folder, {**PIECES, **target_pieces.MORE_PIECES})
    irs["all"] = target_pieces.save(folder / "all.xml", PIECES.values())
    return irs


# -- the releases, each in its venv, asked once for every IR -----------------------------
_ORACLE = """
import json
import sys
import numpy as np
try:
    from openvino import Core
except ImportError:  # 2023.0 keeps the API in openvino.runtime
    from openvino.runtime import Core
core = Core()
F32 = {"INFERENCE_PRECISION_HINT": "f32"}  # not the bf16 a CPU with it gets by default
for path in sys.stdin.read().split():
    row = {"read": None, "compile": None}
    try:
        model = core.read_model(path)
    except Exception as err:
        row["read"] = str(err)
    else:
        try:
            compiled = core.compile_model(model, "CPU", F32)
            if any(op.get_type_name() == "ReadValue" for op in model.get_ops()):
                # a state's limit shows at the first inference: zeros, a dynamic dim at 1
                request = compiled.create_infer_request()
                for port in compiled.inputs:
                    request.get_tensor(port).shape = [
                        1 if d.is_dynamic else d.get_length() for d in port.get_partial_shape()]
                request.infer()
        except Exception as err:
            row["compile"] = str(err)
    print(json.dumps(row), flush=True)
"""


@pytest.fixture(scope="session")
def pythons() -> dict[str, str]:
    """The interpreter of each old release's venv, installed first when missing (about a
    minute for the three; CI installs them first: ``tools/release_table.py --install``);
    the test is skipped, with the reason, when they cannot be installed."""
    return old_releases.pythons()


@pytest.fixture(scope="module")
def verdicts(written, pythons) -> dict[str, dict[Path, dict]]:
    """``{release: {IR: {"read": error or None, "compile": error or None}}}``."""
    paths = [*STORED, *written.values()]
    runs = {r: subprocess.Popen([pythons[r], "-c", _ORACLE],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                stderr=subprocess.DEVNULL) for r in OLD}
    found = {}
    for release, run in runs.items():
        out, _ = run.communicate("\n".join(map(str, paths)))
        rows = [json.loads(line) for line in out.splitlines()]
        assert len(rows) == len(paths), f"OpenVINO {release} died on {paths[len(rows)]}"
        found[release] = dict(zip(paths, rows, strict=True))
    return found


_GRAPHS: dict[Path, object] = {}


def _problems(path: Path, release: str):
    if path not in _GRAPHS:
        _GRAPHS[path] = read_ir(str(path))
    return target_problems(_GRAPHS[path], release)


def _named_by_openvino(message: str) -> str | None:
    """The id of the layer a refusal names ("Cannot create Pad layer pad12 id:3 …")."""
    found = re.search(r"layer \S+ id:(\d+)", message)
    return found.group(1) if found else None


def _type_refused(message: str) -> str | None:
    """The element type a refusal names ("Incorrect type: F8E4M3"), as ovgather spells it."""
    found = re.search(r"Incorrect type: (\w+)", message)
    return element_type_name(found.group(1)) if found else None


@pytest.mark.parametrize("release", OLD)
def test_a_layer_is_named_exactly_when_the_release_refuses_the_ir(release, verdicts):
    refused = 0
    for path, row in verdicts[release].items():
        read = [p for p in _problems(path, release) if p.stage == "read"]
        assert bool(read) == (row["read"] is not None), (path.name, row["read"], read)
        if row["read"] is None:
            continue
        refused += 1
        first, etype = _named_by_openvino(row["read"]), _type_refused(row["read"])
        ids = {p.id.rsplit("/", 1)[-1] for p in read}  # a body layer: its own id last
        assert first is None or first in ids, (path.name, row["read"])
        assert etype is None or any(f"element type {etype}" in p.message for p in read), \
            (path.name, row["read"])
    assert refused or release == "2025.0"


@pytest.mark.parametrize("release", OLD)
def test_every_compile_limit_named_is_a_compile_failure_of_the_release(release, verdicts):
    for path, row in verdicts[release].items():
        limits = [p for p in _problems(path, release) if p.stage == "compile"]
        if row["read"] is None and limits:
            assert row["compile"] is not None, (path.name, limits)
        if row["read"] is None and row["compile"] is not None and re.search(
                r"IsNaN.*BOOL|attention_mask must be", row["compile"]):
            assert limits, (path.name, row["compile"])


def test_every_refused_layer_is_named_not_only_the_first(written, verdicts):
    for release in OLD:
        alone = {name for name in PIECES
                 if verdicts[release][written[name]]["read"] is not None}
        named = {p.name for p in _problems(written["all"], release) if p.stage == "read"}
        each = {p.name for name in alone for p in _problems(written[name], release)
                if p.stage == "read"}
        assert named == each and len(named) >= len(alone), (release, named, alone)
    assert len({p.name for p in _problems(written["all"], "2023.0")}) >= 10


def test_what_the_issue_measured_is_what_the_releases_do(written, verdicts):
    said = {r: {n for n in PIECES if verdicts[r][written[n]]["read"] is not None}
            for r in OLD}
    assert {"and13", "sdpa13", "pad12", "groupnorm12", "maxpool14_floor", "const_f8e4m3",
            "const_nf4", "const_f4e2m1", "const_u2", "param_f8e5m2", "loop_pad12"
            } <= said["2023.0"]
    assert said["2024.0"] == {"maxpool14_ceil_torch", "avgpool14_ceil_torch",
                              "const_f4e2m1", "const_u2"}
    assert said["2025.0"] == set()
    assert verdicts["2023.0"][written["isnan_select"]]["compile"] is not None


def test_the_installed_release_reads_everything_here(written):
    for path in [*STORED, *written.values()]:
        assert _problems(path, NEWEST) == [], path.name


def test_the_table_holds_what_each_reader_says_on_a_seeded_sample(pythons):
    import list_opsets

    rng = random.Random(27)
    newest = RELEASES[NEWEST]
    pairs = sorted({(t, n) for t in newest["opsets"] for n in range(1, newest["last_opset"] + 1)})
    for release in OLD:
        sample = rng.sample(pairs, 150)
        taken = list_opsets.probe_reader(sample, pythons[release])
        assert {p for p in sample if builds(release, *p) is not None} == set(taken), release


def test_check_exits_1_with_the_layers_in_json_and_2_for_an_unknown_release(written, capsys):
    path = str(written["all"])
    assert main(["check", path, "--json"]) == 0
    capsys.readouterr()
    assert main(["check", path, "--target-runtime", "2023.0.2", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)["models"][0]["target_runtime"]
    assert doc["release"] == "2023.0"
    assert {p["name"] for p in doc["problems"]} == {
        p.name for p in _problems(written["all"], "2023.0")}
    assert all(p["line"] and p["reasons"] for p in doc["problems"])
    assert main(["check", path, "--target-runtime", "2025.0"]) == 0
    assert main(["check", path, "--target-runtime", "2022.3"]) == 2
    with pytest.raises(UsageError):
        target_problems(_GRAPHS.get(Path(path)) or read_ir(path), "2026")


def test_the_older_releases_page_says_what_the_table_says_each_release_lacks():
    page = (ROOT / "docs" / "older-releases.md").read_text(encoding="utf-8")
    newest = RELEASES[NEWEST]
    for release in OLD:
        section = page.split(f"### {release} ")[1].split("###")[0]
        row = RELEASES[release]
        assert f"({row['openvino']}): opsets 1 to {row['last_opset']}" in section
        lacks = re.search(r"Op types it does not have\*\*: (.*?)\n- ", section, re.S).group(1)
        lacks = re.sub(r"\([^)]*\)", "", lacks)  # asides: what uses them, the older names
        assert set(re.findall(r"\b[A-Z]\w+", lacks)) == {
            t for t in newest["opsets"] if t not in row["opsets"]}, release
        versions = {f"{t}-{v}" for t, runs in newest["opsets"].items() if t in row["opsets"]
                    for _, _, v in runs} - {f"{t}-{v}" for t, runs in row["opsets"].items()
                                           for _, _, v in runs}
        said = re.search(r"Op versions it does not have\*\*: (.*?)[.(]", section, re.S).group(1)
        assert set(re.findall(r"\w+-\d+", said)) == versions, release
        unread = {t for t in newest["element_types"] if t not in row["element_types"]}
        types = re.search(r"types it does not read\*\*: (.*?)(?:, wherever|\.\n)", section, re.S)
        assert set(re.findall(r"\w+", types.group(1)) if types else ()) - {"and"} == unread
