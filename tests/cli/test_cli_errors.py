"""The command line's error contract.

Exit 2 and exactly one ``error:`` line naming the file for every input that cannot be used,
from every subcommand; nothing on stdout; never a traceback unless ``--debug`` is given, and
then always one (it is what a bug report needs). Even a bug inside ovgather is one line
without ``--debug``. A few tests run the real ``python -m ovgather`` in a subprocess, so the
contract holds for the installed entry point and not only for ``main()`` in-process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ovgather.cli import main

TRACEBACK = "Traceback (most recent call last)"


def make_model(folder: Path, name: str = "model") -> Path:
    """A small valid IR written by OpenVINO."""
    import openvino as ov
    from openvino import opset8 as ops

    data = ops.parameter([2, 3, 4], np.float32, name="data")
    ids = ops.constant(np.array([[1], [2]], dtype=np.int32), name="ids")
    gnd = ops.gather_nd(data, ids, batch_dims=1, name="gnd")
    model = ov.Model([ops.result(gnd, name="out")], [data], name)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return make_model(tmp_path / "good")


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    """A truncated IR (cut in the middle of the layers)."""
    path = tmp_path / "bad" / "broken.xml"
    path.parent.mkdir()
    text = make_model(tmp_path / "src").read_text()
    path.write_text(text[: len(text) // 2])
    return path


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_error_line(err: str, *names: str) -> str:
    """Exactly one stderr line, ``error: …``, naming each of ``names``; no traceback."""
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{err}"
    assert lines[0].startswith("error: "), err
    assert TRACEBACK not in err
    for name in names:
        assert name in lines[0], f"{name!r} not named in {lines[0]!r}"
    return lines[0]


# --------------------------------------------------------------------------------------------
# Inputs that cannot be used, through every subcommand
# --------------------------------------------------------------------------------------------

COMMANDS = {
    "check": lambda p, tmp: ["check", str(p)],
    "check_json": lambda p, tmp: ["check", str(p), "--json"],
    "infer": lambda p, tmp: ["infer", str(p)],
    "convert": lambda p, tmp: ["convert", str(p), "--to", "opset5", "-o", str(tmp / "o.xml")],
    "validate": lambda p, tmp: ["validate", str(p)],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_missing_file(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "no_such_model.xml"
    code, out, err = run_cli(COMMANDS[command](path, tmp_path), capsys)
    assert "invalid choice" not in err, f"the {command} command is not registered"
    assert code == 2 and out == ""
    assert_one_error_line(err, "no_such_model.xml")


@pytest.mark.parametrize("command", COMMANDS)
def test_truncated_file(command: str, bad: Path, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(COMMANDS[command](bad, tmp_path), capsys)
    assert "invalid choice" not in err, f"the {command} command is not registered"
    assert code == 2 and out == ""
    line = assert_one_error_line(err, "broken.xml")
    assert "broken.xml:" in line, "the XML line must follow the file name"
    assert not (tmp_path / "o.xml").exists() and not (tmp_path / "o.bin").exists()


@pytest.mark.parametrize("command", ["check", "infer", "validate"])
def test_directory_instead_of_file(command: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "model.xml"
    folder.mkdir()
    code, out, err = run_cli([command, str(folder)], capsys)
    assert "invalid choice" not in err
    assert code == 2 and out == ""
    assert_one_error_line(err, "model.xml")


def _all_commands() -> list[str]:
    """Every registered subcommand, so a command added later is held to the same rules."""
    import argparse

    from ovgather.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


@pytest.mark.parametrize("command", _all_commands())
def test_every_command_refuses_a_missing_model_in_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli([command, str(tmp_path / "no_such_model.xml")], capsys)
    assert code == 2 and out == ""
    assert_one_error_line(err)


@pytest.mark.parametrize("command", _all_commands())
def test_every_command_refuses_a_truncated_model_in_one_line(
    command: str, bad: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli([command, str(bad)], capsys)
    assert code == 2
    assert_one_error_line(err)


def test_one_bad_file_among_several(good: Path, bad: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["check", str(good), str(bad)], capsys)
    assert code == 2
    assert_one_error_line(err, "broken.xml")


def test_missing_bin_names_the_bin(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good.with_suffix(".bin").unlink()
    code, out, err = run_cli(["check", str(good)], capsys)
    assert code == 2 and out == ""
    assert_one_error_line(err, "model.xml", "model.bin")


def test_message_stays_on_one_line_when_a_name_holds_a_newline(
    good: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A layer name with a newline (a character reference, legal XML) in a duplicate id."""
    text = good.read_text()
    start = text.index('<layer id="1"')
    end = text.index("</layer>", start) + len("</layer>")
    twin = text[start:end].replace('name="ids"', 'name="evil&#10;error: fake second line"')
    good.write_text(text[:end] + "\n" + twin + text[end:])
    code, _, err = run_cli(["check", str(good)], capsys)
    assert code == 2
    assert_one_error_line(err, "model.xml")


# --------------------------------------------------------------------------------------------
# Bad options
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["no-such-command"],
    ["check"],
    ["check", "{model}", "--no-such-option"],
    ["check", "{model}", "--shape", "data=[2,x,4]"],
    ["check", "{model}", "--shape", "data"],
    ["check", "{model}", "--shape", "nosuchinput=[1,2]"],
    ["convert", "{model}", "--to", "opset9", "-o", "{tmp}/o.xml"],
    ["convert", "{model}", "--to", "opset5"],
    ["validate", "{model}", "--seed", "x"],
], ids=lambda a: " ".join(a))
def test_bad_option_exit_2_one_line(argv: list[str], good: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.format(model=good, tmp=tmp_path) for a in argv]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert not (tmp_path / "o.xml").exists()


def test_convert_into_a_missing_folder(good: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out_path = tmp_path / "no" / "such" / "folder" / "o.xml"
    code, out, err = run_cli(["convert", str(good), "--to", "opset5", "-o", str(out_path)],
                             capsys)
    assert code == 2 and out == ""
    assert_one_error_line(err, "o.xml")
    assert not (tmp_path / "no").exists()


def test_help_is_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    out, err = capsys.readouterr()
    assert info.value.code == 0 and "check" in out and err == ""


# --------------------------------------------------------------------------------------------
# --debug: the traceback for bug reports, and only then
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(where: str, bad: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--debug", "check", str(bad)] if where == "before" else ["check", str(bad), "--debug"]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert TRACEBACK in err
    assert err.splitlines()[-1].startswith("error: ") and "broken.xml" in err.splitlines()[-1]


def test_debug_does_not_change_a_good_run(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["check", str(good), "--json"], capsys)
    code_debug, out_debug, err_debug = run_cli(["--debug", "check", str(good), "--json"], capsys)
    assert code == code_debug == 0
    assert out == out_debug and err == err_debug == ""


def test_a_bug_is_one_line_without_debug(good: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """An exception ovgather did not mean to raise still gives one line and exit 2."""
    from ovgather.ir import reader as ir

    def bug(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(ir._Reader, "read", bug)
    code, out, err = run_cli(["check", str(good)], capsys)
    assert code == 2 and out == ""
    line = assert_one_error_line(err)
    assert "internal error" in line and "ZeroDivisionError" in line and "--debug" in line
    code, _, err = run_cli(["check", str(good), "--debug"], capsys)
    assert code == 2 and TRACEBACK in err and "simulated bug" in err


def test_interrupt_is_one_line(good: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    from ovgather.ir import reader as ir

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ir._Reader, "read", interrupted)
    code, out, err = run_cli(["check", str(good)], capsys)
    assert code == 130 and out == ""
    assert err == "error: interrupted\n"


# --------------------------------------------------------------------------------------------
# The real entry point, in a subprocess
# --------------------------------------------------------------------------------------------


def _python_m(*argv: str) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-m", "ovgather", *argv], capture_output=True,
                          text=True, timeout=120, cwd=root)


def test_subprocess_bad_input_one_line(bad: Path) -> None:
    proc = _python_m("check", str(bad))
    assert proc.returncode == 2 and proc.stdout == ""
    assert_one_error_line(proc.stderr, "broken.xml")


def test_subprocess_debug_traceback(bad: Path) -> None:
    proc = _python_m("check", str(bad), "--debug")
    assert proc.returncode == 2
    assert TRACEBACK in proc.stderr and "broken.xml" in proc.stderr.splitlines()[-1]


def test_subprocess_good_input_no_stderr(good: Path) -> None:
    proc = _python_m("check", str(good), "--json")
    assert proc.returncode == 0 and proc.stderr == ""


def test_subprocess_reader_that_goes_away_is_not_an_error(tmp_path: Path) -> None:
    """`ovgather infer big.xml | head -1`: the closed pipe ends the command quietly with
    the shell's SIGPIPE code, not an `error: internal error` line."""
    from gen_models import big_ir

    model = big_ir(2000, tmp_path / "big.xml")  # its listing is larger than a pipe buffer
    proc = subprocess.Popen([sys.executable, "-m", "ovgather", "infer", str(model)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout.readline().startswith(str(model).encode())
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert stderr == ""


@pytest.mark.parametrize(("argv", "meant"), [(["chek", "m.xml"], "check"),
                                            (["valdate", "m.xml"], "validate"),
                                            (["show", "--format", "pgn", "m.xml", "-o", "x"],
                                             "png")])
def test_a_mistyped_choice_says_which_was_meant(argv, meant):
    done = subprocess.run([sys.executable, "-m", "ovgather", *argv], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert f"did you mean '{meant}'?" in lines[0]
