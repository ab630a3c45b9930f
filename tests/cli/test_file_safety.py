"""No command writes over a file of its input model, and every write is atomic.

The input model's files are its .xml and the .bin beside it, under any spelling: another
case (``-o model.XML`` puts its .bin at ``model.bin``), ``./``, a symbolic or a hard link.
Only ``--in-place`` (of convert and reshape) may replace them. Every write goes through
one writer (``ovgather.atomic``): private unpredictable temporary names, a link at the
destination is replaced and never written through, SIGTERM and SIGHUP clean up as SIGINT does, and
the .xml/.bin pair is never mixed, not by a signal between the renames, not by two
processes racing on one output.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from slowdown import seconds

from ovgather import errors
from ovgather.cli import main
from ovgather.ir import read_ir, write_ir
from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A copy of mixed_ops.xml/.bin alone in a folder."""
    folder = tmp_path / "m"
    folder.mkdir()
    for suffix in (".xml", ".bin"):
        shutil.copy(SAMPLES / f"mixed_ops{suffix}", folder / f"mixed_ops{suffix}")
    return folder / "mixed_ops.xml"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: (p.read_bytes() if p.is_file() else b"<dir>") for p in folder.iterdir()}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_error(err: str) -> None:
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "Traceback" not in err and "internal error" not in err


# ------------------------------------------------------------------------------------------
# The input model is never overwritten
# ------------------------------------------------------------------------------------------
def spellings(model: Path) -> dict[str, Path]:
    """Other names of the model's .xml (for -o): case, ./, a symlink, a hard link."""
    folder = model.parent
    (folder / "link.xml").symlink_to(model.name)
    (folder / "link.bin").symlink_to(model.with_suffix(".bin").name)
    os.link(model.with_suffix(".bin"), folder / "hard.bin")
    return {"case": folder / "mixed_ops.XML",
            "dot": Path(os.path.relpath(folder, Path.cwd())) / "." / "mixed_ops.xml",
            "symlink": folder / "link.xml",
            "hardlink_bin": folder / "hard.xml"}


@pytest.mark.parametrize("spelling", ["case", "dot", "symlink", "hardlink_bin"])
@pytest.mark.parametrize("command", ["extract", "convert", "reshape", "show_bin"])
def test_no_command_writes_over_its_input(command: str, spelling: str, model: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = spellings(model)[spelling]
    before = snapshot(model.parent)
    if command == "extract":
        argv = ["extract", model, "--layer", "first_rows_nd5", "--depth", "0", "-o", out]
    elif command == "convert":
        argv = ["convert", model, "--to", "opset8", "-o", out]
    elif command == "reshape":
        argv = ["reshape", model, "--shape", "x=[2,3,8]", "-o", out]
    else:  # show -o the .bin (or its other spelling)
        argv = ["show", model, "-o", out.with_suffix(".bin")]
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert_one_error(err)
    assert "input model" in err
    assert snapshot(model.parent) == before


def test_reshape_of_that_model_writes_beside_it(model: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The reshape the matrix above refuses is a real change (so the refusal is not
    'nothing to write')."""
    out = model.parent / "static.xml"
    code, _, err = run_cli(["reshape", model, "--shape", "x=[2,3,8]", "-o", out], capsys)
    assert code == 0, err
    assert read_ir(out).nodes["0"]["outputs"][0]["dims"] == (2, 3, 8)


def test_extract_next_to_the_input_still_works(model: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = model.parent / "cut.xml"
    code, _, err = run_cli(["extract", model, "--layer", "first_rows_nd5", "--depth", "0",
                            "-o", out], capsys)
    assert code == 0, err
    read_ir(out)


def test_convert_in_place_through_another_spelling(model: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import openvino as ov

    code, _, err = run_cli(["convert", model, "--to", "opset8", "-o",
                            model.parent / "." / model.name, "--in-place"], capsys)
    assert code == 0, err
    ov.Core().read_model(str(model))


def test_write_ir_refuses_the_source_bin(model: Path) -> None:
    G = read_ir(model)
    before = snapshot(model.parent)
    for dest in (model.with_suffix(".bin"), model.parent / "MIXED_OPS.bin",
                 model.parent / "other.bin"):
        with pytest.raises(errors.OutputError, match=r"\.bin"):
            write_ir(G, dest)
    assert snapshot(model.parent) == before


def test_write_ir_refuses_the_source_bin_under_another_xml(model: Path) -> None:
    """A graph that shares the source's weights (an extract) may not write over them
    under another .xml name (``mixed_ops.XML`` -> ``mixed_ops.bin``)."""
    from ovgather.edit.extract import extract

    H = extract(read_ir(model), "first_rows_nd5", depth=0)
    before = snapshot(model.parent)
    with pytest.raises(errors.OutputError, match="weights"):
        write_ir(H, model.parent / "mixed_ops.XML")
    assert snapshot(model.parent) == before


# ------------------------------------------------------------------------------------------
# Links and temporary names
# ------------------------------------------------------------------------------------------
def fake_graphviz(folder: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """A ``dot`` program first on PATH that runs ``body`` (a shell script)."""
    fake = folder / "dot"
    folder.mkdir()
    fake.write_text(f"#!/bin/sh\n{body}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


#: Writes what it reads to the file after -o (to stdout without one), as Graphviz does.
WRITES_TO_O = ('out=/dev/stdout; while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; '
               'done; cat > "$out"')


@pytest.mark.parametrize("fmt", ["dot", "svg", "png"])
def test_show_replaces_a_link_never_writes_through_it(fmt: str, model: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """SVG and PNG go through a stand-in for Graphviz (the test needs no Graphviz): what
    matters is where ovgather asks it to write and what ovgather does with that file."""
    fake_graphviz(tmp_path / "bin", monkeypatch, WRITES_TO_O)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / f"pic.{fmt}"
    out.symlink_to(victim)
    # the old predictable temporary name, planted as a link: must not be used either
    Path(f"{out}.tmp").symlink_to(victim)
    code, _, err = run_cli(["show", model, "-o", out], capsys)
    assert code == 0, err
    assert victim.read_text() == "precious"
    assert not out.is_symlink() and out.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["bin", "m", "victim.txt", out.name, f"{out.name}.tmp"])


def test_temporary_names_are_private_and_unpredictable(model: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from ovgather import atomic

    seen = []

    def hook(point: str) -> None:
        if point == "written":
            entries = [p for p in (tmp_path / "out").iterdir()
                       if p.name not in ("o.xml", "o.bin")]
            seen.extend((p.name, p.stat().st_mode & 0o777, sorted(os.listdir(p)))
                        for p in entries)

    (tmp_path / "out").mkdir()
    monkeypatch.setattr(atomic, "_hook", hook)
    write_ir(read_ir(model), tmp_path / "out" / "o.xml")
    write_ir(read_ir(model), tmp_path / "out" / "o.xml")
    assert len(seen) == 2
    (name1, mode, files), (name2, _, _) = seen
    assert name1.startswith(".ovgather-") and name1 != name2 and mode == 0o700
    assert files == ["0.bin", "1.xml"]
    assert sorted(os.listdir(tmp_path / "out")) == ["o.bin", "o.xml"]


def test_graphviz_that_never_ends_is_a_clear_error(model: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from ovgather.views.show import graphviz

    fake_graphviz(tmp_path / "bin", monkeypatch, "exec sleep 30")  # one process, killed
    monkeypatch.setattr(graphviz, "DOT_TIMEOUT", 0.5)
    code, _, err = run_cli(["show", model, "-o", tmp_path / "pic.svg"], capsys)
    assert code == 2
    assert_one_error(err)
    assert "did not finish" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "m"]


# ------------------------------------------------------------------------------------------
# Signals and races, in real processes
# ------------------------------------------------------------------------------------------
#: Runs the CLI with a hook that stops at one point of the writer: it touches
#: ``<flag>.reached`` and waits (up to 20 s) for ``<flag>.go``.
PAUSING_CLI = """
import os, sys, time
from ovgather import atomic
point, flag = sys.argv[1], sys.argv[2]
def hook(at):
    if at != point:
        return
    open(flag + ".reached", "w").close()
    end = time.monotonic() + 20
    while not os.path.exists(flag + ".go") and time.monotonic() < end:
        time.sleep(0.01)
atomic._hook = hook
sys.argv = ["ovgather"] + sys.argv[3:]
from ovgather.cli import console_main
console_main()
"""


def default_signals() -> None:
    """In the child, before it starts: SIGINT, SIGTERM and SIGHUP at their default action,
    as a command started from a terminal has them, whatever the test run inherited (under
    ``nohup`` SIGHUP is ignored, in a background job SIGINT, and ovgather rightly leaves an
    ignored signal ignored)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start_paused(point: str, flag: Path, argv: list) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", PAUSING_CLI, point, str(flag),
                             *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)


def wait_for(path: Path, child: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + seconds(timeout)
    while not path.exists():
        if child.poll() is not None:
            raise AssertionError(f"the child ended early: {child.communicate()}")
        assert time.monotonic() < end, "the child never reached the pause"
        time.sleep(0.01)


def big_model(folder: Path) -> Path:
    """A GatherND-5 model with a few MB of weights (so its write is not trivial)."""
    import openvino as ov
    from openvino import opset5, opset8

    folder.mkdir(parents=True, exist_ok=True)
    data = opset8.parameter([2, 3, 512], np.float32, name="data")
    w = opset8.constant(np.random.default_rng(1).random((2, 3, 512 * 512), np.float32)
                        [..., :512], name="w")
    ids = opset8.constant(np.array([[[1], [0]], [[2], [1]]], np.int64), name="ids")
    gnd = opset5.gather_nd(opset8.add(data, w), ids, 1)
    gnd.set_friendly_name("gnd")
    big = opset8.constant(np.random.default_rng(2).random(1 << 20, np.float32), name="big")
    model = ov.Model([opset8.result(gnd), opset8.result(big)], [data], "big")
    path = folder / "model.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
@pytest.mark.parametrize("point", ["started", "written"])
def test_signal_while_writing_keeps_old_files_and_leaves_nothing(sig: int, point: str,
                                                                 tmp_path: Path) -> None:
    src = big_model(tmp_path / "src")
    out = tmp_path / "out"
    out.mkdir()
    (out / "o.xml").write_bytes(b"old xml")
    (out / "o.bin").write_bytes(b"old bin")
    flag = tmp_path / "flag"
    child = start_paused(point, flag, ["convert", src, "--to", "opset8", "-o", out / "o.xml"])
    wait_for(Path(f"{flag}.reached"), child)
    if point == "written":  # the temporary files hold the whole new model now
        (temp,) = [p for p in out.iterdir() if p.name.startswith(".ovgather-")]
        assert (temp / "0.bin").stat().st_size > 4 << 20
    child.send_signal(sig)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + sig, err
    name = "" if sig == signal.SIGINT else f" ({signal.Signals(sig).name})"
    assert err.strip().splitlines() == [f"error: interrupted{name}"]
    assert snapshot(out) == {"o.xml": b"old xml", "o.bin": b"old bin"}


@pytest.mark.parametrize("point", ["committing", "between-renames"])
def test_signal_between_renames_in_place_never_mixes(point: str, tmp_path: Path) -> None:
    """The signal is held until both renames are done: the input is the new pair, which
    OpenVINO reads, and the process then stops as asked."""
    import openvino as ov

    src = big_model(tmp_path / "src")
    flag = tmp_path / "flag"
    child = start_paused(point, flag, ["convert", src, "--to", "opset8", "-o", src,
                                       "--in-place"])
    wait_for(Path(f"{flag}.reached"), child)
    child.send_signal(signal.SIGTERM)
    time.sleep(0.2)  # the signal is delivered (and held) before the write goes on
    Path(f"{flag}.go").touch()
    _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + signal.SIGTERM, err
    assert sorted(os.listdir(src.parent)) == ["model.bin", "model.xml"]
    G = read_ir(src)
    assert {a.get("version") for _, a in G.nodes(data=True) if a["type"] == "GatherND"} == {
        "opset8"}
    ov.Core().compile_model(str(src), "CPU", cpu_config())


def test_two_converts_racing_on_one_output_never_mix(tmp_path: Path) -> None:
    """A pauses between its two renames; B writes the same output meanwhile. B waits
    for A's commit to finish, then replaces both files: the pair is B's."""
    a_src = big_model(tmp_path / "a")
    b_src = tmp_path / "b" / "model.xml"
    b_src.parent.mkdir()
    shutil.copy(SAMPLES / "mixed_ops.xml", b_src)
    shutil.copy(SAMPLES / "mixed_ops.bin", b_src.with_suffix(".bin"))
    out = tmp_path / "out" / "o.xml"
    out.parent.mkdir()
    flag = tmp_path / "flag"
    a = start_paused("between-renames", flag, ["convert", a_src, "--to", "opset8", "-o", out])
    wait_for(Path(f"{flag}.reached"), a)
    b_flag = tmp_path / "bflag"
    b = start_paused("committing", b_flag, ["convert", b_src, "--to", "opset8", "-o", out])
    time.sleep(1.0)
    assert not Path(f"{b_flag}.reached").exists(), "B committed while A held the lock"
    assert b.poll() is None
    Path(f"{flag}.go").touch()
    Path(f"{b_flag}.go").touch()
    assert a.wait(timeout=60) == 0, a.communicate()
    assert b.wait(timeout=60) == 0, b.communicate()
    assert Path(f"{b_flag}.reached").exists()
    G = read_ir(out)
    assert G.graph["name"] == read_ir(b_src).graph["name"]
    import openvino as ov

    ov.Core().compile_model(str(out), "CPU", cpu_config())
    assert sorted(os.listdir(out.parent)) == ["o.bin", "o.xml"]


def test_a_programs_own_signal_handlers_are_left_alone(model: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Only default actions are taken over during a write, and they are put back."""
    from ovgather import atomic

    seen = {}

    def hook(point: str) -> None:
        if point == "written":
            seen.update({s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP,
                                                           signal.SIGINT)})

    mine = lambda signum, frame: None  # noqa: E731
    old_term = signal.signal(signal.SIGTERM, mine)
    old_hup = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # Python's own SIGINT handler, as in a terminal (a run started with `&` has it ignored)
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(atomic, "_hook", hook)
        write_ir(read_ir(model), tmp_path / "o.xml")
        assert seen[signal.SIGTERM] is mine and seen[signal.SIGHUP] == signal.SIG_IGN
        assert seen[signal.SIGINT] not in (signal.default_int_handler, signal.SIG_DFL)
        assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGHUP, old_hup)
        signal.signal(signal.SIGINT, old_int)


def test_failed_write_over_links_puts_the_links_back(model: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """out.xml and out.bin are links elsewhere; the .xml rename fails: both links are as
    before and their targets untouched."""
    import errno

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "a.xml").write_text("xml")
    (victim / "a.bin").write_text("bin")
    out = tmp_path / "out"
    out.mkdir()
    (out / "o.xml").symlink_to(victim / "a.xml")
    (out / "o.bin").symlink_to(victim / "a.bin")
    G = read_ir(model)
    real = os.replace
    calls = []

    def replace(a, b):  # noqa: ANN001, ANN202
        calls.append(b)
        if len(calls) == 2:
            raise OSError(errno.EIO, "simulated")
        return real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(errors.OutputError):
        write_ir(G, out / "o.xml")
    monkeypatch.undo()
    assert os.readlink(out / "o.xml") == str(victim / "a.xml")
    assert os.readlink(out / "o.bin") == str(victim / "a.bin")
    assert (victim / "a.xml").read_text() == "xml" and (victim / "a.bin").read_text() == "bin"
    assert sorted(os.listdir(out)) == ["o.bin", "o.xml"]
