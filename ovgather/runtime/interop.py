"""Moving models between ovgather's graph, OpenVINO and ONNX, all in memory.

Both directions go through the same IR reader and writer as files do (``ir.parse_ir``
and ``ir.write_ir``), so a graph made from an ``openvino.Model`` has exactly the schema
of one read from disk, and nothing is translated twice by two different codes:

- :func:`from_openvino` serializes the model with ``openvino.save_model`` into a
  temporary folder and parses the bytes; the weights are held in memory, the folder is
  gone when the function returns.
- :func:`to_openvino` writes the graph with ``write_ir`` and hands the XML text and the
  weights to ``openvino.Core().read_model`` (OpenVINO re-infers every shape, as it does
  for a file).
- :func:`load_model` is the one entry for the command line: an ``.xml`` is read as an
  IR, an ``.onnx`` is converted by ``openvino.convert_model`` first, so ``check`` shows
  what OpenVINO will make of an ONNX model (every ONNX GatherND becomes GatherND-8).

openvino is imported inside the functions, so ``import ovgather`` stays light.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx

from ..errors import IRError, OvgatherError, RuntimeBridgeError

if TYPE_CHECKING:  # pragma: no cover
    import openvino as ov

__all__ = ["from_openvino", "to_openvino", "load_model", "ONNX_SUFFIXES"]

#: File suffixes that load_model converts with openvino.convert_model.
ONNX_SUFFIXES = (".onnx",)


def from_openvino(model: ov.Model) -> nx.MultiDiGraph:
    """The ovgather graph of an in-memory ``openvino.Model``.

    >>> import openvino as ov, numpy as np
    >>> from openvino import opset8
    >>> d = opset8.parameter([2, 3, 4], np.float32, name="data")
    >>> i = opset8.constant(np.array([[1], [0]], dtype=np.int64))
    >>> G = from_openvino(ov.Model([opset8.gather_nd(d, i, 1)], [d], "m"))
    >>> sorted(t for _, t in G.nodes(data="type"))
    ['Const', 'GatherND', 'Parameter', 'Result']
    """
    import openvino as ov

    from ..ir import parse_ir

    with tempfile.TemporaryDirectory(prefix="ovgather-") as tmp:
        xml = Path(tmp) / "model.xml"
        try:
            ov.save_model(model, str(xml), compress_to_fp16=False)
        except Exception as err:  # openvino raises its own untyped errors
            raise RuntimeBridgeError(f"openvino could not serialize the model: {err}") from err
        xml_bytes = xml.read_bytes()
        bin_path = xml.with_suffix(".bin")
        bin_bytes = bin_path.read_bytes() if bin_path.exists() else None
    return parse_ir(xml_bytes, bin_bytes)


def to_openvino(G: nx.MultiDiGraph) -> ov.Model:
    """The ``openvino.Model`` that OpenVINO reads from the IR that ``write_ir(G)`` writes.

    OpenVINO checks the model as it does any IR file: a graph that breaks an op's rule
    gives a RuntimeBridgeError with OpenVINO's own message.
    """
    import numpy as np
    import openvino as ov

    xml_bytes, bin_bytes = _ir_bytes(G)
    weights = ov.Tensor(np.frombuffer(bin_bytes, dtype=np.uint8).copy()) \
        if bin_bytes else ov.Tensor(np.zeros(0, dtype=np.uint8))
    try:
        return ov.Core().read_model(model=xml_bytes.decode("utf-8"), weights=weights)
    except Exception as err:
        raise RuntimeBridgeError(f"openvino could not read the model ovgather wrote: {err}",
                                 file=G.graph.get("xml_path")) from err


def _ir_bytes(G: nx.MultiDiGraph) -> tuple[bytes, bytes]:
    """The XML and .bin that write_ir writes for ``G``, without leaving files behind."""
    from ..ir import write_ir

    with tempfile.TemporaryDirectory(prefix="ovgather-") as tmp:
        xml = Path(tmp) / "model.xml"
        write_ir(G, str(xml))
        bin_path = xml.with_suffix(".bin")
        return xml.read_bytes(), bin_path.read_bytes() if bin_path.exists() else b""


def load_model(path: str | os.PathLike[str]) -> nx.MultiDiGraph:
    """Read a model for the command line: an IR ``.xml`` as it is, an ``.onnx`` model
    converted by ``openvino.convert_model`` in memory.

    For an ONNX model, ``G.graph["source_path"]`` names the .onnx file and
    ``["source_format"]`` is ``"onnx"``; ``["xml_path"]`` stays None (there is no IR
    file: code that needs one writes the graph out), and layers and edges have no XML
    ``line`` (the converted XML was never a file the user could open).
    """
    path = Path(path)
    if path.suffix.lower() not in ONNX_SUFFIXES:
        from ..ir import read_ir

        return read_ir(str(path))
    if not path.is_file():
        raise IRError("the model file does not exist", file=str(path))
    G = from_openvino(_convert_onnx(path))
    G.graph.update(source_path=str(path), source_format="onnx")
    for _, attrs in G.nodes(data=True):
        attrs["line"] = None
    for _, _, attrs in G.edges(data=True):
        attrs["line"] = None
    return G


def _convert_onnx(path: Path) -> Any:
    try:
        import openvino as ov

        return ov.convert_model(str(path))
    except OvgatherError:
        raise
    except Exception as err:  # the ONNX frontend raises OpConversionFailure, GeneralFailure…
        raise IRError(f"openvino.convert_model could not convert this ONNX model: "
                      f"{conversion_error(err)}", file=str(path)) from err


def conversion_error(err: BaseException) -> str:
    """What OpenVINO's frontend said, whole, on one line: every line of its message but
    the ones that only locate its own source (``Check 'false' failed at src/…:151:``,
    ``Exception from src/…``), which say nothing of the model.

    >>> print(conversion_error(RuntimeError(
    ...     "Check 'false' failed at src/a.cpp:151:\\nModel wasn't fully converted.\\n"
    ...     "-- No conversion rule found for operations: FooBarOp-13\\n")))
    Model wasn't fully converted. -- No conversion rule found for operations: FooBarOp-13
    """
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    said = [line for line in lines if not _SOURCE_LINE.match(line)]
    return " ".join(said or lines) or type(err).__name__


#: A line of an OpenVINO error that only says where in OpenVINO's own source it was raised.
_SOURCE_LINE = re.compile(r"(?:Exception from|Check '.*' failed at) src/\S+:\d+:?$")
