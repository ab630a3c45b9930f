"""Models with ``string`` tensors (as model-server and tokenizer models have): every
command runs them or says in one line why not, never a traceback or an internal error.
The inputs made for a string input are short strings (never empty), outputs of strings
are compared exactly, and ``reshape``'s row proof reads them as strings.

The models are generated here (OpenVINO's own opset15 string ops), their names and sizes
drawn from a seeded generator."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ovgather.cli import main

ov = pytest.importorskip("openvino")
opset = pytest.importorskip("openvino.opset15")


def _name(rng: np.random.Generator, prefix: str) -> str:
    return prefix + "".join(rng.choice(list("abcdefgh"), size=4))


def _gather_model(path: Path, rng: np.random.Generator) -> dict[str, object]:
    """Strings [?, W] gathered along axis 1 (and a real input beside them)."""
    width = int(rng.integers(3, 7))
    words, reals = _name(rng, "words_"), _name(rng, "x_")
    p = opset.parameter([-1, width], ov.Type.string, name=words)
    x = opset.parameter([-1, width], ov.Type.f32, name=reals)
    picked = rng.permutation(width)[:2].astype(np.int32)
    g = opset.gather(p, opset.constant(picked), opset.constant(np.int32(1)))
    model = ov.Model([g.output(0), opset.relu(x).output(0)], [p, x], "strings_gather")
    ov.save_model(model, str(path))
    return {"words": words, "reals": reals, "width": width}


def _unpack_model(path: Path, rng: np.random.Generator) -> dict[str, object]:
    """Strings [?] unpacked into begins, ends and bytes (StringTensorUnpack)."""
    text = _name(rng, "text_")
    p = opset.parameter([-1], ov.Type.string, name=text)
    model = ov.Model(list(opset.string_tensor_unpack(p).outputs()), [p], "strings_unpack")
    ov.save_model(model, str(path))
    return {"text": text}


def _const_model(path: Path, rng: np.random.Generator) -> dict[str, object]:
    """Strings [?] concatenated with a string constant (written in the .bin)."""
    text = _name(rng, "text_")
    p = opset.parameter([-1], ov.Type.string, name=text)
    words = np.array([_name(rng, "w") for _ in range(int(rng.integers(1, 4)))] + ["ü", ""])
    c = opset.concat([p, opset.constant(ov.Tensor(words))], 0)
    ov.save_model(ov.Model([c.output(0)], [p], "strings_const"), str(path))
    return {"text": text}


MAKERS = {"gather": _gather_model, "unpack": _unpack_model, "const": _const_model}


@pytest.fixture(scope="module", params=sorted(MAKERS))
def string_model(request, tmp_path_factory) -> tuple[Path, dict[str, object]]:
    path = tmp_path_factory.mktemp(request.param) / f"{request.param}.xml"
    facts = MAKERS[request.param](path, np.random.default_rng(20240 + len(request.param)))
    return path, facts


def _clean(code: int, out: str, err: str) -> None:
    """Run to an end: no traceback, no internal error, no OpenVINO warning about string
    data; an error is one ``error:`` line with exit 2."""
    text = out + err
    assert "Traceback" not in text and "internal error" not in text, text
    assert "Data of string type" not in text, text
    if code == 2:
        assert [ln for ln in err.splitlines() if ln.startswith("error:")] == \
            err.strip().splitlines()[-1:], err


@pytest.mark.parametrize("argv", [["check"], ["infer"], ["validate"],
                                  ["validate", "--all-layers"],
                                  ["validate", "--whole-model"]],
                         ids=" ".join)
def test_every_reading_and_proving_command_runs_a_string_model(string_model, argv, capsys):
    path, _ = string_model
    code = main([*argv, str(path)])
    out, err = capsys.readouterr()
    _clean(code, out, err)
    assert code in (0, 1)


@pytest.mark.parametrize("layers", [[], ["--all-layers"]], ids=["outputs", "all-layers"])
def test_compare_of_a_string_model_with_itself_finds_every_output_equal(string_model, layers,
                                                                        capsys):
    path, _ = string_model
    code = main(["compare", str(path), str(path), "--json", *layers])
    out, err = capsys.readouterr()
    _clean(code, out, err)
    doc = json.loads(out)
    assert {o["status"] for o in doc["outputs"]} == {"ok"}, doc["outputs"]
    assert code == 0


def test_reshape_of_a_string_input_proves_its_rows_as_strings(string_model, tmp_path, capsys):
    path, facts = string_model
    if "words" in facts:
        shape = f"{facts['words']}[2,{facts['width']}],{facts['reals']}[2,{facts['width']}]"
    else:
        shape = f"{facts['text']}[3]"
    out_xml = tmp_path / "out.xml"
    code = main(["reshape", str(path), "--shape", shape, "-o", str(out_xml), "--json"])
    out, err = capsys.readouterr()
    _clean(code, out, err)
    proof = json.loads(out)["runtime_proof"]
    assert proof["ran"] and proof["differs"] is None, proof
    if "words" in facts:  # the gathered strings stack row by row: compared exactly
        assert code == 0 and out_xml.exists()
        assert {"bound": "exact"}.items() <= proof["compared"][0].items()
    else:  # a list of offsets into the whole batch, or strings appended after the rows:
        assert code in (0, 1) and proof["nothing_proven"]  # no output pairs with a row


def test_the_inputs_made_for_a_string_input_are_short_strings_never_empty():
    from ovgather.runtime.core import input_tensor

    zeros = input_tensor(np.zeros((2, 3), np.float32), ov.Type.string)
    assert zeros.get_element_type() == ov.Type.string
    assert zeros.str_data.tolist() == [["0"] * 3] * 2
    noise = np.random.default_rng(7).standard_normal(5).astype(np.float32)
    made = input_tensor(noise, ov.Type.string).str_data
    assert len(set(made.tolist())) == 5 and all(0 < len(s) <= 12 for s in made)
    given = np.array([["ab", "ü"]])
    assert input_tensor(given, ov.Type.string).str_data.tolist() == [["ab", "ü"]]
    assert input_tensor(np.array([b"x"]), ov.Type.string).str_data.tolist() == ["x"]
