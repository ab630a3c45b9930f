"""The ops ovgather knows: one file per op family, each a pure function of shapes and
attributes, and the specs that say which versions and opsets each rule serves.

``spec.py`` defines :class:`~ovgather.ops.spec.OpSpec` (one op version: its opsets, shape
rule, words, NumPy reference, input maker and runtime builder); ``registry.py`` finds
the spec of a layer by its ``type`` and ``version`` text; ``opsets.py`` reads which opsets
hold which op versions (``opsets.json``, generated from the installed OpenVINO). The op
files: the gather family (``gather_nd`` with the ONNX views, ``gather_elements``,
``gather``), the ops that carry shapes through a model (``elementwise``, ``shape_ops``,
``reduce``, ``generate``), and one file for each other family of OpenVINO's opset1 to
opset16 (``convolution``, ``pooling``, ``attention``, ``state``, ``rnn``, ``nms``, ``fft``,
…: ``OP_MODULES`` below lists them all). Nothing here knows about XML, networkx or
openvino.
"""

from __future__ import annotations

from . import (
    attention,
    binary_convolution,
    buckets,
    color,
    convolution,
    decoding,
    deformable_convolution,
    depth_space,
    detection,
    detectron,
    einsum,
    elementwise,
    embedding,
    eye,
    fake_convert,
    fft,
    gather,
    gather_elements,
    gather_nd,
    generate,
    grid_sample,
    inverse,
    nms,
    normalization,
    one_hot,
    pad,
    patches,
    pooling,
    priors,
    promote,
    proposal,
    random_draws,
    reduce,
    resize,
    rnn,
    roi,
    segment_max,
    shape_ops,
    slice_scatter,
    sparse_fill,
    state,
    stft,
    strings,
    subgraph,
    unique,
    xor,
    yolo,
)
from .gather import gather_shape, infer_gather
from .gather_elements import gather_elements_shape, infer_gather_elements
from .gather_nd import gather_nd_shape, infer_gather_nd, onnx_gather_nd_shape
from .registry import find, op_version

#: The op files, each with a ``SPECS`` list (registry.py reads them in this order).
OP_MODULES = (gather_nd, gather_elements, gather, elementwise, shape_ops, reduce, generate,
              convolution, pooling, attention, state, pad,
              resize, depth_space, normalization, inverse,
              one_hot, buckets, eye,
              einsum, nms, fft, roi, embedding, decoding,
              patches, unique, random_draws, yolo, color, grid_sample, segment_max, rnn,
              priors, fake_convert, proposal, detection, slice_scatter,
              binary_convolution, deformable_convolution, stft,
              sparse_fill, strings, xor, detectron, promote, subgraph)

__all__ = [
    "gather_nd_shape",
    "onnx_gather_nd_shape",
    "gather_elements_shape",
    "gather_shape",
    "infer_gather_nd",
    "infer_gather_elements",
    "infer_gather",
    "find",
    "op_version",
    "OP_MODULES",
]
