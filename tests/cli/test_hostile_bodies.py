"""Bodies hidden by the spelling of their tag: ``check`` sees inside them and
``reshape --in-place`` leaves a model both readers still read, with the same body Consts."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from ovgather.cli import main
from ovgather.ir import const_value, read_ir

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "ir_samples" / "loop_gather.xml"


def _wrong_dim(text: str) -> str:
    """The body's Gather pick_row_g8 declares [1,7] where [1,4] is inferred."""
    start = text.index('names="row_out">', text.index('name="pick_row_g8"'))
    k = text.index("<dim>4</dim>", start)
    return text[:k] + "<dim>7</dim>" + text[k + len("<dim>4</dim>"):]


def _model(tmp_path: Path, text: str, extra_bin: bytes = b"") -> Path:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "m.xml"
    path.write_text(text)
    path.with_suffix(".bin").write_bytes(LOOP.with_suffix(".bin").read_bytes() + extra_bin)
    return path


@pytest.mark.parametrize("spelling", ["<body>", "<body >", "<body\n>"])
def test_check_finds_a_wrong_dim_inside_a_body_in_any_spelling(
        spelling: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _wrong_dim(LOOP.read_text()).replace("<body>", spelling)
    text = text.replace("</body>", spelling.replace("<", "</"))
    assert main(["check", str(_model(tmp_path, text))]) == 1
    assert "pick_row_g8" in capsys.readouterr().out


def test_reshape_in_place_keeps_a_spaced_body_readable(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A top-level Const after the body's bytes: the write repacks the body's Consts too,
    so none of them reads another Const's bytes afterwards."""
    text = LOOP.read_text().replace("<body>", "<body >").replace("</body>", "</body >")
    pad = ('<layer id="90" name="pad" type="Const" version="opset1"><data element_type="i64" '
           'shape="4" offset="25" size="32"/><output><port id="0" precision="I64"><dim>4</dim>'
           '</port></output></layer>\n<layer id="91" name="pad_out" type="Result" '
           'version="opset1"><input><port id="0" precision="I64"><dim>4</dim></port></input>'
           '</layer>\n')
    i = text.rindex("</layers>")
    text = text[:i] + pad + text[i:]
    i = text.rindex("</edges>")
    text = text[:i] + '<edge from-layer="90" from-port="0" to-layer="91" to-port="0"/>\n' + text[i:]
    extra = struct.pack("<4q", 1000, 2000, 3000, 4000)
    plain = _model(tmp_path / "plain", text.replace("<body >", "<body>"), extra)
    before = _all_consts(read_ir(plain))
    assert any("/body/" in name for name in before)
    path = _model(tmp_path, text, extra)
    code = main(["reshape", str(path), "--in-place"])
    capsys.readouterr()
    assert code in (0, 1)
    assert _all_consts(read_ir(path)) == before


def _all_consts(G, prefix: str = "") -> dict[str, list]:
    out = {}
    for n, attrs in G.nodes(data=True):
        if attrs["type"] == "Const":
            out[prefix + attrs["name"]] = const_value(G, n).tolist()
        for name, body in (attrs.get("bodies") or {}).items():
            out.update(_all_consts(body, f"{prefix}{attrs['name']}/{name}/"))
    return out


def test_check_refuses_a_loop_without_its_body(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = LOOP.read_text().replace("<body>", "<bodyx>").replace("</body>", "</bodyx>")
    assert main(["check", str(_model(tmp_path, text))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "row_loop" in err and "Traceback" not in err


def test_a_copied_model_reads_as_its_source(tmp_path: Path) -> None:
    shutil.copy(LOOP, tmp_path / "m.xml")
    shutil.copy(LOOP.with_suffix(".bin"), tmp_path / "m.bin")
    assert _all_consts(read_ir(tmp_path / "m.xml")) == _all_consts(read_ir(LOOP))
