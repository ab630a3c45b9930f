"""Find the spec of a layer's op by its ``type`` and ``version`` text.

An IR names an opset (``version="opset8"``), not an op version: the registry turns the
pair into the :class:`~ovgather.ops.core.spec.OpSpec` that the opset holds. A GatherND
written as ``opset5`` folds its batch dims, the same layer written as ``opset8`` keeps
them. An opset that does not hold the op is an error, as it is for OpenVINO's reader.
Type names are read as that reader reads them (``spec.openvino_type``): the serializer's
spellings ``PReLU``, ``ReLU``, ``SoftMax``, ``Const``, and any other name ignoring case.

>>> find("GatherND", "opset7").name, find("GATHERND", "opset8").name
('GatherND-5', 'GatherND-8')
>>> find("PReLU", "opset1").name
'PRelu-1'
>>> find("Gather", "opset7").version, find("GatherElements", "opset16").version
(7, 6)
>>> find("MyCustomOp", "opset1") is None
True
>>> find("GatherND", "opset4")
Traceback (most recent call last):
...
ovgather.errors.UnsupportedOpError: opset4 has no GatherND (it is in opset5 to opset16)
"""

from __future__ import annotations

import sys
from functools import cache
from types import ModuleType

from ...errors import UnsupportedOpError
from .spec import ALIASES, OpSpec, openvino_type

__all__ = ["OP_MODULES", "op_module", "find", "spec", "specs", "known_types", "family",
           "opset_number", "op_version", "FROM_OPSET2", "FROM_OPSET6"]

#: The package that holds the op files (``ovgather.ops``).
_OPS = __name__.rsplit(".", 2)[0]

#: The op files and the op types each one's ``SPECS`` holds, in the order the registry
#: reads them. The registry imports a file the first time a model needs one of its types
#: (a transformer IR needs a dozen of the 49 files): adding an op means adding its type
#: here; ``tests/ops/test_op_specs.py`` checks that this table and the files agree.
OP_MODULES: dict[str, tuple[str, ...]] = {
    "gather_nd": ("GatherND",),
    "gather_elements": ("GatherElements",),
    "gather": ("Gather",),
    "elementwise": ("Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceiling", "Cos", "Cosh",
                    "Elu", "Erf", "Exp", "Floor", "Gelu", "HSigmoid", "HSwish", "Log", "Mish",
                    "Round", "Selu", "Sigmoid", "Sin", "Sinh", "SoftPlus", "SoftSign", "Sqrt",
                    "Swish", "Tan", "Tanh", "Result", "Identity", "MVN", "NormalizeL2", "LRN",
                    "GRN", "PRelu", "CumSum", "ReverseSequence", "ErfInv",
                    "ScatterUpdate", "ScatterNDUpdate", "ScatterElementsUpdate", "Roll",
                    "BatchNormInference", "Reverse", "Add", "Subtract", "Multiply", "Divide",
                    "Power", "Maximum", "Minimum", "SquaredDifference", "FloorMod", "Mod",
                    "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseLeftShift",
                    "BitwiseRightShift", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
                    "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalXor", "Abs", "Negative",
                    "Relu", "Sign", "Clamp", "LogicalNot", "BitwiseNot", "HardSigmoid", "Softmax",
                    "LogSoftmax", "IsNaN", "IsInf", "IsFinite", "Convert",
                    "ConvertLike", "Select", "FakeQuantize"),
    "reshape": ("ShapeOf", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Broadcast", "Tile"),
    "concat_split": ("Concat", "Split", "VariadicSplit"),
    "slicing": ("Slice", "StridedSlice"),
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


#: Types OpenVINO's reader takes from opset6 when the version is ``experimental`` or
#: ``extension`` (spelled exactly so: the check comes before the caseless lookup).
FROM_OPSET6 = frozenset((
    "ExperimentalDetectronDetectionOutput", "ExperimentalDetectronGenerateProposalsSingleImage",
    "ExperimentalDetectronPriorGridGenerator", "ExperimentalDetectronROIFeatureExtractor",
    "ExperimentalDetectronTopKROIs", "GRUCell", "RNNCell", "Proposal"))

#: Types opset1 lacks that OpenVINO's reader takes from opset2 for an ``opset1`` layer,
#: spelled exactly so; another case of them is looked up in opset1 and not found.
FROM_OPSET2 = frozenset(("MVN", "ROIPooling", "ReorgYolo"))


def op_module(name: str) -> ModuleType:
    """The op file ``name`` of :data:`OP_MODULES`, imported on first use (through the
    ``import`` statement's machinery, not ``importlib.import_module``, so that
    ``python -X importtime`` lists it: tests/project/test_imports.py reads that list)."""
    if name not in OP_MODULES:
        raise KeyError(f"no op file {name!r}")
    full = f"{_OPS}.{name}"
    # always through ``__import__``: it waits for an import another thread has begun,
    # where ``sys.modules`` would hand out the module half made (no ``SPECS`` yet)
    __import__(full)
    return sys.modules[full]


@cache
def _file_of() -> dict[str, str]:
    """Op type → the op file that holds its specs (from the package's index)."""
    return {t: name for name, types in OP_MODULES.items() for t in types}


@cache
def _versions(op_type: str) -> tuple[OpSpec, ...]:
    """The specs of ``op_type`` (any spelling OpenVINO's reader takes), in opset order; its
    op file is imported on first use."""
    op_type = openvino_type(op_type) or op_type
    name = _file_of().get(op_type)
    if name is None:
        return ()
    found = [s for s in op_module(name).SPECS if s.type == op_type]
    return tuple(sorted(found, key=lambda s: s.since))


def opset_number(opset: str | None) -> int | None:
    """``"opset8"`` → 8; None for anything that is not ``opsetN``."""
    if not isinstance(opset, str) or not opset.startswith("opset"):
        return None
    digits = opset[5:]
    return int(digits) if digits.isascii() and digits.isdigit() and len(digits) < 10 else None


#: (type, version text) -> spec, None (unknown type) or the error: the walk's hot path.
_FOUND: dict[tuple[str, str | None], OpSpec | UnsupportedOpError | None] = {}


def find(op_type: str, opset: str | None) -> OpSpec | None:
    """The spec of ``op_type`` in the opset named ``opset`` (IR ``version`` text).

    None for op types ovgather does not know; UnsupportedOpError when the op is known
    but ``opset`` does not hold it (or is not an ``opsetN`` name).
    """
    key = (op_type, opset)
    found = _FOUND.get(key, _FOUND)
    if found is _FOUND:
        found = _FOUND[key] = _lookup(op_type, opset)
    if isinstance(found, UnsupportedOpError):
        raise UnsupportedOpError(found.message)
    return found


def _lookup(op_type: str, opset: str | None) -> OpSpec | UnsupportedOpError | None:
    versions = _versions(op_type)
    if not versions:
        alias = next((a for a in ALIASES if a.lower() == op_type.lower()), None)
        if alias is not None and openvino_type(op_type) is None:
            return UnsupportedOpError(
                f"{opset} has no op {op_type!r}: OpenVINO's reader takes {alias!r} for "
                f"{ALIASES[alias]} in that spelling only")
        return None
    first, last = versions[0].since, versions[-1].until
    number = opset_number(opset)
    if number is None and opset in ("experimental", "extension") and op_type in FROM_OPSET6:
        number = 6
    if number == 1 and versions[0].type in FROM_OPSET2 and op_type not in FROM_OPSET2:
        return UnsupportedOpError(
            f"opset1 has no {op_type}: OpenVINO's reader takes {versions[0].type} from opset2 "
            f"for an opset1 layer only when it is spelled so")
    if number is None:
        return UnsupportedOpError(
            f"the version of a {op_type} layer must name an opset (opset{first} to "
            f"opset{last}), but got {opset!r}")
    for s in versions:
        if s.since <= number <= s.until:
            return s
    return UnsupportedOpError(f"{opset} has no {op_type} (it is in opset{first} to opset{last})")


def op_version(op_type: str, opset: str | None) -> int | None:
    """The op version ``opset`` selects for ``op_type`` (None: an op ovgather does not know)."""
    found = find(op_type, opset)
    return None if found is None else found.version


def spec(op_type: str, version: int) -> OpSpec:
    """The spec of ``op_type``-``version`` (``spec("GatherND", 5)``)."""
    for s in _versions(op_type):
        if s.version == version:
            return s
    known = ", ".join(str(s.version) for s in _versions(op_type)) or "none"
    raise UnsupportedOpError(f"{op_type} has versions {known}, not {version}")


def specs(op_type: str) -> tuple[OpSpec, ...]:
    """Every version of ``op_type`` ovgather knows, oldest first."""
    return _versions(op_type)


def known_types() -> list[str]:
    """The op types whose output shapes ovgather infers."""
    return sorted(_file_of())


@cache
def family(name: str) -> tuple[str, ...]:
    """The op types of a family (``"gather"``), in the order their files list them."""
    return tuple(dict.fromkeys(s.type for t in _file_of() for s in _versions(t)
                               if s.family == name))
