"""What OpenVINO's compiled references do that NumPy does not: the C library's math
functions (``sinhf`` is not always the correctly rounded sinh) and x86-64's casts of
reals to integers."""

from __future__ import annotations

from functools import lru_cache

from ..._lazy import numpy as np

__all__ = ["c_math", "c_math2", "c_cast"]


@lru_cache(maxsize=1)
def _libm():
    """The C math library OpenVINO's references call (None where it cannot be found:
    NumPy's double functions then stand in, which may differ in the last bit)."""
    import ctypes
    import ctypes.util

    for find in (lambda: "libm.so.6", lambda: ctypes.util.find_library("m"),
                 lambda: "msvcrt"):
        name = find()
        try:
            return ctypes.CDLL(name) if name else None
        except OSError:
            continue
    return None


def c_math2(name: str, x, y, single: bool):
    """Two-argument ``name`` (``pow``) by the C library, element by element."""
    import ctypes

    libm = _libm()
    kind = ctypes.c_float if single else ctypes.c_double
    fn = getattr(libm, name + ("f" if single else ""), None) if libm is not None else None
    dtype = np.float32 if single else np.float64
    x, y = np.broadcast_arrays(x.astype(dtype), y.astype(dtype))
    if fn is None:
        return np.power(x.astype(np.float64), y.astype(np.float64)).astype(dtype)
    fn.restype, fn.argtypes = kind, [kind, kind]
    out = [fn(u, v) for u, v in zip(x.ravel().tolist(), y.ravel().tolist(), strict=True)]
    return np.array(out, dtype=dtype).reshape(x.shape)


def c_math(name: str, x, single: bool):
    """``name`` of each element of ``x`` by the C library, in float (``single``) or
    double, as a float32 or float64 array."""
    import ctypes

    libm = _libm()
    kind = ctypes.c_float if single else ctypes.c_double
    fn = getattr(libm, name + ("f" if single else ""), None) if libm is not None else None
    dtype = np.float32 if single else np.float64
    if fn is None:
        ufunc = {"atan": np.arctan, "asinh": np.arcsinh}.get(name) or getattr(np, name, None)
        if ufunc is None:
            import math
            ufunc = np.vectorize(getattr(math, name))
        return np.asarray(ufunc(x.astype(np.float64))).astype(dtype)
    fn.restype, fn.argtypes = kind, [kind]
    return np.array([fn(v) for v in x.astype(dtype).tolist()], dtype=dtype)


def c_cast(x, dtype):
    """Reals to an integer type as x86-64 code casts them (``cvttsd2si``): toward zero;
    a value out of range gives the "indefinite integer" (the minimum of int32 or
    int64), 8- to 32-bit types go through int32 (unsigned 32-bit through int64), u64
    from 2^63 up through ``x - 2^63``."""
    x = x.astype(np.float64)
    t = np.trunc(x)

    def through(bits: int):
        lo, hi = -(2.0 ** (bits - 1)), 2.0 ** (bits - 1)
        ok = (t >= lo) & (t < hi)
        wide = np.where(ok, t, 0).astype(np.int64)
        return np.where(ok, wide, -(1 << (bits - 1))).astype(np.int64)

    if dtype == np.uint64:
        low = through(64).view(np.uint64)
        high = (through_shift := np.where(t >= 2.0 ** 63, t - 2.0 ** 63, 0.0))
        high_ok = (through_shift < 2.0 ** 63)
        high = np.where(high_ok, through_shift, 0).astype(np.int64).view(np.uint64) \
            ^ np.uint64(1 << 63)
        high = np.where(high_ok, high, np.uint64(0))
        return np.where(t >= 2.0 ** 63, high, low)
    if dtype == np.int64:
        return through(64)
    if dtype == np.uint32:
        return through(64).astype(np.uint32)
    return through(32).astype(dtype)
