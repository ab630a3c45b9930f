"""Dimensions and partial shapes, with OpenVINO's text and interval arithmetic.

A :class:`Dimension` is an interval ``lo..hi`` of possible sizes: static when
``lo == hi``, fully dynamic (``?``) when it is ``0..∞``. A :class:`PartialShape` is a
tuple of dimensions, or *dynamic rank* when even the number of dims is unknown.

``str()`` prints exactly what ``str(openvino.PartialShape)`` prints, so a result can be
compared with OpenVINO as text::

    >>> str(PartialShape.parse("2..5, ?, 4"))
    '[2..5,?,4]'
    >>> str(PartialShape.parse("[0..6,-1,2..,..8]"))
    '[..6,?,2..,..8]'
    >>> str(PartialShape.dynamic()), str(PartialShape.parse(""))
    ('[...]', '[]')

The arithmetic is OpenVINO's: merging intersects intervals, a product multiplies the
lower bounds and the upper bounds, and an unbounded end stays unbounded::

    >>> Dimension(4, 6) * Dimension(6, 7)
    Dimension('24..42')
    >>> Dimension.parse("?") * 5, Dimension(2) * Dimension(0)
    (Dimension('?'), Dimension('0'))
    >>> Dimension(2, 6) & Dimension(4, 8)
    Dimension('4..6')

Nothing here knows about XML, networkx or openvino. Static dimensions are interned, so
shape rules over static models do not allocate a new object per dim.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Union

from .errors import ShapeParseError

__all__ = [
    "INF",
    "DYNAMIC",
    "DYNAMIC_RANK",
    "Dimension",
    "PartialShape",
    "ShapeLike",
    "as_partial_shape",
    "normalize_axis",
]

#: The open upper end of an interval (OpenVINO's ``int64`` maximum).
INF = (1 << 63) - 1


def _clip_times(a: int, b: int) -> int:
    if a == 0 or b == 0:
        return 0
    if a == INF or b == INF or a > INF // b:
        return INF
    return a * b


def _clip_add(a: int, b: int) -> int:
    if a == INF or b == INF or a > INF - b:
        return INF
    return a + b


def _clip_minus(a: int, b: int) -> int:
    if a <= b:
        return 0
    if a == INF:
        return INF
    return a - b


def _digits(digits: str, text: str) -> int:
    """A size written in ASCII digits (OpenVINO refuses other digits, such as ``３`` or
    ``³``), at most ``INF`` (19 digits: also keeps clear of Python's 4300-digit limit)."""
    if not digits.isascii():
        raise ShapeParseError(f"a dimension must be written with the digits 0-9, but got "
                              f"'{_cut(text)}'")
    significant = digits.lstrip("0") or "0"  # int() counts leading zeros too
    if len(significant) > 19 or int(significant) > INF:
        raise ShapeParseError(f"a dimension is at most {INF}, but got '{_cut(digits)}'")
    return int(significant)


def _cut(text: str) -> str:
    """``text`` for a message: at most 40 characters."""
    return text if len(text) <= 40 else f"{text[:40]}… ({len(text)} characters)"


class Dimension:
    """One dimension: the interval ``lo..hi`` of sizes it may take (``hi`` may be INF).

    ``Dimension(4)`` is static, ``Dimension(2, 5)`` an interval, ``Dimension()`` or
    ``Dimension(-1)`` fully dynamic, ``Dimension(2, -1)`` bounded below only.
    Instances are immutable and hashable; compare them with ``==``.
    """

    __slots__ = ("lo", "hi")

    lo: int
    hi: int

    def __new__(cls, lo: int | None = None, hi: int | None = None) -> Dimension:
        if lo is None or (hi is None and lo == -1):
            return DYNAMIC
        if hi is None:
            if 0 <= lo < _STATIC_CACHE_SIZE:
                return _STATIC[lo] or _interned(lo)
            hi = lo
        elif hi == -1:
            hi = INF
        if lo < 0 or hi < lo:
            raise ShapeParseError(f"a dimension needs 0 <= lower <= upper, but got {lo}..{hi}")
        if hi > INF:
            raise ShapeParseError(f"a dimension is at most {INF}, but got {hi}")
        return Dimension.from_bounds(lo, hi)

    @classmethod
    def _make(cls, lo: int, hi: int) -> Dimension:
        self = object.__new__(cls)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        return self

    @staticmethod
    def static(value: int) -> Dimension:
        """The static dimension ``value`` (interned for small values)."""
        if 0 <= value < _STATIC_CACHE_SIZE:
            return _STATIC[value] or _interned(value)
        return Dimension(value)

    @staticmethod
    def dynamic() -> Dimension:
        """The fully dynamic dimension ``?``."""
        return DYNAMIC

    @staticmethod
    def from_bounds(lo: int, hi: int) -> Dimension:
        """``lo..hi`` without validation, for rules that computed valid bounds."""
        if lo == hi and 0 <= lo < _STATIC_CACHE_SIZE:
            return _STATIC[lo] or _interned(lo)
        if hi == INF and (lo == 0 or lo == INF):  # OpenVINO prints INF..INF as ``?`` too
            return DYNAMIC
        return Dimension._make(lo, hi)

    @staticmethod
    def parse(text: str) -> Dimension:
        """Parse ``4``, ``?``, ``-1``, ``2..5``, ``2..``, ``..5`` (spaces allowed).

        >>> Dimension.parse(" 2..5 "), Dimension.parse("-1"), Dimension.parse("..5")
        (Dimension('2..5'), Dimension('?'), Dimension('..5'))
        """
        s = text.strip()
        if s in ("?", "-1"):
            return DYNAMIC
        if s.isdigit():
            return Dimension.static(_digits(s, text))
        lo_text, sep, hi_text = s.partition("..")
        if sep:
            lo_text, hi_text = lo_text.strip(), hi_text.strip()
            if (not lo_text or lo_text.isdigit()) and (not hi_text or hi_text.isdigit()):
                lo = _digits(lo_text, text) if lo_text else 0
                hi = _digits(hi_text, text) if hi_text else INF
                if lo <= hi:
                    return Dimension.from_bounds(lo, hi)
                raise ShapeParseError(
                    f"an interval dimension needs lower <= upper, but got '{text}'"
                )
        raise ShapeParseError(
            f"a dimension is N, ?, -1, N..M, N.. or ..M, but got '{_cut(text)}'"
        )

    # -- queries -----------------------------------------------------------------
    @property
    def is_static(self) -> bool:
        return self.lo == self.hi

    @property
    def is_dynamic(self) -> bool:
        """True unless the dimension is static (so intervals are dynamic, as in OpenVINO)."""
        return self.lo != self.hi

    @property
    def is_fully_dynamic(self) -> bool:
        return self.lo == 0 and self.hi == INF

    @property
    def length(self) -> int:
        """The static value; a ShapeParseError-free ValueError when not static."""
        if self.lo != self.hi:
            raise ValueError(f"dimension {self} is not static")
        return self.lo

    @property
    def max_length(self) -> int:
        """The upper bound, ``-1`` when unbounded (as OpenVINO's get_max_length)."""
        return -1 if self.hi == INF else self.hi

    def compatible(self, other: Dimension) -> bool:
        """True when some size fits both (their intervals intersect)."""
        return max(self.lo, other.lo) <= min(self.hi, other.hi)

    # -- arithmetic ----------------------------------------------------------------
    def merge(self, other: Dimension) -> Dimension | None:
        """The intersection of both intervals, or ``None`` when they are disjoint."""
        if self is other:
            return self
        lo = self.lo if self.lo > other.lo else other.lo
        hi = self.hi if self.hi < other.hi else other.hi
        if lo > hi:
            return None
        return Dimension.from_bounds(lo, hi)

    def __and__(self, other: Dimension) -> Dimension | None:
        return self.merge(other)

    def __mul__(self, other: Dimension | int) -> Dimension:
        if not isinstance(other, Dimension):
            other = Dimension.static(other)
        return Dimension.from_bounds(_clip_times(self.lo, other.lo), _clip_times(self.hi, other.hi))

    __rmul__ = __mul__

    def __add__(self, other: Dimension | int) -> Dimension:
        if not isinstance(other, Dimension):
            other = Dimension.static(other)
        return Dimension.from_bounds(_clip_add(self.lo, other.lo), _clip_add(self.hi, other.hi))

    __radd__ = __add__

    def __sub__(self, other: Dimension | int) -> Dimension:
        if not isinstance(other, Dimension):
            other = Dimension.static(other)
        return Dimension.from_bounds(
            _clip_minus(self.lo, other.hi), _clip_minus(self.hi, other.lo)
        )

    # -- identity and text -----------------------------------------------------------
    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Dimension is immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Dimension):
            return self.lo == other.lo and self.hi == other.hi
        if isinstance(other, int):
            return self.lo == self.hi == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.lo, self.hi))

    def __str__(self) -> str:
        lo, hi = self.lo, self.hi
        if lo == hi:
            return str(lo)
        if hi == INF:
            return f"{lo}.." if lo else "?"
        return f"{lo}..{hi}" if lo else f"..{hi}"

    def __repr__(self) -> str:
        return f"Dimension('{self}')"

    def __reduce__(self):  # pickling/copying keeps the interning
        return (Dimension.from_bounds, (self.lo, self.hi))


_STATIC_CACHE_SIZE = 4096
#: the static dims below the cache size, each made on first use (making all 4096 at
#: import cost every check ~3 ms)
_STATIC: list[Dimension | None] = [None] * _STATIC_CACHE_SIZE


def _interned(value: int) -> Dimension:
    made = _STATIC[value] = Dimension._make(value, value)
    return made

DYNAMIC = Dimension._make(0, INF)

ShapeLike = Union["PartialShape", str, Iterable[int | str | Dimension], None]


class PartialShape:
    """A shape whose rank or dims may be unknown. ``dims is None`` means dynamic rank.

    Build one from text (``PartialShape.parse``), from a list of ints/dims/texts
    (``PartialShape([2, -1, "2..5"])``), or with ``PartialShape.dynamic()``.
    """

    #: ``_hash``: set on first use (the walk's memo of rule answers hashes shapes a lot)
    __slots__ = ("dims", "_hash")

    dims: tuple[Dimension, ...] | None

    def __init__(self, dims: Iterable[int | str | Dimension] | None) -> None:
        if dims is None:
            object.__setattr__(self, "dims", None)
            return
        out = []
        for d in dims:
            if isinstance(d, Dimension):
                out.append(d)
            elif isinstance(d, int):
                out.append(DYNAMIC if d == -1 else Dimension.static(d))
            elif isinstance(d, str):
                out.append(Dimension.parse(d))
            else:
                raise ShapeParseError(f"a dimension is an int, a text or a Dimension, not {d!r}")
        object.__setattr__(self, "dims", tuple(out))

    @classmethod
    def of(cls, dims: tuple[Dimension, ...] | None) -> PartialShape:
        """Wrap a tuple of Dimension objects without copying or checking (for rules)."""
        self = object.__new__(cls)
        object.__setattr__(self, "dims", dims)
        return self

    @classmethod
    def dynamic(cls, rank: int | None = None) -> PartialShape:
        """Dynamic rank, or ``rank`` fully dynamic dims."""
        return cls.of(None if rank is None else (DYNAMIC,) * rank)

    @classmethod
    def parse(cls, text: str) -> PartialShape:
        """Parse OpenVINO's shape text: ``[2,?,4]``, ``2..5,?,4``, ``[...]``, ``[]``.

        A bare comma list (the Parameter ``shape`` attribute) and ``""`` (a scalar) are
        accepted, as are ``-1`` for ``?`` and spaces after commas.

        >>> PartialShape.parse("[1, -1, 3..]")
        PartialShape('[1,?,3..]')
        >>> PartialShape.parse("...").rank is None
        True
        """
        if not isinstance(text, str):
            raise ShapeParseError(f"a shape text is a string, not {type(text).__name__}")
        s = text.strip()
        if s.startswith("[") or s.endswith("]"):
            if not (s.startswith("[") and s.endswith("]")):
                raise ShapeParseError(f"unbalanced brackets in shape '{_cut(text)}'")
            s = s[1:-1].strip()
        if s == "...":
            return cls.of(None)
        if not s:
            return cls.of(())
        try:
            return cls.of(tuple(Dimension.parse(part) for part in s.split(",")))
        except ShapeParseError as err:
            raise ShapeParseError(f"{err.message} in shape '{_cut(text)}'") from None

    # -- queries -----------------------------------------------------------------
    @property
    def rank(self) -> int | None:
        """The number of dims, or ``None`` for dynamic rank."""
        return None if self.dims is None else len(self.dims)

    @property
    def is_static(self) -> bool:
        return self.dims is not None and all(d.lo == d.hi for d in self.dims)

    @property
    def is_dynamic_rank(self) -> bool:
        return self.dims is None

    def to_list(self) -> list[int]:
        """The static dims as ints; ValueError when the shape is not static."""
        if not self.is_static:
            raise ValueError(f"shape {self} is not static")
        return [d.lo for d in self.dims]  # type: ignore[union-attr]

    def to_ir_dims(self) -> list[int]:
        """The dims as an IR port writes them: static values, ``-1`` for anything else."""
        if self.dims is None:
            return []
        return [d.lo if d.lo == d.hi else -1 for d in self.dims]

    def compatible(self, other: PartialShape) -> bool:
        """OpenVINO's compatibility: dynamic rank fits all, else same rank and every
        pair of dims can be equal."""
        a, b = self.dims, other.dims
        if a is None or b is None:
            return True
        return len(a) == len(b) and all(x.compatible(y) for x, y in zip(a, b, strict=True))

    def merge(self, other: PartialShape) -> PartialShape | None:
        """The dim-wise intersection, or ``None`` when the shapes contradict."""
        a, b = self.dims, other.dims
        if a is None:
            return other
        if b is None:
            return self
        if len(a) != len(b):
            return None
        out = []
        for x, y in zip(a, b, strict=True):
            m = x.merge(y)
            if m is None:
                return None
            out.append(m)
        return PartialShape.of(tuple(out))

    # -- sequence protocol -----------------------------------------------------------
    def _known(self) -> tuple[Dimension, ...]:
        if self.dims is None:
            raise ValueError("a shape of dynamic rank has no dims")
        return self.dims

    def __len__(self) -> int:
        return len(self._known())

    def __iter__(self) -> Iterator[Dimension]:
        return iter(self._known())

    def __getitem__(self, index):
        dims = self._known()
        if isinstance(index, slice):
            return PartialShape.of(dims[index])
        return dims[index]

    def __add__(self, other: PartialShape) -> PartialShape:
        """Concatenation; dynamic rank when either side is."""
        if self.dims is None or other.dims is None:
            return PartialShape.of(None)
        return PartialShape.of(self.dims + other.dims)

    # -- identity and text -------------------------------------------------------------
    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("PartialShape is immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PartialShape):
            return self.dims == other.dims
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            found = hash(self.dims)
            object.__setattr__(self, "_hash", found)
            return found

    def __str__(self) -> str:
        if self.dims is None:
            return "[...]"
        return "[" + ",".join([str(d) for d in self.dims]) + "]"

    def __repr__(self) -> str:
        return f"PartialShape('{self}')"

    def __reduce__(self):
        return (PartialShape.of, (self.dims,))


def as_partial_shape(value: ShapeLike) -> PartialShape:
    """Accept a PartialShape, its text, or a list of ints/dims/texts; ``None`` → ``[...]``.

    >>> as_partial_shape("[2,3]") == as_partial_shape([2, 3])
    True
    """
    if isinstance(value, PartialShape):
        return value
    if value is None:
        return PartialShape.of(None)
    if isinstance(value, str):
        return PartialShape.parse(value)
    return PartialShape(value)


#: The shape of unknown rank, ``[...]`` (shared: PartialShape is immutable).
DYNAMIC_RANK = PartialShape.of(None)


def normalize_axis(axis: int, rank: int) -> int | None:
    """``axis`` counted from the front, or None when it lies outside ``[-rank, rank-1]``.

    A scalar (rank 0) accepts the axes -1 and 0, as OpenVINO's normalize_axis does.

    >>> normalize_axis(-1, 3), normalize_axis(3, 3), normalize_axis(-1, 0)
    (2, None, 0)
    """
    size = rank if rank > 0 else 1
    if -size <= axis < size:
        return axis + size if axis < 0 else axis
    return None
