"""What the NumPy references of the gather family share: index arrays, products, the
batch-dims check. Their errors are ovgather's (``ReferenceInputError``)."""

from __future__ import annotations

from ..._lazy import numpy as np
from ...errors import ReferenceInputError
from ...shapes import INF

__all__ = ["index_array", "prod", "require_same_batch", "reach_message", "table_size",
           "table_bound"]


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


def reach_message(lo: int, hi: int, size: int, negative: bool, where: str, data) -> str | None:
    """Why indices ``lo..hi`` into ``size`` elements (negative ones counted from the end
    when ``negative``) read out of bounds, or None when they stay inside."""
    floor = -size if negative else 0
    if hi >= INF or lo <= -INF or floor <= lo <= hi < size:
        return None
    return (f"its indices reach {lo}..{hi} along {where} of data {data}, which holds "
            f"{size}: the runtime reads out of bounds")


def table_bound(shape, axis: int | None) -> int | None:
    """The size of dim ``axis`` when it is known, else None: the bound a user's indices
    are held to (``table_rows(..., widest=True)``), where an unknown size bounds nothing.

    >>> table_bound((500, 32), 0), table_bound((None, 32), 0), table_bound(None, 0)
    (500, None, None)
    """
    if shape is None or axis is None or not -len(shape) <= axis < len(shape):
        return None
    return shape[axis]


def table_size(shape, axis: int | None) -> int:
    """The size of dim ``axis`` of a shape as ``table_rows`` gets it (a tuple of ints and
    None for dynamic dims, or None for a dynamic rank): 1 when unknown, as index 0 is
    then the one known to be valid.

    >>> table_size((500, 32), 0), table_size((None, 32), 0), table_size((4, 5), -1)
    (500, 1, 5)
    """
    if shape is None or axis is None or not -len(shape) <= axis < len(shape):
        return 1
    return max(1, shape[axis] or 1)
