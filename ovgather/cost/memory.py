"""Memory: the weights a model stores and the activations it keeps alive while it runs.

**Weights.** Every Const is counted once, as stored in the .bin: by its ``(offset,
size)`` there, so two Const layers sharing the same bytes count them once, and packed
types (``u4``, ``i4``, ``nf4``, ``u1``) count the bytes they take, not elements × 4 bytes.
A Const added in memory (no offset) counts its array's bytes. The weight bytes of a model
read from an IR are therefore the size of its .bin (minus any bytes no Const uses).

**Constant layers.** A layer whose inputs are all constant (a Const, or another constant
layer: the ``Convert`` that decompresses f16 or u8 weights, a ``Reshape`` of a weight)
computes a weight, not an activation: OpenVINO folds it or keeps it beside the weights.
Each Const's bytes are put on the first non-constant layer that reads it (its *owner*:
the MatMul its decompressed weight reaches).

**Activations.** The layers run in the walk's topological order. A tensor is allocated
when its layer runs and freed after its last reader has run; the model's outputs (read by
a ``Result``) stay alive to the end, and an output nobody reads is freed at once. The
peak is the largest sum of live tensors at any step, counted when a layer's outputs are
allocated and before its inputs are freed (a layer reads its inputs while it writes its
outputs). Constant layers hold no activations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..element_types import ELEMENT_TYPES

__all__ = ["WeightRecord", "weight_of", "constant_layers", "owners", "live_peaks",
           "tensor_bytes"]

_CONST = ("Const", "Constant")


class WeightRecord:
    """One Const's storage: ``key`` (what makes two Consts the same bytes), element
    type, parameters (elements) and bytes as stored."""

    __slots__ = ("key", "element_type", "params", "nbytes")

    def __init__(self, key: Any, element_type: str, params: int, nbytes: int) -> None:
        self.key, self.element_type, self.params, self.nbytes = key, element_type, params, nbytes


def _shape(text: str) -> tuple[int, ...]:
    text = text.strip()
    return tuple(int(x) for x in text.split(",") if x.strip()) if text else ()


def weight_of(node: str, attrs: Mapping[str, Any]) -> WeightRecord:
    """The storage of Const layer ``node`` (``attrs`` its node dict)."""
    data = attrs.get("data") or {}
    value = attrs.get("value")
    if value is not None and "offset" not in data:
        import numpy as np

        array = np.asarray(value)
        et = data.get("element_type") or str(array.dtype)
        return WeightRecord(("memory", node), et, int(array.size), int(array.nbytes))
    et = data.get("element_type", "")
    shape = _shape(data.get("shape", ""))
    params = 1
    for d in shape:
        params *= d
    size = data.get("size")
    if size is not None:
        nbytes = int(size)
    else:
        bits = ELEMENT_TYPES[et].bits if et in ELEMENT_TYPES else None
        nbytes = 0 if bits is None else (params * bits + 7) // 8
    key = ("bin", int(data["offset"]), nbytes) if "offset" in data else ("layer", node)
    return WeightRecord(key, et, params, nbytes)


def constant_layers(order: Sequence[str], nodes: Mapping[str, Any],
                    preds: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The layers whose outputs are constant: Consts, and layers every input of which
    comes from a constant layer (never a Parameter, ReadValue or random draw)."""
    constant: set[str] = set()
    for node in order:
        attrs = nodes[node]
        op = attrs["type"]
        if op in _CONST:
            constant.add(node)
        elif (op not in ("Parameter", "ReadValue", "RandomUniform", "Multinomial", "Result")
              and attrs["inputs"] and preds[node] and all(u in constant for u in preds[node])):
            constant.add(node)
    return constant


def owners(order: Sequence[str], constant: set[str],
           readers: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each constant layer -> the first non-constant layer its value reaches (itself
    when nothing reads it)."""
    owner: dict[str, str] = {}
    for node in reversed(order):  # readers first
        if node not in constant:
            continue
        found = node
        for reader in readers.get(node, ()):
            found = reader if reader not in constant else owner.get(reader, reader)
            break
        owner[node] = found
    return owner


def tensor_bytes(elements: Any, element_type: str) -> Any:
    """Bytes of ``elements`` elements of ``element_type`` (None when either is unknown)."""
    if elements is None:
        return None
    et = ELEMENT_TYPES.get(element_type)
    bits = 32 if et is None or et.bits is None else et.bits
    if bits % 8 == 0:
        return elements * (bits // 8)
    return (elements * bits + 7) // 8


def live_peaks(order: Sequence[str], produced: Mapping[str, Iterable[tuple[int, Any]]],
               last_read: Mapping[tuple[str, int], int], kept: set[tuple[str, int]]
               ) -> tuple[list[Any], bool]:
    """The live activation bytes at each step of ``order`` (None once a size is unknown)
    and whether every size was known. ``produced[node]``: ``(port, bytes)`` of each of its
    activation outputs; ``last_read``: a tensor's last reader's step; ``kept``: tensors
    alive to the end (the model's outputs)."""
    frees: dict[int, Any] = {}
    live: Any = 0
    known = True
    steps: list[Any] = []
    for i, node in enumerate(order):
        for port, nbytes in produced.get(node, ()):
            if nbytes is None:
                known = False
                continue
            live += nbytes
            key = (node, port)
            if key in kept:
                continue
            end = last_read.get(key, i)
            frees[end] = frees.get(end, 0) + nbytes
        steps.append(live if known else None)
        live -= frees.pop(i, 0)
    return steps, known
