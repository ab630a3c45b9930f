"""Fourier transforms: DFT-7, IDFT-7, RDFT-9 and IRDFT-9.

Complex tensors are real tensors with a last dim of 2: DFT, IDFT and IRDFT take
``[..., 2]`` data of rank 2 or more, and their ``axes`` (a 1-D constant, unique, fewer than
the rank) count over the complex dims (``-(r-1) .. r-2``). RDFT takes real data of any
rank 1 or more (``axes`` at most the rank, counting over all dims) and appends the
``2``. The optional ``signal_size`` (1-D, one value per axis; ``-1`` keeps the dim) sets
the transformed dims:

- DFT/IDFT keep the shape, the signal sizes replacing their dims (value bounds too).
- IRDFT drops the last dim; its last axis becomes ``2 * (n - 1)`` unless a signal size
  says otherwise.
- RDFT's last axis becomes ``n / 2 + 1`` (after its signal size).

Axes that are not constants make every transformable dim ``?``.

>>> from ovgather.shapes import PartialShape as P
>>> str(fft_shape("RDFT", P.parse("[4,6..9]"), (1,), None))
'[4,4..5,2]'
>>> str(fft_shape("IRDFT", P.parse("[4,5,2]"), (1,), None))
'[4,8]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, Dimension, PartialShape
from .core.dims import int_dim
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, Value, exact_ints

__all__ = ["fft_shape", "SPECS"]

TWO = Dimension.static(2)


def _half(b: int) -> int:
    return b if b <= 0 else b // 2 + 1


def rdft_dim(d: Dimension) -> Dimension:
    """``n / 2 + 1`` of each bound (an unbounded one stays so)."""
    return Dimension.from_bounds(_half(d.lo), INF if d.hi == INF else _half(d.hi))


def _validate(op: str, data: PartialShape, axes_t: Tensor, axes: tuple[int, ...] | None,
              sizes_t: Tensor | None) -> tuple[int, ...] | None:
    """OpenVINO's checks of the three inputs; the normalized axes when they are known."""
    real = op == "RDFT"
    dims, n_axes = data.dims, axes_t.shape
    if dims is not None:
        rank = len(dims)
        if rank < (1 if real else 2) or (not real and not dims[-1].compatible(TWO)):
            raise ShapeInferenceError(
                f"the data must be {'real of rank 1 or more' if real else 'complex, [..., 2]'}"
                f", but got {data}")
        if n_axes.is_static and n_axes.dims and n_axes.dims[0].lo + (not real) > rank:
            raise ShapeInferenceError(f"there must be fewer axes than data dims, but got "
                                      f"{n_axes} axes for {data}")
        if axes is not None and n_axes.dims is not None:
            width = rank if real else rank - 1
            if any(not -width <= a < width for a in axes):
                raise ShapeInferenceError(
                    f"the axes must lie in [{-width}, {width - 1}], but got {list(axes)}")
            axes = tuple(a + width if a < 0 else a for a in axes)
            if len(set(axes)) != len(axes):
                raise ShapeInferenceError(f"each axis must be unique, but got {list(axes)}")
    if n_axes.rank not in (None, 1):
        raise ShapeInferenceError(f"the axes must be 1-D, but got {n_axes}")
    if sizes_t is not None:
        s = sizes_t.shape
        if s.rank not in (None, 1):
            raise ShapeInferenceError(f"signal_size must be 1-D, but got {s}")
        if n_axes.is_static and s.is_static and n_axes.dims[0] != s.dims[0]:
            raise ShapeInferenceError(
                f"signal_size must have one value per axis, but got {s} for {n_axes} axes")
    return axes


def _bounds_dim(lo: int, hi: int) -> Dimension:
    return Dimension.from_bounds(max(lo, 0), INF if hi < 0 or hi >= INF else hi)


def fft_shape(op: str, data: PartialShape, axes: tuple[int, ...] | None,
              sizes: Value | None, with_sizes: bool = False) -> PartialShape:
    """The output of ``op`` for normalized ``axes`` (None: unknown) and the bounds of its
    signal sizes (None: unknown or not given, ``with_sizes`` says which)."""
    dims = data.dims
    if dims is None:
        return data
    out = list(dims)
    if op in ("DFT", "IDFT"):
        if with_sizes and axes is None:
            out[:-1] = [DYNAMIC] * (len(dims) - 1)
        elif with_sizes and sizes is not None:
            for axis, lo, hi in zip(axes, *sizes, strict=False):
                if (lo, hi) != (-1, -1):
                    out[axis] = _bounds_dim(lo, hi)
        elif with_sizes:
            for axis in axes:
                out[axis] = DYNAMIC
        return PartialShape.of(tuple(out))
    out = out + [TWO] if op == "RDFT" else out[:-1]
    if axes is None:
        n = len(dims) if op == "RDFT" else len(dims) - 1
        return PartialShape.of((DYNAMIC,) * n + tuple(out[n:]))
    last = axes[-1]
    if with_sizes and sizes is None:
        out[last] = DYNAMIC
        return PartialShape.of(tuple(out))
    exact = sizes[0] if with_sizes else ()
    for axis, v in zip(axes, exact, strict=False):
        if v != -1:
            out[axis] = int_dim(v)
    if op == "RDFT":
        out[last] = rdft_dim(out[last])
    elif not exact or exact[-1] == -1:
        out[last] = TWO * (dims[last] - 1)
    return PartialShape.of(tuple(out))


def _fft(op: str):
    def rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
        sizes_t = ins[2] if len(ins) > 2 else None
        axes = _validate(op, ins[0].shape, ins[1], exact_ints(ins[1]), sizes_t)
        sizes = None
        if sizes_t is not None and sizes_t.shape.rank is not None:
            sizes = sizes_t.value if op in ("DFT", "IDFT") else exact_ints(sizes_t)
            sizes = (sizes, sizes) if sizes is not None and op not in ("DFT", "IDFT") else sizes
        shape = fft_shape(op, ins[0].shape, axes, sizes, sizes_t is not None)
        return [Tensor(shape, ins[0].etype)]

    return rule


SPECS = specs_of({op: _fft(op) for op in ("DFT", "IDFT", "RDFT", "IRDFT")})
