"""What one layer computes: multiply-accumulates (MACs) and floating-point operations
(FLOPs) from its input and output shapes, one formula per op type ovgather knows.

A formula takes a :class:`Layer` (the op type, its ``<data>`` attributes, the dims of its
inputs and outputs) and returns ``(macs, flops)``. Dims are Python ints, or symbolic
:class:`~ovgather.ops.core.symbolic.Expr` s (``stats --symbols``): the formulas use only
``+``, ``*`` and ``//`` of dims, so the same formula gives a number or an expression in
the user's dim names. A dim nothing knows (``?`` without ``--shape`` or ``--symbols``) is
None, and the layer's cost is then *dynamic*: unknown, never zero.

The conventions (docs/cli/stats.md lists every op type's formula, ``formula_of`` gives it):

- data movement (reshape, transpose, gather, concat, slice, pad, convert, …): 0 FLOPs,
  with the bytes it writes reported as moved;
- elementwise: one FLOP per output element (``Add``, ``Relu``, ``Select``, ``Gelu``, …);
- ``MatMul``: MACs = batch·M·N·K (the output's elements times the inner dim), FLOPs = 2·MACs;
- ``Convolution``/``GroupConvolution``: MACs = out_elems·(Cin/groups)·prod(kernel),
  FLOPs = 2·MACs; the backprop (transposed) forms count input elements instead;
- pooling: out_elems·prod(kernel) (adaptive pooling: the input's elements);
- reductions: one FLOP per input element; normalisations and softmax a fixed number per
  element (``PER_ELEMENT``);
- ``ScaledDotProductAttention``: its two matmuls, Q·Kᵀ and the weights times V;
- recurrent cells and sequences: their gate matmuls; ``Einsum``: a matmul over the summed
  indices two operands share, after reducing the indices one operand holds alone; the
  rest (detection, NMS, FFT, …) a documented proxy, see ``FORMULAS``.

``Parameter``, ``Const`` and ``Result`` cost nothing. ``TensorIterator``, ``Loop`` and
``If`` are counted from their bodies (``report.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ops.core import registry

__all__ = ["Layer", "FORMULAS", "DATA_MOVEMENT", "PER_ELEMENT", "BODIES", "formula_of",
           "layer_cost", "Uncountable", "elements"]

Dim = Any  # int, an Expr, or None (not known)


class Uncountable(Exception):
    """A layer whose cost cannot be written with the dims given (symbolic FFT sizes)."""


class Layer:
    """What a formula reads: ``op`` type, ``data`` attributes, the dims of each input and
    output (a tuple per port, None for a dynamic rank)."""

    __slots__ = ("op", "data", "ins", "outs")

    def __init__(self, op: str, data: Any, ins: Sequence[tuple | None],
                 outs: Sequence[tuple | None]) -> None:
        self.op, self.data, self.ins, self.outs = op, data or {}, list(ins), list(outs)

    def attr(self, key: str, default: str = "") -> str:
        value = self.data.get(key)
        return default if value is None else str(value)

    def ints(self, key: str) -> list[int]:
        text = self.attr(key).strip()
        return [int(x) for x in text.split(",") if x.strip()] if text else []

    def shape(self, i: int, outputs: bool = False) -> tuple:
        ports = self.outs if outputs else self.ins
        shape = ports[i] if i < len(ports) else None
        if shape is None:
            raise TypeError("a dynamic rank")  # the layer's cost is dynamic
        return shape


def elements(shape: tuple | None) -> Dim:
    """The product of ``shape``'s dims (1 for a scalar); TypeError for an unknown dim."""
    if shape is None:
        raise TypeError("a dynamic rank")
    total: Dim = 1
    for d in shape:
        if d is None:
            raise TypeError("a dynamic dim")
        total = d * total
    return total


def _out(layer: Layer) -> Dim:
    """Every output port's elements together."""
    total: Dim = 0
    for shape in layer.outs:
        total = elements(shape) + total
    return total


def _in0(layer: Layer) -> Dim:
    return elements(layer.shape(0))


# -- the families --------------------------------------------------------------------
def _zero(layer: Layer) -> tuple[Dim, Dim]:
    return 0, 0


def _per_output(factor: int) -> Callable[[Layer], tuple[Dim, Dim]]:
    def cost(layer: Layer) -> tuple[Dim, Dim]:
        return 0, _out(layer) * factor
    return cost


def _per_input(factor: int) -> Callable[[Layer], tuple[Dim, Dim]]:
    def cost(layer: Layer) -> tuple[Dim, Dim]:
        return 0, _in0(layer) * factor
    return cost


def _matmul(layer: Layer) -> tuple[Dim, Dim]:
    a = layer.shape(0)
    transposed = layer.attr("transpose_a").lower() == "true"
    k = a[0] if len(a) == 1 else (a[-2] if transposed else a[-1])
    out = elements(layer.shape(0, outputs=True))
    macs = out * k
    return macs, 2 * macs


def _product(dims: Sequence[Dim]) -> Dim:
    return elements(tuple(dims))


def _convolution(layer: Layer) -> tuple[Dim, Dim]:
    """Convolution: weights [Cout, Cin, k…]; GroupConvolution: [G, Cout/G, Cin/G, k…];
    BinaryConvolution and DeformableConvolution (weights input 1 or 2) as Convolution."""
    w = layer.shape(2 if layer.op == "DeformableConvolution" else 1)
    grouped = layer.op == "GroupConvolution"
    per_output = w[2] if grouped else w[1]
    kernel = w[3:] if grouped else w[2:]
    if layer.op == "DeformableConvolution":  # weights [Cout, Cin/group, k…]
        per_output, kernel = w[1], w[2:]
    macs = elements(layer.shape(0, outputs=True)) * per_output * _product(kernel)
    return macs, 2 * macs


def _transposed_convolution(layer: Layer) -> tuple[Dim, Dim]:
    """ConvolutionBackpropData: weights [Cin, Cout, k…], GroupConvolutionBackpropData
    [G, Cin/G, Cout/G, k…]: every input element meets Cout/G·prod(k) weights."""
    w = layer.shape(1)
    grouped = layer.op == "GroupConvolutionBackpropData"
    macs = _in0(layer) * (w[2] if grouped else w[1]) * _product(w[3:] if grouped else w[2:])
    return macs, 2 * macs


def _pool(layer: Layer) -> tuple[Dim, Dim]:
    kernel = layer.ints("kernel")
    total = 1
    for k in kernel:
        total *= k
    return 0, elements(layer.shape(0, outputs=True)) * total


def _attention(layer: Layer) -> tuple[Dim, Dim]:
    """Q [..., L, E], K [..., S, E], V [..., S, Ev] -> [..., L, Ev]: Q·Kᵀ is batch·L·S·E
    MACs, the weights times V batch·L·S·Ev."""
    q, k, v = layer.shape(0), layer.shape(1), layer.shape(2)
    out = layer.shape(0, outputs=True)
    rows = _product(out[:-1])  # batch·L
    macs = rows * k[-2] * q[-1] + rows * k[-2] * v[-1]
    return macs, 2 * macs


_GATES = {"RNNCell": 1, "RNNSequence": 1, "GRUCell": 3, "GRUSequence": 3,
          "LSTMCell": 4, "LSTMSequence": 4}


def _recurrent(layer: Layer) -> tuple[Dim, Dim]:
    """Cells: X [B, I], H [B, Hs] -> B·gates·Hs·(I+Hs) MACs; sequences: X [B, T, I] and
    every direction, times T·directions; plus one FLOP per gate element (activations)."""
    x, h = layer.shape(0), layer.shape(1)
    gates = _GATES[layer.op]
    if layer.op.endswith("Cell"):
        hidden, steps = h[-1], 1
    else:
        hidden, steps = h[-1], x[1] * h[1]  # H [B, dirs, Hs]
    macs = x[0] * steps * gates * hidden * (x[-1] + hidden)
    return macs, 2 * macs + x[0] * steps * gates * hidden


def _einsum(layer: Layer) -> tuple[Dim, Dim]:
    """As OpenVINO (and PyTorch) compute it: an index summed but held by one operand
    alone is reduced in that operand first (one FLOP per element of it), then the
    operands are multiplied: MACs = the output's elements times the size of every
    summed index two operands share (a matmul's K). With none shared it is a broadcast
    product, one FLOP per output element; one operand alone is its reductions."""
    equation = layer.attr("equation").replace(" ", "")
    left, _, right = equation.partition("->")
    terms = left.split(",")
    sizes: dict[str, Dim] = {}
    holders: dict[str, int] = {}
    reduced: Dim = 0
    for term, i in zip(terms, range(len(layer.ins)), strict=False):
        shape = layer.shape(i)
        head, dots, tail = term.partition("...")
        if dots:
            letters = list(head) + ["."] * (len(shape) - len(head) - len(tail)) + list(tail)
        else:
            letters = list(term)
        for letter, d in zip(letters, shape, strict=False):
            if letter != "." and letter not in sizes:
                sizes[letter] = d
        for letter in set(letters) - {"."}:
            holders[letter] = holders.get(letter, 0) + 1
        if len(terms) < 2 or any(x not in right and x != "." and
                                 sum(x in t for t in terms) == 1 for x in letters):
            reduced = elements(shape) + reduced
    out = elements(layer.shape(0, outputs=True))
    if len(terms) < 2:
        return 0, reduced
    shared = [d for letter, d in sizes.items() if letter not in right and holders[letter] > 1]
    if not shared:
        return 0, out + reduced
    macs = out * _product(shared)
    return macs, 2 * macs + reduced


def _embedding_sum(layer: Layer) -> tuple[Dim, Dim]:
    """The embedding rows it sums: the indices' elements times the row width."""
    table = layer.shape(0)
    return 0, elements(layer.shape(1)) * _product(table[1:])


def _interpolate(layer: Layer) -> tuple[Dim, Dim]:
    """Per output element: nearest 0 (data movement), linear 4 (a 2×2 neighbourhood),
    cubic 16 (4×4)."""
    mode = layer.attr("mode").lower()
    taps = 0 if mode == "nearest" else (16 if "cubic" in mode else 4)
    return 0, elements(layer.shape(0, outputs=True)) * taps


def _inverse(layer: Layer) -> tuple[Dim, Dim]:
    """n³ per [n, n] matrix: the input's elements times n."""
    shape = layer.shape(0)
    return 0, _in0(layer) * shape[-1]


def _nms(layer: Layer) -> tuple[Dim, Dim]:
    """The worst case: an IoU for every pair of boxes of each image and class, scores
    [B, C, N]."""
    scores = layer.shape(1)
    n = scores[-1]
    return 0, _product(scores[:-1]) * n * n


def _fft(layer: Layer) -> tuple[Dim, Dim]:
    """5·N·log2(N) per transform of N points (N the output's elements); known sizes only."""
    n = _out(layer)
    if not isinstance(n, int):
        raise Uncountable("an FFT's cost needs log2 of its size, which has no expression")
    return 0, 5 * n * max(1, (n - 1).bit_length())


def _matrix_op(layer: Layer) -> tuple[Dim, Dim]:
    """GRN, NormalizeL2 and the like are counted in ``PER_ELEMENT``; this is LRN: size
    neighbours per element."""
    size = layer.ints("size") or [5]
    return 0, elements(layer.shape(0, outputs=True)) * (size[0] + 2)


def _quantize(layer: Layer) -> tuple[Dim, Dim]:
    """FakeQuantize: clamp, scale, round and scale back, 4 per output element."""
    return 0, elements(layer.shape(0, outputs=True)) * 4


# -- the table -------------------------------------------------------------------------
#: zero FLOPs: they move (or make) data; the bytes they write are reported as moved
DATA_MOVEMENT = frozenset((
    "Parameter", "Constant", "Result", "Identity", "ShapeOf", "Reshape", "Squeeze",
    "Unsqueeze", "Transpose", "Broadcast", "Tile", "Concat", "Split", "VariadicSplit",
    "Slice", "StridedSlice", "GatherTree",
    "ScatterUpdate", "ScatterNDUpdate", "ScatterElementsUpdate", "SliceScatter", "Roll",
    "Reverse", "ReverseSequence", "Pad", "DepthToSpace", "SpaceToDepth", "ShuffleChannels",
    "BatchToSpace", "SpaceToBatch", "Convert", "ConvertLike", "ConvertPromoteTypes",
    "ReadValue", "Assign", "Eye", "Range", "OneHot", "NonZero", "ExtractImagePatches",
    "Col2Im", "ReorgYolo", "StringTensorPack", "StringTensorUnpack", "SparseFillEmptyRows",
    "PriorBox", "PriorBoxClustered", "ExperimentalDetectronPriorGridGenerator",
    *registry.family("gather"),  # the gather family: the op specs say which types
))

#: FLOPs per element of the normalisations, softmax and friends (of the output)
PER_ELEMENT = {
    "Softmax": 5, "LogSoftmax": 6,            # max, subtract, exp, sum, divide (+log)
    "MVN": 4, "GroupNormalization": 5,        # mean, variance, subtract, divide (+affine)
    "BatchNormInference": 2,                  # scale and shift
    "NormalizeL2": 3, "GRN": 3,               # square, sum, divide
    "CumSum": 1, "Gelu": 1, "Mish": 1, "HSwish": 1,
}

#: one FLOP per input element: reductions, searches and the data-dependent ops whose
#: work grows with what they read (a proxy: their real cost depends on the data)
PER_INPUT = frozenset((
    "ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceL1",
    "ReduceL2", "ReduceLogicalAnd", "ReduceLogicalOr", "TopK", "Unique", "SegmentMax",
    "CTCGreedyDecoder", "CTCGreedyDecoderSeqLen", "CTCLoss", "Multinomial", "RegionYolo",
    "Proposal", "GenerateProposals", "DetectionOutput", "ExperimentalDetectronDetectionOutput",
    "ExperimentalDetectronGenerateProposalsSingleImage", "ExperimentalDetectronTopKROIs",
    "MatrixNms", "MulticlassNms",
))

#: one FLOP per output element, beyond the plain elementwise ops: samplers (a bilinear
#: sample is 4), colour conversions, random draws, searches
_PER_OUTPUT_4 = frozenset(("ROIPooling", "PSROIPooling", "DeformablePSROIPooling",
                           "ROIAlign", "ROIAlignRotated", "GridSample",
                           "ExperimentalDetectronROIFeatureExtractor"))
_PER_OUTPUT_1 = frozenset(("NV12toRGB", "NV12toBGR", "I420toRGB", "I420toBGR",
                           "RandomUniform", "Bucketize", "SearchSorted", "FakeConvert"))

#: counted from their bodies (report.py)
BODIES = frozenset(("TensorIterator", "Loop", "If"))

FORMULAS: dict[str, Callable[[Layer], tuple[Dim, Dim]]] = {
    "MatMul": _matmul, "Convolution": _convolution, "GroupConvolution": _convolution,
    "BinaryConvolution": _convolution, "DeformableConvolution": _convolution,
    "ConvolutionBackpropData": _transposed_convolution,
    "GroupConvolutionBackpropData": _transposed_convolution,
    "MaxPool": _pool, "AvgPool": _pool,
    "AdaptiveAvgPool": _per_input(1), "AdaptiveMaxPool": _per_input(1),
    "ScaledDotProductAttention": _attention, "Einsum": _einsum,
    "EmbeddingBagOffsetsSum": _embedding_sum, "EmbeddingBagOffsets": _embedding_sum,
    "EmbeddingBagPackedSum": _embedding_sum, "EmbeddingBagPacked": _embedding_sum,
    "EmbeddingSegmentsSum": _embedding_sum, "Interpolate": _interpolate,
    "Inverse": _inverse, "NonMaxSuppression": _nms, "NMSRotated": _nms,
    "DFT": _fft, "IDFT": _fft, "RDFT": _fft, "IRDFT": _fft, "STFT": _fft, "ISTFT": _fft,
    "LRN": _matrix_op, "FakeQuantize": _quantize,
    **dict.fromkeys(_GATES, _recurrent),
    **dict.fromkeys(DATA_MOVEMENT, _zero),
    **{op: _per_output(k) for op, k in PER_ELEMENT.items()},
    **dict.fromkeys(PER_INPUT, _per_input(1)),
    **dict.fromkeys(_PER_OUTPUT_4, _per_output(4)),
    **dict.fromkeys(_PER_OUTPUT_1, _per_output(1)),
}

#: the words ``formula_of`` gives each family
_WORDS = {
    _matmul: "2·M·N·K·batch (MACs: output elements × K)",
    _convolution: "2·out_elems·(Cin/groups)·prod(kernel)",
    _transposed_convolution: "2·in_elems·(Cout/groups)·prod(kernel)",
    _pool: "out_elems·prod(kernel)",
    _attention: "2·batch·L·S·(E+Ev): Q·Kᵀ and the weights times V",
    _einsum: "2·out_elems·prod(summed indices two operands share) + the elements "
              "of each operand reduced alone first",
    _embedding_sum: "indices·row width",
    _interpolate: "out_elems·taps (nearest 0, linear 4, cubic 16)",
    _inverse: "n³ per matrix",
    _nms: "batch·classes·boxes² (every IoU, the worst case)",
    _fft: "5·N·log2(N)",
    _matrix_op: "out_elems·(size+2)",
    _quantize: "4·out_elems",
    _recurrent: "2·B·T·gates·H·(I+H) + B·T·gates·H",
    _zero: "0 (data movement: bytes moved)",
}


def formula_of(op: str) -> str | None:
    """The formula of ``op`` in words, or None when ovgather has none (uncounted)."""
    if op in BODIES:
        return "the body's FLOPs × iterations (If: the larger branch)"
    fn = FORMULAS.get(op)
    if fn is None:
        return None
    if op in _ELEMENTWISE:
        return "out_elems (elementwise)"
    if op in PER_ELEMENT:
        return f"{PER_ELEMENT[op]}·out_elems"
    if op in PER_INPUT or op in ("AdaptiveAvgPool", "AdaptiveMaxPool"):
        return "in_elems"
    if op in _PER_OUTPUT_4:
        return "4·out_elems (a bilinear sample each)"
    if op in _PER_OUTPUT_1:
        return "out_elems"
    return _WORDS[fn]


#: every other op the registry knows is elementwise: one FLOP per output element
_ELEMENTWISE = frozenset((
    "Abs", "Acos", "Acosh", "Add", "Asin", "Asinh", "Atan", "Atanh", "BitwiseAnd",
    "BitwiseLeftShift", "BitwiseNot", "BitwiseOr", "BitwiseRightShift", "BitwiseXor",
    "Ceiling", "Clamp", "Cos", "Cosh", "Divide", "Elu", "Equal", "Erf", "ErfInv", "Exp",
    "Floor", "FloorMod", "Greater", "GreaterEqual", "HSigmoid", "HardSigmoid", "IsFinite",
    "IsInf", "IsNaN", "Less", "LessEqual", "Log", "LogicalAnd", "LogicalNot", "LogicalOr",
    "LogicalXor", "Maximum", "Minimum", "Mod", "Multiply", "Negative", "NotEqual", "PRelu",
    "Power", "Relu", "Round", "Select", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "SoftPlus",
    "SoftSign", "Sqrt", "SquaredDifference", "Subtract", "Swish", "Tan", "Tanh", "Xor",
))
FORMULAS.update(dict.fromkeys(_ELEMENTWISE, _per_output(1)))


def layer_cost(layer: Layer) -> tuple[Dim, Dim] | None:
    """``(macs, flops)`` of ``layer``; None when a dim it needs is not known (dynamic).
    KeyError for an op with no formula (the caller reports it uncounted)."""
    fn = FORMULAS[layer.op]
    try:
        return fn(layer)
    except (TypeError, IndexError):  # an unknown dim or rank, or a port the layer lacks
        return None
