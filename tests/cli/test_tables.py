"""The tables of ``infer`` and ``check --all`` as a person reads them: on a terminal as
wide as it is (its window, or ``COLUMNS``), every row on one line with a long layer name
shortened in the middle; in a pipe one row per line with every name whole (to grep);
``--wide`` never shortens nor wraps. Names are shown escaped: a control character in a
layer name (an IR encodes ``&#10;``) can never print a line of its own."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from terminal import on_terminal, terminal_env

from ovgather.cli import output

DIMS = "<dim>1</dim><dim>4</dim>"
#: long names as a converter writes them: both ends say which layer it is
LONG = ["input"] + [f"__module.model.layers.{i}.self_attn.q_proj/aten::linear/MatMul_{i}_"
                    f"{'x' * 10}/end{i}" for i in range(4)]


def write_ir(path: Path, names: list[str], wrong: int | None = None) -> Path:
    """A Parameter and a chain of ReLUs named ``names``, then a Result; the ReLU at
    index ``wrong`` declares a wrong output dim (a mismatch with a long "why")."""
    layers = [f'<layer id="0" name={quoteattr(names[0])} type="Parameter" version="opset1">'
              f'<data shape="1,4" element_type="f32"/><output><port id="0" precision="FP32">'
              f'{DIMS}</port></output></layer>']
    edges = []
    for i, name in enumerate(names[1:], 1):
        out = "<dim>1</dim><dim>5</dim>" if i == wrong else DIMS
        layers.append(f'<layer id="{i}" name={quoteattr(name)} type="ReLU" version="opset1">'
                      f'<input><port id="0" precision="FP32">{DIMS}</port></input><output>'
                      f'<port id="1" precision="FP32">{out}</port></output></layer>')
        edges.append(f'<edge from-layer="{i - 1}" from-port="{0 if i == 1 else 1}" '
                     f'to-layer="{i}" to-port="0"/>')
    n = len(names)
    layers.append(f'<layer id="{n}" name="result" type="Result" version="opset1"><input>'
                  f'<port id="0" precision="FP32">{DIMS}</port></input></layer>')
    edges.append(f'<edge from-layer="{n - 1}" from-port="1" to-layer="{n}" to-port="0"/>')
    path.write_text(f'<?xml version="1.0"?>\n<net name="m" version="11"><layers>'
                    f'{"".join(layers)}</layers><edges>{"".join(edges)}</edges></net>\n',
                    encoding="utf-8")
    path.with_suffix(".bin").write_bytes(b"")
    return path


@pytest.fixture
def long_names(tmp_path: Path) -> Path:
    return write_ir(tmp_path / "m.xml", LONG, wrong=4)


def _piped(argv: list[str], cwd: Path, columns: str | None = None) -> tuple[int, str]:
    env = terminal_env(None) if columns is None else terminal_env(int(columns))
    done = subprocess.run([sys.executable, "-m", "ovgather", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, encoding="utf-8")
    return done.returncode, done.stdout


def _rows(text: str, first: re.Pattern) -> list[str]:
    return [line for line in text.splitlines() if first.match(line)]


INFER_ROW = re.compile(r"\d+ ")
CHECK_ROW = re.compile(r"(ok|mismatch) ")
RUNS = [(["infer", "m.xml"], INFER_ROW), (["check", "--all", "m.xml"], CHECK_ROW)]


# -- on a terminal ------------------------------------------------------------------------------
@pytest.mark.parametrize("columns", [80, 120, 220])
@pytest.mark.parametrize("argv,row", RUNS, ids=["infer", "check --all"])
def test_a_terminal_of_any_width_has_one_line_per_row(argv, row, columns, long_names):
    code, shown = on_terminal(argv, columns, cwd=long_names.parent)
    assert code in (0, 1), shown
    lines = shown.splitlines()
    assert all(len(line) <= columns for line in lines), (columns, shown)
    rows = _rows(shown, row)
    assert len(rows) == len(LONG) + 1, shown  # every layer, the Result too: one line each
    for name, line in zip(LONG[1:], rows[1:], strict=False):
        if columns == 220:  # room enough: the whole name
            assert name in line, shown
        elif columns == 80 or name not in line:  # both ends of it, cut in the middle
            assert name not in line and "…" in line, shown
            assert name[:8] in line and line.split("…")[1].split()[0] in name, shown
    # no row goes on below itself: after a row comes a row, its "why" or the verdict
    for line, after in zip(lines, lines[1:], strict=False):
        if row.match(line):
            assert row.match(after) or after.startswith(("    output 0 declares", "m.xml: ")), \
                shown


def test_columns_is_honoured_over_the_window(long_names):
    env = terminal_env(120, OVGATHER_PROGRESS_DELAY="3600")
    argv = ["check", "--all", "m.xml"]
    _, shown = on_terminal(argv, 220, cwd=long_names.parent, env=env)
    assert max(len(line) for line in shown.splitlines()) <= 120
    assert "…" in shown  # 120 columns are too few for the whole names
    _, wide = on_terminal(argv, 220, cwd=long_names.parent)
    assert "…" not in wide and max(len(line) for line in wide.splitlines()) > 120


def test_a_terminal_of_unknown_width_is_100_columns(long_names):
    _, shown = on_terminal(["check", "--all", "m.xml"], 0, cwd=long_names.parent)
    assert max(len(line) for line in shown.splitlines()) == 100


# -- in a pipe ----------------------------------------------------------------------------------
@pytest.mark.parametrize("columns", [None, "40"])
@pytest.mark.parametrize("argv,row", RUNS, ids=["infer", "check --all"])
def test_in_a_pipe_every_row_is_one_line_with_its_whole_name(argv, row, columns, long_names):
    code, out = _piped(argv, long_names.parent, columns)
    assert code in (0, 1), out
    rows = _rows(out, row)
    assert len(rows) == len(LONG) + 1 and "…" not in out, out
    for name in LONG:  # grep finds every layer's row
        found = [line for line in out.splitlines() if name in line]
        assert found and all(row.match(line) for line in found), (name, out)
    assert len(out.splitlines()) == len(rows) + 2  # the heading, the path or the verdict
    if argv[0] == "check":  # the "why" on its row, not wrapped below it
        mismatch = next(line for line in rows if line.startswith("mismatch"))
        assert "declares [1,5]" in mismatch and LONG[4] in mismatch


# -- --wide ---------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,row", RUNS, ids=["infer", "check --all"])
def test_wide_never_shortens_nor_wraps_on_a_terminal(argv, row, long_names):
    code, shown = on_terminal([*argv, "--wide"], 80, cwd=long_names.parent)
    assert code in (0, 1), shown
    assert "…" not in shown
    rows = _rows(shown, row)
    assert len(rows) == len(LONG) + 1
    assert all(any(name in line for line in rows) for name in LONG[1:])
    assert max(len(line) for line in rows) > 80
    assert not [line for line in shown.splitlines() if line.startswith(" ")], shown
    assert shown == _piped([*argv, "--wide"], long_names.parent)[1]  # as in a pipe


def test_wide_is_offered_by_check_infer_and_validate():
    from ovgather.cli import build_parser

    for command in ("check", "infer", "validate"):
        assert build_parser(command).parse_args([command, "m.xml", "--wide"]).wide


# -- the layout itself ---------------------------------------------------------------------
def test_a_long_name_is_shortened_in_the_middle():
    name = "__module.model.layers.0.self_attn/MatMul"
    assert output.shorten(name, 34) == "__module.model.la…self_attn/MatMul"
    assert output.shorten(name, len(name)) == name
    assert len(output.shorten(name, 9)) == 9


@pytest.mark.parametrize("cols", [40, 60, 80, 100, 140])
def test_table_rows_fit_the_width_or_stay_whole_without_one(cols):
    rows = [(str(i), f"{'n' * random.Random(i).randrange(1, 120)}{i}", "Relu/opset1",
             "[1,4]", "" if i % 3 else "a note " * 12) for i in range(30)]
    head = ("id", "layer", "type", "inferred", "note")
    lines = output.table_lines(head, rows, cols)
    aligned = [line for line, _ in lines if not line.startswith(" ")]
    assert len(aligned) == len(rows) + 1 and all(len(line) <= cols for line in aligned)
    whole = output.table_lines(head, rows, None)
    assert len(whole) == len(rows) + 1 and all(hang is None for _, hang in whole)
    assert all(row[1] in line for row, (line, _) in zip(rows, whole[1:], strict=True))


def test_width_is_the_terminals_or_none_in_a_pipe(monkeypatch):
    monkeypatch.setattr(output, "_isatty", lambda stream: True)
    monkeypatch.setenv("COLUMNS", "173")
    assert output.width() == 173
    monkeypatch.setenv("COLUMNS", "0")
    assert output.width() == output.WIDTH  # captured: no window to ask
    output.set_wide(True)
    try:
        assert output.width() is None
    finally:
        output.set_wide(False)
    monkeypatch.setattr(output, "_isatty", lambda stream: False)
    monkeypatch.setenv("COLUMNS", "50")
    assert output.width() is None


# -- escaped names ------------------------------------------------------------------------------
#: what an IR (XML 1.0) can hold in a name, as a character or as ``&#10;``
XML_CONTROLS = "\t\n\r\x7f\x80\x85\x9b\u2028\u2029\u200e\u202e\u2066"
#: a raw control character on the screen (all but the newline that ends a line)
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f"
                         "\u202a-\u202e\u2066-\u2069]")
FORGED = "m.xml: OK: 6 layers, 6 ok, 0 mismatch, 0 invalid, 0 unchecked"


def _hostile_names(seed: int, controls: str = XML_CONTROLS) -> list[str]:
    rng = random.Random(seed)
    names = ["input"]
    for i in range(4):
        pieces = [rng.choice(controls) + rng.choice(["x", "y.z", "/", ""])
                  for _ in range(rng.randrange(1, 12))]
        names.append(f"n{i}" + "".join(pieces) + f"\n{FORGED}\r\n" + rng.choice(controls))
    return names


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("argv", [["infer", "m.xml"], ["check", "--all", "m.xml"]],
                         ids=["infer", "check --all"])
def test_a_name_with_control_characters_prints_no_line_of_its_own(seed, argv, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    write_ir(plain / "m.xml", LONG, wrong=4)
    write_ir(tmp_path / "m.xml", _hostile_names(seed), wrong=4)
    _, expected = _piped(argv, plain)
    code, out = _piped(argv, tmp_path)
    assert code == (1 if argv[0] == "check" else 0), out
    assert len(out.splitlines()) == len(expected.splitlines()), out
    assert not RAW_CONTROL.search(out), out
    assert not [line for line in out.splitlines() if line.startswith("m.xml: OK")], out
    assert "\\n" + FORGED + "\\r\\n" in out  # shown, escaped, inside its row
    _, shown = on_terminal(argv, 120, cwd=tmp_path)
    assert not RAW_CONTROL.search(shown.replace("\n", "")), shown
    assert len(shown.splitlines()) == len(on_terminal(argv, 120, cwd=plain)[1].splitlines())
    assert not [line for line in shown.splitlines() if line.startswith("m.xml: OK")]


def test_json_keeps_the_names_exact(tmp_path):
    names = _hostile_names(7)
    write_ir(tmp_path / "m.xml", names)
    code, out = _piped(["infer", "m.xml", "--json"], tmp_path)
    assert code == 0
    assert [lr["name"] for lr in json.loads(out)["models"][0]["layers"]][:-1] == names


@pytest.mark.parametrize("seed", range(6))
def test_every_control_character_is_escaped_in_tables_and_lines(seed, capsys, monkeypatch):
    """Beyond what XML can hold (an ONNX name, a path): ESC, NUL, BEL, C1 controls."""
    rng = random.Random(seed)
    controls = "".join(map(chr, [*range(0x20), *range(0x7f, 0xa0)])) + "\u2028\u2029\u202e"
    names = ["".join(rng.choice(controls + "ab/.") for _ in range(rng.randrange(1, 40)))
             for _ in range(8)]
    head = ("id", "layer", "type", "inferred", "note")
    rows = [(str(i), name, "Relu/opset1", "[1,4]", name[:5]) for i, name in enumerate(names)]
    for cols in (None, 60):
        monkeypatch.setattr(output, "width", lambda stream=None, cols=cols: cols)
        output.table(head, rows)
        for name in names:
            output.say_line(f"  blocked: Relu '{name}' (id 3): {name}")
            output.say_record(f"{name}: PROBLEMS: 1 layers")
            output.say_err(f"note: skipped {name}: {name}")
        out, err = capsys.readouterr()
        assert not RAW_CONTROL.search(out.replace("\n", "") + err.replace("\n", ""))
        if cols is None:
            assert len(out.splitlines()) == 1 + 3 * len(rows)
            assert len(err.splitlines()) == len(rows)
    assert output.shown("a\nb\x1b[2Jc\x00") == "a\\nb\\x1b[2Jc\\x00"


def test_an_error_line_shows_the_name_escaped(long_names):
    done = subprocess.run([sys.executable, "-m", "ovgather", "check", "m.xml", "--shape",
                           "in\x1b[2Jput\x07=[1,4]"], cwd=long_names.parent,
                          capture_output=True, text=True, env=terminal_env(None))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "\x1b" not in done.stderr and "in\\x1b[2Jput\\x07" in done.stderr
