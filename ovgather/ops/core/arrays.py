"""What the NumPy references of the gather family share: index arrays, products, the
batch-dims check. Their errors are ovgather's (``ReferenceInputError``)."""

from __future__ import annotations

from ..._lazy import numpy as np
from ...errors import ReferenceInputError

__all__ = ["index_array", "prod", "require_same_batch"]


def index_array(indices: object) -> np.ndarray:
    """Integer indices as an array, of their own integer type (no copy)."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise ReferenceInputError(f"indices must be of an integer type, but got {idx.dtype}")
    return idx


def prod(dims: tuple[int, ...]) -> int:
    """The product of array dims as a Python int (1 for none)."""
    out = 1
    for d in dims:
        out *= int(d)
    return out


def require_same_batch(op: str, data: np.ndarray, idx: np.ndarray, b: int) -> None:
    """The first ``b`` dims of data and indices must be equal (concrete arrays)."""
    if data.shape[:b] != idx.shape[:b]:
        raise ReferenceInputError(f"{op} batch dims of data and indices must be equal, but got "
                                  f"{data.shape[:b]} and {idx.shape[:b]}")
