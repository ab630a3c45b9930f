"""SliceScatter-15: the data with a slice of it (``start:stop:step`` on ``axes``, as Slice
reads them) replaced by ``updates``.

The output is the data's shape (its rank shared with ``updates``; not a scalar). The four
index inputs are 1-D, of at most the data's rank, ``start``, ``stop`` and ``step`` (and
``axes``) of one shape, no step 0, the axes unique. When they are constants, ``updates``
must be compatible with the slice they describe (each sliced dim's bounds as
OpenVINO's ``slice::make_dim`` gives them, :func:`sliced_bounds`); with unknown axes any
dim may be sliced, with known axes but unknown bounds each sliced dim is at most the
data's.

>>> from ovgather.shapes import PartialShape
>>> print(slice_scatter_shape(PartialShape.parse("[8,?]"), PartialShape.parse("[3,?]")))
[8,?]
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import INF, Dimension, PartialShape
from .core.dims import normalize_axis
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, exact_ints

__all__ = ["slice_scatter_shape", "sliced_dim", "SPECS"]

NAMES = ("start", "stop", "step", "axes")
MIN = -INF - 1


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _window(size: int, start: int, stop: int, step: int) -> tuple[int, int]:
    """The (first, end) positions a slice of ``size`` elements spans (``size`` INF: no
    bound), -1 as end meaning "no bound", as OpenVINO bounds them."""
    unbounded = size == INF
    start_neg = start < 0
    if unbounded and (start_neg != (stop < 0) or INF in (start, stop) or start == MIN):
        if step < 0:
            end = -1 if start_neg or INF in (start, stop) else -1 - start
        elif start_neg and start != MIN:
            end = -start if stop == INF else stop
        else:
            end = -1
        return 0, end
    first = min(max(start + size if start < 0 else start, 0), size - 1 if step < 0 else size)
    end = min(max(stop + size if stop < 0 else stop, -1 if step < 0 else 0), size)
    return first, end


def _sliced_length(size: int, start: int, stop: int, step: int) -> int:
    """How many elements ``[start:stop:step]`` takes from ``size`` (-1: no bound)."""
    first, end = _window(size, start, stop, step)
    if size == INF and first == 0 and end == -1:
        return -1
    n = min(0, end - first) if step < 0 else max(0, end - first)
    if step == -1:
        return -n
    if n != 0 and step != 1:
        n = _trunc_div(n + 1 if step < 0 else n - 1, step) + 1
    return n


def sliced_bounds(d: Dimension, start: int, stop: int, step: int) -> tuple[int, int]:
    """The bounds of ``len(d[start:stop:step])`` for an interval ``d``, as OpenVINO bounds
    them; ``(INF, INF)`` when they cross (OpenVINO's empty interval, compatible with
    nothing)."""
    lo = max(_sliced_length(d.lo, start, stop, step), 0)
    hi = _sliced_length(d.hi, start, stop, step)
    hi = INF if hi < 0 else hi
    return (lo, hi) if lo <= hi else (INF, INF)


def _meet(d: Dimension, bounds: tuple[int, int]) -> bool:
    """OpenVINO's ``compatible``: the intersection is not empty (a lower end at INF is)."""
    lo = max(d.lo, bounds[0])
    return lo <= min(d.hi, bounds[1]) and lo != INF


def sliced_dim(d: Dimension, start: int, stop: int, step: int) -> Dimension:
    """:func:`sliced_bounds` as a dimension (the empty interval prints as ``?``).

    >>> str(sliced_dim(Dimension(), 0, 2, -1)), str(sliced_dim(Dimension(2, 8), 1, 100, 1))
    ('0', '1..7')
    """
    return Dimension.from_bounds(*sliced_bounds(d, start, stop, step))


def slice_scatter_shape(data: PartialShape, updates: PartialShape) -> PartialShape:
    """The output: the data's shape, of the rank the two share."""
    if data.rank is not None and updates.rank is not None and data.rank != updates.rank:
        raise ShapeInferenceError(
            f"data and updates must have one rank, but got {data} and {updates}")
    out = data if data.rank is not None else PartialShape.dynamic(updates.rank)
    if out.rank == 0:
        raise ShapeInferenceError("data and updates must not be scalars, but got []")
    return out


def _check_indices(ins: list[Tensor], rank: int | None) -> None:
    for t, name in zip(ins[2:], NAMES, strict=False):
        dims = t.shape.dims
        if dims is not None and len(dims) != 1:
            raise ShapeInferenceError(f"{name} must be 1-D, but got {t.shape}")
        if rank is not None and dims is not None and dims[0].lo > rank:
            raise ShapeInferenceError(
                f"{name} must have at most one value per data dim ({rank}), but got {t.shape}")
    start, stop, step = (t.shape for t in ins[2:5])
    if not (start.compatible(stop) and start.compatible(step) and stop.compatible(step)):
        raise ShapeInferenceError(
            f"start, stop and step must have one shape, but got {start}, {stop} and {step}")
    if len(ins) > 5 and not ins[5].shape.compatible(start):
        raise ShapeInferenceError(f"axes must have the shape of start, but got {ins[5].shape}")


def _axes(ins: list[Tensor], rank: int | None, start) -> tuple[int, ...] | None:
    """The sliced axes, normalized (None when unknown)."""
    if len(ins) <= 5:
        return None if start is None else tuple(range(len(start)))
    axes = exact_ints(ins[5])
    if axes is None or rank is None:
        return None
    axes = tuple(normalize_axis(a, rank, "a SliceScatter axis") for a in axes)
    if len(set(axes)) != len(axes):
        raise ShapeInferenceError(f"the axes must be unique, but got {list(axes)}")
    return axes


def _slice_scatter(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    out = slice_scatter_shape(ins[0].shape, ins[1].shape)
    _check_indices(ins, out.rank)
    start, stop, step = (exact_ints(t) for t in ins[2:5])
    if step is not None and ins[4].shape.is_static and 0 in step:
        raise ShapeInferenceError(f"the steps must not be 0, but got {list(step)}")
    axes = _axes(ins, ins[0].shape.rank, start)
    if out.dims is None:
        return [Tensor(out, ins[0].etype)]
    expected = []
    for i, d in enumerate(out.dims):
        if axes is None or (i in axes and None in (start, stop, step)):
            expected.append((0, d.hi))
        elif i not in axes:
            expected.append((d.lo, d.hi))
        else:
            k = axes.index(i)
            expected.append(sliced_bounds(d, start[k], stop[k], step[k]))
    updates = ins[1].shape.dims
    if updates is not None and not all(_meet(u, b) for u, b in zip(updates, expected,
                                                                    strict=True)):
        shape = PartialShape.of(tuple(Dimension.from_bounds(*b) for b in expected))
        raise ShapeInferenceError(f"updates must fit the slice {shape}, but got {ins[1].shape}")
    return [Tensor(out, ins[0].etype)]


SPECS = specs_of({"SliceScatter": _slice_scatter})
