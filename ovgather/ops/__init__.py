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
…: ``OP_MODULES`` below lists them all, with the op types each holds, so that a check
imports only the files its model needs). Nothing here knows about XML, networkx or
openvino.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import Any

from .registry import find, op_version

#: The op files and the op types each one's ``SPECS`` holds, in the order the registry
#: reads them. The registry imports a file the first time a model needs one of its types
#: (a transformer IR needs a dozen of the 47 files): adding an op means adding its type
#: here; ``tests/ops/test_op_specs.py`` checks that this table and the files agree.
OP_MODULES: dict[str, tuple[str, ...]] = {
    "gather_nd": ("GatherND",),
    "gather_elements": ("GatherElements",),
    "gather": ("Gather",),
    "elementwise": ("Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceiling", "Cos", "Cosh",
                    "Elu", "Erf", "Exp", "Floor", "Gelu", "HSigmoid", "HSwish", "Log", "Mish",
                    "Round", "Selu", "Sigmoid", "Sin", "Sinh", "SoftPlus", "SoftSign", "Sqrt",
                    "Swish", "Tan", "Tanh", "Result", "Identity", "MVN", "NormalizeL2", "LRN",
                    "GRN", "PRelu", "CumSum", "ReverseSequence", "Erfinv", "ErfInv",
                    "ScatterUpdate", "ScatterNDUpdate", "ScatterElementsUpdate", "Roll",
                    "BatchNormInference", "Reverse", "Add", "Subtract", "Multiply", "Divide",
                    "Power", "Maximum", "Minimum", "SquaredDifference", "FloorMod", "Mod",
                    "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseLeftShift",
                    "BitwiseRightShift", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
                    "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalXor", "Abs", "Negative",
                    "Relu", "Sign", "Clamp", "LogicalNot", "BitwiseNot", "HardSigmoid", "Softmax",
                    "SoftMax", "LogSoftmax", "IsNaN", "IsInf", "IsFinite", "Convert",
                    "ConvertLike", "Select", "FakeQuantize", "ReLU"),
    "shape_ops": ("ShapeOf", "Reshape", "Squeeze", "Unsqueeze", "Concat", "Transpose",
                  "Broadcast", "Tile", "Split", "VariadicSplit", "Slice", "StridedSlice"),
    "reduce": ("ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceL1",
               "ReduceL2", "ReduceLogicalAnd", "ReduceLogicalOr", "MatMul"),
    "generate": ("NonZero", "Range", "TopK"),
    "convolution": ("Convolution", "GroupConvolution", "ConvolutionBackpropData",
                    "GroupConvolutionBackpropData"),
    "pooling": ("MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool"),
    "attention": ("ScaledDotProductAttention",),
    "state": ("ReadValue", "Assign"),
    "pad": ("Pad",),
    "resize": ("Interpolate",),
    "depth_space": ("DepthToSpace", "SpaceToDepth", "ShuffleChannels", "BatchToSpace",
                    "SpaceToBatch"),
    "normalization": ("GroupNormalization",),
    "inverse": ("Inverse",),
    "one_hot": ("OneHot",),
    "buckets": ("Bucketize", "SearchSorted"),
    "eye": ("Eye",),
    "einsum": ("Einsum",),
    "nms": ("NonMaxSuppression", "NMSRotated", "MulticlassNms", "MatrixNms"),
    "fft": ("DFT", "IDFT", "RDFT", "IRDFT"),
    "roi": ("ROIPooling", "PSROIPooling", "DeformablePSROIPooling", "ROIAlign", "ROIAlignRotated"),
    "embedding": ("EmbeddingBagOffsetsSum", "EmbeddingBagOffsets", "EmbeddingBagPackedSum",
                  "EmbeddingBagPacked", "EmbeddingSegmentsSum"),
    "decoding": ("CTCGreedyDecoder", "CTCGreedyDecoderSeqLen", "CTCLoss", "GatherTree"),
    "patches": ("ExtractImagePatches", "Col2Im"),
    "unique": ("Unique",),
    "random_draws": ("RandomUniform", "Multinomial"),
    "yolo": ("RegionYolo", "ReorgYolo"),
    "color": ("NV12toRGB", "NV12toBGR", "I420toRGB", "I420toBGR"),
    "grid_sample": ("GridSample",),
    "segment_max": ("SegmentMax",),
    "rnn": ("RNNCell", "GRUCell", "LSTMCell", "RNNSequence", "GRUSequence", "LSTMSequence"),
    "priors": ("PriorBox", "PriorBoxClustered"),
    "fake_convert": ("FakeConvert",),
    "proposal": ("Proposal", "GenerateProposals"),
    "detection": ("DetectionOutput",),
    "slice_scatter": ("SliceScatter",),
    "binary_convolution": ("BinaryConvolution",),
    "deformable_convolution": ("DeformableConvolution",),
    "stft": ("STFT", "ISTFT"),
    "sparse_fill": ("SparseFillEmptyRows",),
    "strings": ("StringTensorPack", "StringTensorUnpack"),
    "xor": ("Xor",),
    "detectron": ("ExperimentalDetectronTopKROIs", "ExperimentalDetectronDetectionOutput",
                  "ExperimentalDetectronGenerateProposalsSingleImage",
                  "ExperimentalDetectronPriorGridGenerator",
                  "ExperimentalDetectronROIFeatureExtractor"),
    "promote": ("ConvertPromoteTypes",),
    "subgraph": ("TensorIterator", "Loop", "If"),
}

#: What this package re-exports, and from which file (imported on first use).
_EXPORTS = {
    "gather_shape": "gather", "infer_gather": "gather",
    "gather_elements_shape": "gather_elements", "infer_gather_elements": "gather_elements",
    "gather_nd_shape": "gather_nd", "infer_gather_nd": "gather_nd",
    "onnx_gather_nd_shape": "gather_nd",
}


def op_module(name: str) -> ModuleType:
    """The op file ``name`` of :data:`OP_MODULES`, imported on first use."""
    if name not in OP_MODULES:
        raise KeyError(f"no op file {name!r}")
    return import_module(f"{__name__}.{name}")


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
