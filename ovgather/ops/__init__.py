"""The ops ovgather knows: one file per op family, each a pure function of shapes and
attributes, and the specs that say which versions and opsets each rule serves.

The op files stand on ``core/``, which imports none of them: ``core/spec.py`` defines
:class:`~ovgather.ops.core.spec.OpSpec` (one op version: its opsets, shape rule, words,
NumPy reference, input maker and runtime builder) and ``specs_of``, the one way an op file
declares its ``SPECS``; ``core/registry.py`` lists the op files with the op types each
holds (``OP_MODULES``, so that a check imports only the files its model needs) and finds
the spec of a layer by its ``type`` and ``version`` text; ``core/opsets.py`` reads which
opsets hold which op versions (``opsets.json``, generated from the installed OpenVINO);
``core/dims.py`` holds the dim arithmetic several families share. The op files: the
gather family (``gather_nd`` with the ONNX views, ``gather_elements``, ``gather``), the
ops that carry shapes through a model (``elementwise``, ``reshape``, ``concat_split``,
``slicing``, ``reduce``, ``generate``), and one file for each other family of OpenVINO's
opset1 to opset16 (``convolution``, ``pooling``, ``attention``, ``state``, ``rnn``,
``nms``, ``fft``, …). Nothing here knows about XML, networkx or openvino.
"""

from __future__ import annotations

from typing import Any

from .core.registry import OP_MODULES, find, op_module, op_version

#: What this package re-exports, and from which file (imported on first use).
_EXPORTS = {
    "gather_shape": "gather", "infer_gather": "gather",
    "gather_elements_shape": "gather_elements", "infer_gather_elements": "gather_elements",
    "gather_nd_shape": "gather_nd", "infer_gather_nd": "gather_nd",
    "onnx_gather_nd_shape": "gather_nd",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(op_module(_EXPORTS[name]), name)
    if name in OP_MODULES:
        return op_module(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "gather_nd_shape",
    "onnx_gather_nd_shape",
    "gather_elements_shape",
    "gather_shape",
    "infer_gather_nd",
    "infer_gather_elements",
    "infer_gather",
    "find",
    "op_module",
    "op_version",
    "OP_MODULES",
]
