"""Op type names as OpenVINO's IR reader reads them: the serializer's spellings (``Const``,
``PReLU``, ``ReLU``, ``SoftMax``) in exactly that case, any other name ignoring case. The
reader itself is the oracle: a layer whose type it cannot find fails with "doesn't contain
the operation with type" (or "from unsupported opset"); any other failure means it found
the op."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import pytest
from op_graphs import assert_like_openvino
from ov_oracle import rng_for

from ovgather.errors import UnsupportedOpError
from ovgather.infer import check
from ovgather.ir import read_ir
from ovgather.ops.core import registry
from ovgather.ops.core.opsets import OPSETS
from ovgather.ops.core.spec import openvino_type

CORE = ov.Core()
#: How the reader says it found no op: no such type in the opset, or no such opset.
NOT_FOUND = ("doesn't contain the operation with type", "from unsupported opset")


def openvino_finds(type_text: str, version: str, n_inputs: int = 6) -> bool:
    """Whether OpenVINO's reader finds an op for ``type_text`` in ``version``: a layer of
    that type fed by ``n_inputs`` Parameters of any shape (an op given fewer inputs than
    it takes may crash the process) and given a variable (Assign-6 and ReadValue-6 crash
    without one), feeding a Result."""
    params = "".join(
        f'<layer id="{i}" name="p{i}" type="Parameter" version="opset1">'
        f'<data shape="..." element_type="f32"/><output><port id="0" precision="FP32"/>'
        f'</output></layer>' for i in range(n_inputs))
    edges = "".join(f'<edge from-layer="{i}" from-port="0" to-layer="{n_inputs}" to-port="{i}"/>'
                    for i in range(n_inputs))
    ports = "".join(f'<port id="{i}"/>' for i in range(n_inputs))
    op, result = n_inputs, n_inputs + 1
    xml = (f'<?xml version="1.0"?><net name="m" version="11"><layers>{params}'
           f'<layer id="{op}" name="op" type="{type_text}" version="{version}">'
           f'<data variable_id="v" variable_type="f32" variable_shape="..."/>'
           f'<input>{ports}</input><output><port id="{n_inputs}" precision="FP32"/></output>'
           f'</layer><layer id="{result}" name="r" type="Result" version="opset1">'
           f'<input><port id="0"/></input></layer></layers><edges>{edges}'
           f'<edge from-layer="{op}" from-port="{n_inputs}" to-layer="{result}" to-port="0"/>'
           f'</edges></net>')
    try:
        CORE.read_model(xml.encode(), ov.Tensor(np.zeros([0], np.uint8)))
    except Exception as err:  # noqa: BLE001 - any failure but "not found" found the op
        return not any(words in str(err) for words in NOT_FOUND)
    return True


def ovgather_finds(type_text: str, version: str) -> bool:
    """Whether ovgather reads ``type_text`` in ``version`` as an op: a spec, or (for the
    types the walk reads itself, Parameter and Constant, and opset17's) a name that
    OpenVINO's table holds in that opset."""
    try:
        if registry.find(type_text, version) is not None:
            return True
    except UnsupportedOpError:
        return False
    name, number = openvino_type(type_text), registry.opset_number(version)
    return (name is not None and number is not None
            and any(a <= number <= b for a, b, _ in OPSETS[name]))


def spellings(name: str, rng) -> list[str]:
    """The name, all lower and upper case, swapped case and one random mix."""
    mixed = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in name)
    return list(dict.fromkeys([name, name.lower(), name.upper(), name.swapcase(), mixed]))


def differences(pairs) -> tuple[int, list[tuple[str, str, bool]]]:
    """(number of pairs, [(type, version, OpenVINO finds it)] where ovgather differs)."""
    n, bad = 0, []
    for text, version in pairs:
        n += 1
        theirs = openvino_finds(text, version)
        if ovgather_finds(text, version) != theirs:
            bad.append((text, version, theirs))
    return n, bad


def every_spelling():
    """Each op type of OpenVINO's table in five casings, in its first and last opset and
    the opset before its first."""
    rng = rng_for("spellings")
    for name, rows in sorted(OPSETS.items()):
        first, last = rows[0][0], rows[-1][1]
        for text in spellings(name, rng):
            for opset in sorted({first, last, first - 1} - {0}):
                yield text, f"opset{opset}"


def test_every_op_type_in_any_case_is_found_or_refused_as_openvino_does():
    n, bad = differences(every_spelling())
    assert n > 1500
    assert not bad, bad


@pytest.mark.parametrize("text", ["Const", "const", "CONST", "cONST", "PReLU", "ReLU",
                                  "SoftMax", "relu", "SOFTMAX", "Constant", "constant",
                                  "MVN", "mvn", "ROIPooling", "RoiPooling", "ReorgYolo",
                                  "reorgyolo"])
def test_the_serializer_spellings_and_opset1_exceptions_are_read_as_openvino_reads_them(text):
    assert ovgather_finds(text, "opset1") == openvino_finds(text, "opset1")


EXPERIMENTAL = ["ExperimentalDetectronTopKROIs", "ExperimentalDetectronDetectionOutput",
                "ExperimentalDetectronGenerateProposalsSingleImage",
                "ExperimentalDetectronPriorGridGenerator",
                "ExperimentalDetectronROIFeatureExtractor", "GRUCell", "RNNCell", "Proposal",
                "proposal", "GRUCELL", "Gather", "LSTMCell"]


@pytest.mark.parametrize("version", ["experimental", "extension", "opset0", "opset", "Opset6"])
def test_versions_that_name_no_opset_are_read_as_openvino_reads_them(version):
    n, bad = differences((t, version) for t in EXPERIMENTAL)
    assert n == len(EXPERIMENTAL)
    assert not bad, bad


def test_a_case_of_const_that_openvino_refuses_is_refused():
    with pytest.raises(UnsupportedOpError, match="'Const' for Constant in that spelling only"):
        registry.find("const", "opset1")


def test_prelu_saved_by_openvino_is_checked(tmp_path):
    rng = np.random.default_rng(0)
    x = ov1.parameter([2, 3, 4], ov.Type.f32, name="x")
    slope = ov1.constant(rng.random(3, dtype=np.float32))
    statuses = assert_like_openvino(tmp_path, [ov1.prelu(x, slope)], [x])
    assert "PReLU" in (tmp_path / "m.xml").read_text()
    assert set(statuses.values()) == {"ok"}


def odd_ir(parameter: str, constant: str, reshape: str, prelu: str) -> str:
    """x -> Reshape(x, [3, 2]) -> PRelu(., slope), with the type names given."""
    def port(pid, dims, precision="FP32"):
        return (f'<port id="{pid}" precision="{precision}">'
                + "".join(f"<dim>{d}</dim>" for d in dims) + "</port>")

    return (
        '<?xml version="1.0"?><net name="m" version="11"><layers>'
        f'<layer id="0" name="x" type="{parameter}" version="opset1">'
        f'<data shape="2,3" element_type="f32"/><output>{port(0, [2, 3])}</output></layer>'
        f'<layer id="1" name="target" type="{constant}" version="opset1">'
        '<data element_type="i64" shape="2" offset="0" size="16"/>'
        f'<output>{port(0, [2], "I64")}</output></layer>'
        f'<layer id="2" name="reshape" type="{reshape}" version="opset1">'
        '<data special_zero="false"/>'
        f'<input>{port(0, [2, 3])}{port(1, [2])}</input><output>{port(2, [3, 2])}</output>'
        '</layer>'
        f'<layer id="3" name="slope" type="{constant}" version="opset1">'
        '<data element_type="f32" shape="1" offset="16" size="4"/>'
        f'<output>{port(0, [1])}</output></layer>'
        f'<layer id="4" name="prelu" type="{prelu}" version="opset1">'
        f'<input>{port(0, [3, 2])}{port(1, [1])}</input><output>{port(2, [3, 2])}</output>'
        '</layer><layer id="5" name="out" type="Result" version="opset1">'
        f'<input>{port(0, [3, 2])}</input></layer></layers><edges>'
        '<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>'
        '<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>'
        '<edge from-layer="2" from-port="2" to-layer="4" to-port="0"/>'
        '<edge from-layer="3" from-port="0" to-layer="4" to-port="1"/>'
        '<edge from-layer="4" from-port="2" to-layer="5" to-port="0"/></edges></net>')


WEIGHTS = np.array([3, 2], np.int64).tobytes() + np.array([0.5], np.float32).tobytes()


@pytest.mark.parametrize("names", [("parameter", "constant", "RESHAPE", "prelu"),
                                   ("PARAMETER", "Const", "reshape", "PReLU"),
                                   ("Parameter", "CONSTANT", "ReShApE", "PRELU"),
                                   ("Parameter", "Constant", "Reshape", "PRelu")])
def test_a_model_with_odd_type_casings_is_checked_as_openvino_reads_it(tmp_path, names):
    (tmp_path / "m.xml").write_text(odd_ir(*names))
    (tmp_path / "m.bin").write_bytes(WEIGHTS)
    model = CORE.read_model(str(tmp_path / "m.xml"))
    theirs = {op.get_friendly_name(): [str(op.get_output_partial_shape(0))]
              for op in model.get_ops() if op.get_type_name() != "Result"}
    report = check(read_ir(tmp_path / "m.xml"))
    assert {lr.name: lr.status for lr in report.layers} == dict.fromkeys(
        ["x", "target", "reshape", "slope", "prelu", "out"], "ok")
    assert {lr.name: lr.inferred for lr in report.layers if lr.name in theirs} == theirs
    model.reshape([3, 2])  # the one input, by its friendly name for ovgather
    reshaped = check(read_ir(tmp_path / "m.xml"), {"x": "3,2"})
    assert [lr.inferred for lr in reshaped.layers if lr.name == "x"] == [
        [str(model.input(0).get_partial_shape())]]


def test_a_model_with_a_const_openvino_refuses_is_refused(tmp_path):
    (tmp_path / "m.xml").write_text(odd_ir("Parameter", "const", "Reshape", "PRelu"))
    (tmp_path / "m.bin").write_bytes(WEIGHTS)
    with pytest.raises(RuntimeError, match="doesn't contain the operation with type: const"):
        CORE.read_model(str(tmp_path / "m.xml"))
    report = check(read_ir(tmp_path / "m.xml"))
    assert {lr.name: lr.status for lr in report.layers}["target"] == "unknown"
