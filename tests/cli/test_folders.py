"""``check``, ``infer`` and ``validate`` on a folder, with ``--jobs``: the IRs below it, each
with the result it has alone, in path order; one summary; the worst exit code; no process
left behind when the run is interrupted or its parent killed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from slowdown import seconds

from ovgather.cli import main
from ovgather.cli.folders import jobs_wanted, root_element

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
GOOD = SAMPLES / "gather_nd8_bd0.xml"
WRONG = SAMPLES / "wrong_gather_nd5_bd2_one_dim.xml"
DEEP = ROOT / "ir_corpus" / "llama_deep" / "pytorch_dynamic.xml"


def ovgather(*argv: str | Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ovgather", *map(str, argv)],
                          capture_output=True, text=True, timeout=seconds(300), **kw)


def _schema(command: str) -> dict:
    return json.loads((ROOT / "docs" / "schema" / f"{command}.json").read_text("utf-8"))


def _ir(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    shutil.copy(src.with_suffix(".bin"), dst.with_suffix(".bin"))
    return dst


def _alone(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


# -- the same results as one model at a time ------------------------------------------------
def test_two_jobs_on_the_sample_and_corpus_folders_give_each_models_own_result(capsys,
                                                                              monkeypatch):
    run = ovgather("check", "ir_samples", "ir_corpus", "--jobs", "2", "--json", cwd=ROOT)
    human = ovgather("check", "ir_samples", "ir_corpus", "--jobs", "2", cwd=ROOT)
    doc = json.loads(run.stdout)
    paths = [m["path"] for m in doc["models"]]
    every = sorted((str(p.relative_to(ROOT)) for folder in ("ir_samples", "ir_corpus")
                    for p in (ROOT / folder).rglob("*.xml")),
                   key=lambda p: (not p.startswith("ir_samples"), p.split(os.sep)))
    assert sorted(paths) == sorted(every) and len(paths) == 76  # each IR once, no other file
    assert paths == every  # path order (no number folders here)
    codes, failing = [], []
    monkeypatch.chdir(ROOT)
    for path in paths:  # each model alone, in a run of its own
        code, out = _alone(capsys, "check", path, "--json")
        assert json.loads(out)["models"] == [doc["models"][paths.index(path)]], path
        codes.append(code)
        if code == 1:
            failing.append(path)
    assert run.returncode == human.returncode == max(codes) == 1
    _, listed = _alone(capsys, "check", *paths)  # the files by name, one job: the old way
    jsonschema.validate(doc, _schema("check"))
    assert doc["totals"] == {"models": 76, "ok": 76 - len(failing), "failing": len(failing),
                             "errors": 0, "skipped": 0}
    assert doc["errors"] == doc["skipped"] == [] and run.stderr == ""
    summary = human.stdout.index("summary: ")
    assert human.stdout[:summary] == listed  # the same text, in the same order
    assert human.stdout[summary:].splitlines() == [
        f"summary: 76 model(s): {76 - len(failing)} ok, {len(failing)} failing, 0 could not "
        "be used", *(f"  failing: {p}" for p in failing)]


def test_infer_on_a_folder_prints_what_each_model_prints_alone(capsys, monkeypatch):
    run = ovgather("infer", "ir_samples/onnx", "--jobs", "2", cwd=ROOT)
    monkeypatch.chdir(ROOT)
    models = sorted(str(p.relative_to(ROOT)) for p in (SAMPLES / "onnx").glob("*.xml"))
    alone = [_alone(capsys, "infer", m) for m in models]
    assert run.returncode == max(code for code, _ in alone)
    assert run.stdout == "".join(out for _, out in alone) + (
        f"summary: {len(models)} model(s): {len(models)} ok, 0 failing, 0 could not be used\n")


def test_validate_on_a_folder_gives_each_models_own_result(tmp_path, capsys):
    folder = tmp_path / "zoo"
    a = _ir(SAMPLES / "gather_versions.xml", folder / "a" / "model.xml")
    b = _ir(SAMPLES / "mixed_ops.xml", folder / "b" / "model.xml")
    run = ovgather("validate", folder, "--jobs", "2", "--json")
    doc = json.loads(run.stdout)
    jsonschema.validate(doc, _schema("validate"))
    for path, got in zip((a, b), doc["models"], strict=True):
        code, out = _alone(capsys, "validate", str(path), "--json")
        assert json.loads(out)["models"] == [got]
        assert code == 0 == run.returncode



@pytest.mark.parametrize("argv", [
    ["infer", "ir_samples/loop_gather.xml", "ir_samples/dynamic_gathers.xml",
     "--symbols", "table[R,4]"],
    ["check", "ir_samples/mixed_ops.xml", "ir_samples/wrong_mixed_ops_nd8_dim.xml",
     "--shape", "x=[4,3,8]", "--target-runtime", "2023.0"],
], ids=["infer --symbols", "check --shape --target-runtime"])
def test_what_options_add_to_a_report_comes_back_from_the_workers(argv):
    one, two = ovgather(*argv, "--json", cwd=ROOT), ovgather(*argv, "--json", "-j", "2", cwd=ROOT)
    assert (one.returncode, one.stdout) == (two.returncode, two.stdout)
    added = ('"symbolic"',) if "--symbols" in argv else ('"reshape"', '"target_runtime"')
    assert all(key in one.stdout for key in added)

# -- what a folder holds ----------------------------------------------------------------------
@pytest.fixture
def zoo(tmp_path: Path) -> Path:
    """A model server's repository and what else such a folder holds."""
    zoo = tmp_path / "zoo"
    _ir(GOOD, zoo / "resnet" / "1" / "model.xml")
    _ir(WRONG, zoo / "resnet" / "2" / "model.xml")
    _ir(GOOD, zoo / "resnet" / "10" / "model.xml")
    _ir(GOOD, zoo / ".git" / "old.xml")  # hidden folders are not searched
    broken = zoo / "broken" / "model.xml"
    broken.parent.mkdir()
    broken.write_text(GOOD.read_text()[:300])  # an IR cut short: the reader refuses it
    (zoo / "config.xml").write_text('<?xml version="1.0"?>\n<!-- <net> -->\n<config/>\n')
    (zoo / "labels.xml").write_bytes(b"\x00\x01 no markup")
    (zoo / "model.onnx").write_bytes(b"")
    (zoo / "weights.bin").write_bytes(b"")
    return zoo


def test_a_folder_runs_its_irs_in_path_order_and_names_what_it_skips(zoo):
    run = ovgather("check", zoo, "--jobs", "2", "--json")
    doc = json.loads(run.stdout)
    jsonschema.validate(doc, _schema("check"))
    assert run.returncode == 2  # the worst: a model could not be used
    resnet = [str(zoo / "resnet" / v / "model.xml") for v in ("1", "2", "10")]
    assert [m["path"] for m in doc["models"]] == resnet  # 10 after 2
    assert [m["summary"]["mismatch"] for m in doc["models"]] == [0, 1, 0]
    broken = str(zoo / "broken" / "model.xml")
    assert [e["path"] for e in doc["errors"]] == [broken]
    assert [(s["path"], s["why"].split(":")[0]) for s in doc["skipped"]] == [
        (str(zoo / "config.xml"), "not an IR"), (str(zoo / "labels.xml"), "not an XML document"),
        (str(zoo / "model.onnx"), "an .onnx model")]
    assert "<config>" in doc["skipped"][0]["why"]
    assert doc["totals"] == {"models": 4, "ok": 2, "failing": 1, "errors": 1, "skipped": 3}
    err = run.stderr.splitlines()
    assert [line.split(":")[0] for line in err] == ["note"] * 3 + ["error"]
    assert err[-1].startswith(f"error: {broken}") and doc["errors"][0]["message"] in err[-1]


def test_one_job_and_two_jobs_print_the_same(zoo):
    one, two = ovgather("check", zoo), ovgather("check", zoo, "-j", "2")
    assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout, two.stderr)
    tail = one.stdout[one.stdout.index("summary: "):].splitlines()
    assert tail == ["summary: 4 model(s): 2 ok, 1 failing, 1 could not be used; 3 file(s) "
                    "skipped", f"  failing: {zoo}/resnet/2/model.xml",
                    f"  could not be used: {zoo}/broken/model.xml"]


def test_a_folder_without_an_ir_is_an_error_and_the_files_given_still_run(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.xml").write_text("<config/>")
    assert main(["check", str(tmp_path / "empty"), str(GOOD)]) == 2
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == (f"error: {tmp_path / 'empty'}: no IR in this folder (an "
                                    ".xml file whose root element is <net>)")
    assert out.startswith(f"{GOOD}: OK")
    assert main(["check", str(tmp_path / "empty"), "--json"]) == 2
    assert capsys.readouterr().out == ""  # no model could be used: nothing on stdout


def test_files_alone_print_no_summary_and_no_totals():
    run = ovgather("check", GOOD, WRONG, "--jobs", "2", "--json")
    assert run.returncode == 1 and set(json.loads(run.stdout)) == {"models"}
    assert [m["path"] for m in json.loads(run.stdout)["models"]] == [str(GOOD), str(WRONG)]


@pytest.mark.parametrize(("head", "root"), [
    (b'<?xml version="1.0"?>\n<net name="m" version="11">', "net"),
    (b'\xef\xbb\xbf<?xml version="1.0"?><!-- a <b> --><?pi x?>\n<net>', "net"),
    ('<?xml version="1.0" encoding="UTF-16"?><net/>'.encode("utf-16"), "net"),
    (b'<!DOCTYPE net [<!ENTITY x "y">]><net/>', "net"),
    (b"<annotation><net/></annotation>", "annotation"),
    (b"PK\x03\x04 a zip", None),
    (b"", None),
])
def test_the_root_element_is_read_from_the_first_bytes(tmp_path, head, root):
    path = tmp_path / "f.xml"
    path.write_bytes(head)
    assert root_element(str(path)) == root


def test_jobs_0_is_one_per_core_and_never_more_than_the_models_or_the_cores():
    cores = len(os.sched_getaffinity(0))
    assert jobs_wanted(0, 1000) == cores
    assert jobs_wanted(8, 3) == min(3, cores) and jobs_wanted(1, 5) == 1
    assert jobs_wanted(2, 0) == 1 and jobs_wanted(10_000, 10_000) == cores


# -- workers that die, interruptions ----------------------------------------------------------
_DYING = """
import argparse, os, signal, sys
from ovgather.cli.folders import Found, run_models

def prepare():
    def one(path, bar):
        if path == "b":
            os.kill(os.getpid(), signal.SIGKILL)
        return path.upper()
    return one

args = argparse.Namespace(jobs=2, json=False, debug=False)
batch = run_models(args, Found(models=["a", "b", "c", "d"], folders=True), prepare,
                   failing=lambda r: r == "C", show=print)
print(batch.code, batch.errors, batch.failing)
"""


def test_a_worker_that_dies_is_that_models_error_and_the_others_still_run():
    run = subprocess.run([sys.executable, "-c", _DYING], capture_output=True, text=True,
                         timeout=seconds(120))
    assert run.stdout.splitlines() == [
        "A", "C", "D",
        "2 [('b', 'b: the worker process running this model ended (SIGKILL)')] ['c']"]
    assert run.stderr.splitlines() == [
        "error: b: the worker process running this model ended (SIGKILL)"]


def _session(sid: int) -> list[int]:
    """The processes of session ``sid`` still alive (zombies aside)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _wait_for(sid: int, count: int, proc: subprocess.Popen) -> None:
    for _ in range(600):
        if len(_session(sid)) >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} processes in the run")


def _gone(sid: int) -> list[int]:
    for _ in range(200):
        left = _session(sid)
        if not left:
            return []
        time.sleep(0.05)
    return left


@pytest.fixture
def big_folder(tmp_path: Path) -> Path:
    for i in range(12):  # ~5k layers each: seconds of work for two workers
        for suffix in (".xml", ".bin"):
            (tmp_path / f"m{i:02d}{suffix}").symlink_to(DEEP.with_suffix(suffix))
    return tmp_path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_every_worker_and_exits_130(big_folder):
    proc = subprocess.Popen([sys.executable, "-m", "ovgather", "check", str(big_folder),
                             "--jobs", "2"], start_new_session=True, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            # as from a terminal: a job started in the background (`cmd &`)
                            # inherits SIGINT ignored, and ovgather leaves an ignored one alone
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for(proc.pid, 3, proc)  # the parent and its two workers
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends the whole foreground group
    _, err = proc.communicate(timeout=seconds(60))
    assert proc.returncode == 130
    assert err.splitlines()[-1] == "error: interrupted" and "Traceback" not in err
    assert _gone(proc.pid) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_parent_takes_its_workers_and_their_openvino_processes_along(tmp_path):
    for i in range(8):
        _ir(SAMPLES / "gather_versions.xml", tmp_path / f"m{i}" / "model.xml")
    proc = subprocess.Popen([sys.executable, "-m", "ovgather", "validate", str(tmp_path),
                             "--jobs", "2"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for(proc.pid, 5, proc)  # the parent, two workers, the runtime process of each
    proc.kill()  # SIGKILL: nothing of the parent runs any more
    proc.wait()
    assert _gone(proc.pid) == []
