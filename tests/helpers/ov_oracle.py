"""The judge: build a gather-family op with the installed ``openvino`` and report its answer.

Each ``ov_*`` function builds the op on Parameters of the given partial shapes (texts in
OpenVINO's notation) and returns ``str()`` of the output partial shape, or ``"error: …"``
with the last line of OpenVINO's message when OpenVINO rejects the inputs. Tests compare
ovgather with these answers; nothing here imports ovgather.

Also here: ``ovgather_outcome``, which runs an ovgather rule the same way (shape text or
``"error: …"``), and the seeded random generators of shape texts shared by the
differential tests (seed from ``OVGATHER_SEED``, default 0).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset5 as ov5
import openvino.opset6 as ov6
import openvino.opset7 as ov7
import openvino.opset8 as ov8

SEED = int(os.environ.get("OVGATHER_SEED", "0"))

#: The element types the generators pick indices types from (OpenVINO names).
INDEX_TYPES = ("i64", "i32", "i8", "u8", "u1", "u64", "f32", "f16", "bf16", "boolean", "dynamic")


def ov_type(name: str) -> ov.Type:
    """``ov.Type`` for a lower-case OpenVINO element type name."""
    return getattr(ov.Type, name)


def param(shape: str, element_type: str = "f32"):
    """A Parameter of partial shape ``shape`` (text) and element type ``element_type``."""
    return ov1.parameter(ov.PartialShape(shape), ov_type(element_type))


def outcome(build: Callable[[], object]) -> str:
    """Run ``build`` (returns an openvino node) → output shape text or ``"error: …"``."""
    try:
        node = build()
    except (RuntimeError, ValueError, TypeError, OverflowError) as err:
        lines = [line for line in str(err).splitlines() if line.strip()]
        return "error: " + (lines[-1] if lines else type(err).__name__)
    return str(node.get_output_partial_shape(0))


def ovgather_outcome(rule: Callable[..., object], *args, **kwargs) -> str:
    """``rule(*args, **kwargs)`` → output shape text or ``"error: …"`` (ShapeInferenceError)."""
    from ovgather.errors import ShapeInferenceError

    try:
        return str(rule(*args, **kwargs))
    except ShapeInferenceError as err:
        return "error: " + err.message


def same(ours: str, theirs: str) -> bool:
    """Agreement: the same shape text, or both an error."""
    if ours.startswith("error") or theirs.startswith("error"):
        return ours.startswith("error") and theirs.startswith("error")
    return ours == theirs


# -- the ops, built by OpenVINO -----------------------------------------------------------------
def ov_gather_nd(
    data: str, indices: str, batch_dims: int, version: int, indices_type: str = "i64"
) -> str:
    """GatherND-5 (openvino.opset5) or GatherND-8 (openvino.opset8)."""
    opset = ov5 if version == 5 else ov8
    return outcome(
        lambda: opset.gather_nd(param(data), param(indices, indices_type), batch_dims)
    )


def ov_gather_elements(data: str, indices: str, axis: int, indices_type: str = "i64") -> str:
    """GatherElements-6 (openvino.opset6)."""
    return outcome(
        lambda: ov6.gather_elements(param(data), param(indices, indices_type), axis)
    )


def ov_gather(
    data: str,
    indices: str,
    axis: int | None,
    batch_dims: int,
    version: int,
    indices_type: str = "i64",
    axis_shape: str = "[]",
) -> str:
    """Gather-1/7/8. ``axis`` None: the axis is a Parameter of shape ``axis_shape``;
    otherwise a Constant of that shape (``[]`` or ``[1]``, or a wrong one) holding ``axis``."""

    def build():
        if axis is None:
            axis_node = param(axis_shape, "i64")
        else:
            dims = tuple(ov.PartialShape(axis_shape).to_shape())
            axis_node = ov1.constant(np.full(dims, axis, dtype=np.int64))
        d, i = param(data), param(indices, indices_type)
        if version == 1:
            return ov1.gather(d, i, axis_node)
        opset = ov7 if version == 7 else ov8
        return opset.gather(d, i, axis_node, batch_dims)

    return outcome(build)


# -- random shape texts ------------------------------------------------------------------------
def rng_for(name: str, seed: int = SEED) -> random.Random:
    """A generator seeded by the test's name and ``OVGATHER_SEED``: repeatable per test."""
    return random.Random(f"{name}:{seed}")


def random_dim(rng: random.Random) -> str:
    """One dim text: mostly small static values, then ``?``, intervals and open ends."""
    pick = rng.random()
    if pick < 0.55:
        return str(rng.choice((0, 1, 1, 2, 2, 3, 4, 5, 6, 8, 64)))
    if pick < 0.7:
        return "?"
    lo = rng.randint(0, 6)
    hi = lo + rng.randint(0, 6)
    if pick < 0.82:
        return f"{lo}..{hi}"
    if pick < 0.92:
        return f"{lo}.."
    return f"..{hi}"


def random_shape(
    rng: random.Random, rank: int | None = None, like: list[str] | None = None
) -> str:
    """A shape text of ``rank`` dims (random rank 0–5, dynamic rank ~8% of the time).

    ``like`` gives dims to copy often (so that batch dims agree more often than not).
    """
    if rank is None:
        if rng.random() < 0.08:
            return "[...]"
        rank = rng.choice((0, 1, 1, 2, 2, 3, 3, 4, 4, 5))
    dims = []
    for n in range(rank):
        if like is not None and n < len(like) and rng.random() < 0.8:
            dims.append(like[n])
        else:
            dims.append(random_dim(rng))
    return "[" + ",".join(dims) + "]"


def dims_of(text: str) -> list[str] | None:
    """The dim texts of a shape text, None for ``[...]``."""
    inner = text.strip()[1:-1]
    if inner == "...":
        return None
    return [part for part in inner.split(",") if part]
