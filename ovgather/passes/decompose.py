"""The layers an older OpenVINO release lacks, built from ops every release runs (opset1–8).

Each function replaces one layer by a small subgraph that computes the same outputs; the
last layer of the subgraph takes over the old layer's readers, tensor names and friendly
name (``rewrite.replace_layer``), so the model's inputs and outputs keep their names.
New layers are named ``<old name>/<part>`` (unique in the graph) and declare no dims:
``rewrite.reinfer`` fills them in. What OpenVINO's own decompositions do (its
``ScaledDotProductAttentionDecomposition``, ``GroupNormalizationDecomposition``) was the
guide; each step below is written from the op's specification:

* ScaledDotProductAttention-13: ``softmax(Q·scale @ Kᵀ + mask) @ V``, the mask either
  the float input added as is, the boolean input as 0 where True and −inf where False (a row
  masked everywhere gives NaN, as OpenVINO's own attention does), or, with ``causal``, −inf
  above the diagonal (top-left aligned); the scale is the
  given input or ``1/sqrt(last dim of Q)``.
* GroupNormalization-12: ``x`` reshaped to ``[N, groups, -1]``, MVN-6 over the last axis
  (variance inside the square root), reshaped back, then ``* scale + bias`` per channel.
* Pad-12 with pads that may be negative: Pad-1 with the pads clamped at 0, then a
  StridedSlice that crops what the negative pads remove.
* IsNaN-10: ``x != x`` (NotEqual-1), true exactly for NaN.
* ConvertPromoteTypes-14: a Convert-0 of each input to the promoted type (or the input
  itself when it already is of that type).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from ..edit import add_const, add_layer, connect, remove_layer, replace_layer, replace_uses
from ..element_types import element_type_name, numpy_dtype, precision_of
from ..graph import consumers, input_edges, output_port
from .building import first_output

__all__ = ["sdpa", "sdpa_float_mask", "group_norm", "pad_cropped", "is_nan", "promote_types"]


class _Builder:
    """Adds the layers of one decomposition: named after the layer it replaces, each of
    one output of the precision given (that of the replaced layer's input by default)."""

    def __init__(self, G: nx.MultiDiGraph, node: str) -> None:
        self.G, self.node, self.base = G, node, G.nodes[node]["name"]
        self.edges = input_edges(G, node)
        self.ins = [(u, port) for u, port, _ in self.edges]

    def precision(self, source: tuple[str, int]) -> str:
        return output_port(self.G, *source).get("precision") or "FP32"

    def dims(self, source: tuple[str, int]) -> tuple[int, ...]:
        return tuple(output_port(self.G, *source).get("dims") or ())

    def layer(self, op: str, version: str, inputs: list[tuple[str, int]], part: str,
              precision: str | None = None, data: dict | None = None) -> tuple[str, int]:
        made = add_layer(self.G, op, version, data=data or {}, inputs=inputs,
                         outputs=[{"precision": precision or self.precision(inputs[0])}],
                         name=f"{self.base}/{part}")
        return made, first_output(self.G, made)

    def const(self, array: np.ndarray, part: str) -> tuple[str, int]:
        made = add_const(self.G, array, name=f"{self.base}/{part}")
        return made, first_output(self.G, made)

    def scalar(self, value: float, like: tuple[str, int], part: str) -> tuple[str, int]:
        """A 0-d Const of ``value`` in the element type of output ``like``."""
        dtype = numpy_dtype(element_type_name(self.precision(like))) or "float32"
        return self.const(np.array(value, dtype=dtype), part)

    def lowest(self, like: tuple[str, int], part: str) -> tuple[str, int]:
        """The most negative finite number of output ``like``'s real type: a score that
        softmax turns into 0 beside any real score, and into equal weights in a row
        where every score is masked (as the CPU plugin's attention of a stateful model
        does), not NaN."""
        dtype = numpy_dtype(element_type_name(self.precision(like))) or "float32"
        return self.scalar(float(np.finfo(dtype).min), like, part)

    def take_over(self, last: tuple[str, int]) -> None:
        """``last`` replaces the decomposed layer (its readers, names, friendly name)."""
        replace_layer(self.G, self.node, last[0])


def sdpa(G: nx.MultiDiGraph, node: str) -> None:
    """ScaledDotProductAttention-13 as MatMul, SoftMax-8 and the mask arithmetic."""
    b = _Builder(G, node)
    q, k, v = b.ins[:3]
    causal = (G.nodes[node].get("data") or {}).get("causal", "false") == "true"
    if len(b.ins) > 4:
        scale = b.ins[4]
    elif b.dims(q) and b.dims(q)[-1] > 0:
        scale = b.scalar(1 / math.sqrt(b.dims(q)[-1]), q, "scale")
    else:  # 1 / sqrt(Q's last dim), measured at run time
        shape = b.layer("ShapeOf", "opset3", [q], "q_shape", "I64", {"output_type": "i64"})
        last = b.layer("Gather", "opset8", [shape, b.const(np.array(-1, np.int64), "minus_one"),
                                            b.const(np.array(0, np.int64), "axis")], "q_last")
        size = b.layer("Convert", "opset1", [last], "q_last_real", b.precision(q),
                       {"destination_type": element_type_name(b.precision(q))})
        root = b.layer("Sqrt", "opset1", [size], "sqrt")
        scale = b.layer("Divide", "opset1", [b.scalar(1.0, q, "one"), root], "scale",
                        data={"auto_broadcast": "numpy", "m_pythondiv": "true"})
    scaled = b.layer("Multiply", "opset1", [q, scale], "q_scaled",
                     data={"auto_broadcast": "numpy"})
    scores = b.layer("MatMul", "opset1", [scaled, k], "scores",
                     data={"transpose_a": "false", "transpose_b": "true"})
    mask = _causal_mask(b, q, k, scores) if causal else (
        _float_mask(b, b.ins[3], scores) if len(b.ins) > 3 else None)
    if mask is not None:
        scores = b.layer("Add", "opset1", [scores, mask], "masked",
                         data={"auto_broadcast": "numpy"})
    weights = b.layer("Softmax", "opset8", [scores], "weights", data={"axis": "-1"})
    b.take_over(b.layer("MatMul", "opset1", [weights, v], "output",
                        data={"transpose_a": "false", "transpose_b": "false"}))


def _float_mask(b: _Builder, mask: tuple[str, int], like: tuple[str, int],
                masked: float | None = -np.inf) -> tuple[str, int]:
    """The attention mask as numbers to add: a boolean mask becomes 0 where True and
    ``masked`` where False (None: the lowest finite number), a real mask of another type
    is converted."""
    kind, want = element_type_name(b.precision(mask)), element_type_name(b.precision(like))
    if kind == "boolean":
        ignore = b.lowest(like, "ignore") if masked is None else b.scalar(masked, like,
                                                                           "ignore")
        return b.layer("Select", "opset1", [mask, b.scalar(0.0, like, "attend"), ignore],
                       "mask_real", b.precision(like), {"auto_broadcast": "numpy"})
    if kind != want:
        return b.layer("Convert", "opset1", [mask], "mask_real", b.precision(like),
                       {"destination_type": want})
    return mask


def _causal_mask(b: _Builder, q: tuple[str, int], k: tuple[str, int],
                 like: tuple[str, int]) -> tuple[str, int]:
    """−inf where the key position is after the query position (``j > i``), else 0."""
    zero, one = b.const(np.array(0, np.int64), "zero"), b.const(np.array(1, np.int64), "one")
    minus_two = b.const(np.array(-2, np.int64), "minus_two")
    rows = []
    for source, part in ((q, "q"), (k, "k")):
        shape = b.layer("ShapeOf", "opset3", [source], f"{part}_shape", "I64",
                        {"output_type": "i64"})
        length = b.layer("Gather", "opset8", [shape, minus_two, zero], f"{part}_length")
        rows.append(b.layer("Range", "opset4", [zero, length, one], f"{part}_positions",
                            "I64", {"output_type": "i64"}))
    query_at = b.layer("Unsqueeze", "opset1", [rows[0], one], "query_at")
    key_at = b.layer("Unsqueeze", "opset1", [rows[1], zero], "key_at")
    future = b.layer("Greater", "opset1", [key_at, query_at], "future", "BOOL",
                     {"auto_broadcast": "numpy"})
    return b.layer("Select", "opset1", [future, b.scalar(-np.inf, like, "ignore"),
                                        b.scalar(0.0, like, "attend")],
                   "causal_mask", b.precision(like), {"auto_broadcast": "numpy"})


def sdpa_float_mask(G: nx.MultiDiGraph, node: str) -> None:
    """Give ScaledDotProductAttention its boolean mask as numbers (0 / lowest): the same
    attention, without the boolean mask some CPU plugins refuse in stateful models."""
    b = _Builder(G, node)
    q, mask = b.ins[0], b.ins[3]
    real = _float_mask(b, mask, q, masked=None)
    to_port = b.edges[3][2]
    G.remove_edge(mask[0], node, key=(mask[1], to_port))
    connect(G, real, (node, to_port))
    port = next(p for p in G.nodes[node]["inputs"] if p["id"] == to_port)
    port["precision"] = b.precision(q)


def group_norm(G: nx.MultiDiGraph, node: str, rank: int) -> None:
    """GroupNormalization-12 on an input of static ``rank`` as Reshape, MVN-6, Reshape,
    Multiply and Add."""
    b = _Builder(G, node)
    x, scale, bias = b.ins
    data = G.nodes[node].get("data") or {}
    groups = int(data["num_groups"])
    grouped = b.layer("Reshape", "opset1", [x, b.const(np.array([0, groups, -1], np.int64),
                                                       "group_shape")], "grouped",
                      data={"special_zero": "true"})
    normal = b.layer("MVN", "opset6", [grouped, b.const(np.array([2], np.int64), "axes")],
                     "normalized", data={"normalize_variance": "true", "eps": data["epsilon"],
                                         "eps_mode": "inside_sqrt"})
    shape = b.layer("ShapeOf", "opset3", [x], "shape", "I64", {"output_type": "i64"})
    back = b.layer("Reshape", "opset1", [normal, shape], "ungrouped",
                   data={"special_zero": "false"})
    per_channel = b.const(np.array([-1] + [1] * (rank - 2), np.int64), "channel_shape")
    scale_c = b.layer("Reshape", "opset1", [scale, per_channel], "scale_per_channel",
                      data={"special_zero": "false"})
    bias_c = b.layer("Reshape", "opset1", [bias, per_channel], "bias_per_channel",
                     data={"special_zero": "false"})
    scaled = b.layer("Multiply", "opset1", [back, scale_c], "scaled",
                     data={"auto_broadcast": "numpy"})
    b.take_over(b.layer("Add", "opset1", [scaled, bias_c], "output",
                        data={"auto_broadcast": "numpy"}))


def pad_cropped(G: nx.MultiDiGraph, node: str, rank: int) -> None:
    """Pad-12 (constant mode) whose pads may be negative: Pad-1 by ``max(pad, 0)``, then a
    StridedSlice that removes ``max(-pad, 0)`` at each side."""
    b = _Builder(G, node)
    x, begin, end = b.ins[:3]
    kind = numpy_dtype(element_type_name(b.precision(begin))) or "int64"
    zero = b.const(np.zeros(rank, kind), "no_pad")
    grown = [b.layer("Maximum", "opset1", [pads, zero], f"{part}_grow",
                     data={"auto_broadcast": "numpy"})
             for pads, part in ((begin, "begin"), (end, "end"))]
    padded = b.layer("Pad", "opset1", [x, *grown, *b.ins[3:]], "padded",
                     b.precision(x), {"pad_mode": "constant"})
    cut = [b.layer("Subtract", "opset1", [grow, pads], f"{part}_cut",
                   data={"auto_broadcast": "numpy"})
           for grow, pads, part in ((grown[0], begin, "begin"), (grown[1], end, "end"))]
    cut = [c if kind == "int64" else b.layer("Convert", "opset1", [c], f"{part}_cut_i64",
                                             "I64", {"destination_type": "i64"})
           for c, part in zip(cut, ("begin", "end"), strict=True)]
    size = b.layer("ShapeOf", "opset3", [padded], "padded_shape", "I64", {"output_type": "i64"})
    stop = b.layer("Subtract", "opset1", [size, cut[1]], "stop",
                   data={"auto_broadcast": "numpy"})
    no_mask = ",".join("0" * rank)
    b.take_over(b.layer(
        "StridedSlice", "opset1", [padded, cut[0], stop,
                                   b.const(np.ones(rank, np.int64), "stride")],
        "cropped", b.precision(x), {"begin_mask": no_mask, "end_mask": no_mask,
                                    "new_axis_mask": "", "shrink_axis_mask": "",
                                    "ellipsis_mask": ""}))


def is_nan(G: nx.MultiDiGraph, node: str) -> None:
    """IsNaN-10 as NotEqual-1 of the input with itself."""
    b = _Builder(G, node)
    x = b.ins[0]
    b.take_over(b.layer("NotEqual", "opset1", [x, x], "self_differs", "BOOL",
                        {"auto_broadcast": "numpy"}))


def promote_types(G: nx.MultiDiGraph, node: str) -> None:
    """ConvertPromoteTypes-14: each output read from its input converted to the output's
    type (or straight from the input when it is of that type already)."""
    b = _Builder(G, node)
    for source, port in zip(b.ins, G.nodes[node]["outputs"], strict=True):
        want = element_type_name(port.get("precision"))
        if not consumers(G, node, port["id"]) and not port.get("names"):
            continue
        made = source
        if element_type_name(b.precision(source)) != want:
            made = b.layer("Convert", "opset1", [source], f"to_{want}_{port['id']}",
                           precision_of(want), {"destination_type": want})
        replace_uses(G, (node, port["id"]), made, take_names=made != source)
    remove_layer(G, node)

