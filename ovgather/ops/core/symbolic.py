"""Symbolic dims: integer expressions in the names a user gives a model's input dims.

``infer --symbols`` writes each output dim as an expression in the input dims' names
(``P+S``, ``B*S``, ``(H+1)//2``). An :class:`Expr` is an integer polynomial in a
canonical form (sorted monomials with integer coefficients) whose atoms are names and
*opaque* terms for what a polynomial cannot hold (``//``, ``%``, ``min``, ``max``), so that
two equal expressions reached by different paths print identically (a ``//`` by a number
keeps a remainder in ``[0, d)`` inside, so ``(H-1)//2+1`` prints ``(H+1)//2``):

>>> B, S, P = name("B"), name("S"), name("P")
>>> str(S + P), str(P + S), str((B * S) // S), str(B * (S + 1) - B)
('P+S', 'P+S', 'B', 'B*S')
>>> str((S + 2 * 1 - 3) // 2 + 1), str(minimum(S, S + 1)), str((4 * S + 2) % 4)
('(S+1)//2', 'S', '2')
>>> str(((S - 10) // 5 - 2) // 2), str((S - 40) // 20 + 1)
('S//10-2', 'S//20-1')
>>> (S * 2 - S - S).const, ((B + 7) // 2).evaluate({"B": 9})
(0, 8)

A :class:`Sym` is what a symbolic op rule sees of one tensor: its dims as expressions
(None for a dynamic rank) and, for small integer tensors (shape values), its elements as
expressions. A :class:`Facts` is the walk's side of a rule: what OpenVINO's own numeric
rules found (``inputs``, ``outputs``), the op type, and :meth:`Facts.equal` to record two
dims that the op's rules require to be equal. Rules live in the op files (``OpSpec.symbolic``);
``infer/symbols.py`` walks the graph. Nothing here knows XML, networkx or openvino.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import product as _pairs

from ..._lazy import numpy as np

__all__ = ["Expr", "Sym", "Facts", "name", "const", "minimum", "maximum", "FRESH",
           "broadcast", "elementwise", "window", "dims_product", "VALUE_FUNCTIONS", "FOLDS",
           "EXACT_TYPES", "exact_quotient", "moved", "MAX_VALUE"]

#: Fresh names start with this mark inside the walk (printed ``d1``, ``d2`` … at the end).
FRESH = "?"
#: Integer tensors up to this many elements carry their elements as expressions.
MAX_VALUE = 64


class Expr:
    """An integer polynomial: ``terms`` maps a monomial (a sorted tuple of ``(atom,
    power)``) to its coefficient; the empty monomial is the constant. An atom is
    ``("n", name)`` or ``(op, Expr, …)`` for an opaque ``//``, ``%``, ``min``, ``max``."""

    __slots__ = ("terms", "_key")

    def __init__(self, terms: Mapping[tuple, int]) -> None:
        self.terms = {m: c for m, c in terms.items() if c}
        self._key = tuple(sorted(self.terms.items(), key=_term_key))

    # -- identity ---------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Expr({self})"

    @property
    def const(self) -> int | None:
        """The integer when the expression is one, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and () in self.terms:
            return self.terms[()]
        return None

    @property
    def atom(self) -> tuple | None:
        """The atom when the expression is exactly one atom (``S``, ``x//2``), else None."""
        if len(self.terms) == 1:
            (mono, coef), = self.terms.items()
            if coef == 1 and len(mono) == 1 and mono[0][1] == 1:
                return mono[0][0]
        return None

    def names(self) -> set[str]:
        """Every name the expression uses, also inside opaque terms."""
        found: set[str] = set()
        for mono in self.terms:
            for atom, _ in mono:
                if atom[0] == "n":
                    found.add(atom[1])
                else:
                    for arg in atom[1:]:
                        found |= arg.names()
        return found

    # -- arithmetic -------------------------------------------------------------------
    def __add__(self, other: Expr | int) -> Expr:
        other = _expr(other)
        terms = dict(self.terms)
        for m, c in other.terms.items():
            terms[m] = terms.get(m, 0) + c
        return Expr(terms)

    __radd__ = __add__

    def __neg__(self) -> Expr:
        return Expr({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: Expr | int) -> Expr:
        return self + (-_expr(other))

    def __rsub__(self, other: int) -> Expr:
        return _expr(other) - self

    def __mul__(self, other: Expr | int) -> Expr:
        other = _expr(other)
        terms: dict[tuple, int] = {}
        for (m1, c1), (m2, c2) in _pairs(self.terms.items(), other.terms.items()):
            m = _mono_mul(m1, m2)
            terms[m] = terms.get(m, 0) + c1 * c2
        return Expr(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other: Expr | int) -> Expr:
        other = _expr(other)
        d = other.const
        if d is not None:
            if d == 0:
                raise ZeroDivisionError("a symbolic dim divided by 0")
            if d < 0:
                return (-self) // (-d)
            whole = Expr({m: c // d for m, c in self.terms.items()})
            rest = self - whole * d  # every coefficient in [0, d)
            if rest.const is not None:
                return whole
            if d == 1:
                return self
            inner = _nested(rest)
            if inner is not None:  # (P//a + c)//d == (P + c*a)//(a*d)
                (p, a), c = inner
                return whole + (p + c * a) // (a * d)
            return whole + _opaque("//", rest, other)
        quotient = _divide_exactly(self, other)
        if quotient is not None:
            return quotient
        return _opaque("//", self, other)

    def __mod__(self, other: Expr | int) -> Expr:
        other = _expr(other)
        d = other.const
        if d is not None and d > 0:
            rest = Expr({m: c % d for m, c in self.terms.items()})
            if rest.const is not None:
                return const(rest.const % d)
            return _opaque("%", rest, other)
        if _divide_exactly(self, other) is not None:
            return const(0)
        return _opaque("%", self, other)

    # -- reading ----------------------------------------------------------------------
    def evaluate(self, env: Mapping[str, int]) -> int:
        """The integer the expression takes with the names set to ``env`` (KeyError when
        one is missing)."""
        total = 0
        for mono, coef in self.terms.items():
            value = coef
            for atom, power in mono:
                value *= _atom_value(atom, env) ** power
            total += value
        return total

    def substitute(self, atoms: Callable[[tuple], Expr | None]) -> Expr:
        """The expression with every atom ``a`` for which ``atoms(a)`` gives an expression
        replaced by it (opaque terms are rebuilt, so they simplify again)."""
        total = const(0)
        for mono, coef in self.terms.items():
            value = const(coef)
            for atom, power in mono:
                new = atoms(atom)
                if new is None:
                    new = _atom_expr(atom) if atom[0] == "n" else _rebuild(atom, atoms)
                for _ in range(power):
                    value = value * new
            total = total + value
        return total

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        text = ""
        for mono, coef in sorted(self.terms.items(), key=_print_key):
            mag = abs(coef)
            # a ``//`` or ``%`` term alone reads as Python reads it; beside a factor, or
            # after a leading minus, it needs brackets: ``21*(H+31)//32`` is not
            # ``21*((H+31)//32)``
            alone = len(mono) == 1 and mag == 1 and not (coef < 0 and not text)
            body = "*".join(_atom_text(a, p, alone) for a, p in mono)
            part = body if mono and mag == 1 else (f"{mag}*{body}" if mono else str(mag))
            sign = "-" if coef < 0 else "+"
            text += (sign if text or coef < 0 else "") + part
        return text


# -- building ------------------------------------------------------------------------
def name(text: str) -> Expr:
    """The expression that is one name."""
    return Expr({((("n", text), 1),): 1})


def const(value: int) -> Expr:
    return Expr({(): int(value)})


def minimum(*args: Expr | int) -> Expr:
    return _extremum("min", args)


def maximum(*args: Expr | int) -> Expr:
    return _extremum("max", args)


def _extremum(op: str, args) -> Expr:
    flat: list[Expr] = []
    for arg in map(_expr, args):
        atom = arg.atom
        flat.extend(atom[1:] if atom is not None and atom[0] == op else (arg,))
    pick = min if op == "min" else max
    kept: list[Expr] = []
    for arg in flat:  # drop what a constant difference decides
        for i, other in enumerate(kept):
            gap = (arg - other).const
            if gap is not None:
                kept[i] = arg if pick(gap, 0) == gap and gap != 0 else other
                break
        else:
            kept.append(arg)
    if len(kept) == 1:
        return kept[0]
    return Expr({(((op, *sorted(kept, key=_expr_key)), 1),): 1})


def _opaque(op: str, a: Expr, b: Expr) -> Expr:
    return Expr({(((op, a, b), 1),): 1})


def _expr(value: Expr | int) -> Expr:
    return value if isinstance(value, Expr) else const(value)


def _atom_expr(atom: tuple) -> Expr:
    return Expr({((atom, 1),): 1})


def _rebuild(atom: tuple, atoms) -> Expr:
    args = [a.substitute(atoms) for a in atom[1:]]
    if atom[0] == "//":
        return args[0] // args[1]
    if atom[0] == "%":
        return args[0] % args[1]
    return _extremum(atom[0], args)


def _mono_mul(m1: tuple, m2: tuple) -> tuple:
    powers = dict(m1)
    for atom, p in m2:
        powers[atom] = powers.get(atom, 0) + p
    return tuple(sorted(powers.items(), key=lambda ap: _atom_key(ap[0])))


def _nested(e: Expr) -> tuple[tuple[Expr, int], int] | None:
    """``((P, a), c)`` when ``e`` is ``P//a + c`` for a number ``a``, else None."""
    c = e.terms.get((), 0)
    atom = (e - c).atom
    if atom is None or atom[0] != "//" or atom[2].const is None:
        return None
    return (atom[1], atom[2].const), c


def _divide_exactly(a: Expr, b: Expr) -> Expr | None:
    """``a / b`` when ``b`` is one monomial that divides every term of ``a``, or when
    ``a`` is a constant multiple of ``b``, else None."""
    if len(b.terms) == 1:
        (bm, bc), = b.terms.items()
        bp = dict(bm)
        out = {}
        for m, c in a.terms.items():
            mp = dict(m)
            if c % bc or any(mp.get(atom, 0) < p for atom, p in bp.items()):
                return None
            rest = tuple((atom, p - bp.get(atom, 0)) for atom, p in m if p > bp.get(atom, 0))
            out[rest] = c // bc
        return Expr(out)
    for k in range(1, 65):  # a = k * b for a small k
        if a == b * k:
            return const(k)
    return None


def _atom_value(atom: tuple, env: Mapping[str, int]) -> int:
    if atom[0] == "n":
        return env[atom[1]]
    args = [a.evaluate(env) for a in atom[1:]]
    if atom[0] == "//":
        return args[0] // args[1]
    if atom[0] == "%":
        return args[0] % args[1]
    return min(args) if atom[0] == "min" else max(args)


# -- order and text ------------------------------------------------------------------
def _atom_key(atom: tuple) -> tuple:
    if atom[0] == "n":
        return (0, atom[1])
    return (1, atom[0], tuple(_expr_key(a) for a in atom[1:]))


def _expr_key(e: Expr) -> tuple:
    return e._key.__repr__(), 0  # a total order that needs no mixed-type comparison


def _term_key(term: tuple) -> tuple:
    mono, _ = term
    return tuple(((_atom_key(a)), p) for a, p in mono).__repr__(), 0


def _print_key(term: tuple) -> tuple:
    """Higher degree first, names in order, the constant last."""
    mono, _ = term
    degree = sum(p for _, p in mono)
    return (not mono, -degree, [(_atom_key(a), p) for a, p in mono].__repr__())


def _atom_text(atom: tuple, power: int, alone: bool = True) -> str:
    if atom[0] == "n":
        text = atom[1]
    elif atom[0] in ("min", "max"):
        text = f"{atom[0]}({','.join(str(a) for a in atom[1:])})"
    else:
        a, b = atom[1:]
        text = f"{_grouped(a)}{atom[0]}{_grouped(b)}"
        if power > 1 or not alone:
            text = f"({text})"
    return "*".join([text] * power)


def _grouped(e: Expr) -> str:
    """``e`` as an operand of ``//`` or ``%``: a name or a number bare, else in brackets."""
    if e.const is not None and e.const >= 0:
        return str(e.const)
    atom = e.atom
    if atom is not None and (atom[0] == "n" or atom[0] in ("min", "max")):
        return str(e)
    return f"({e})"


# -- tensors -------------------------------------------------------------------------
class Sym:
    """One tensor as the symbolic walk sees it: ``dims`` (expressions, None for a
    dynamic rank) and ``value`` (the elements of a small integer tensor, row-major, as
    expressions; None when not tracked)."""

    __slots__ = ("dims", "value")

    def __init__(self, dims: Sequence[Expr] | None, value: Sequence[Expr] | None = None
                 ) -> None:
        self.dims = None if dims is None else tuple(dims)
        self.value = None if value is None else tuple(value)

    def __str__(self) -> str:
        return "[...]" if self.dims is None else f"[{','.join(map(str, self.dims))}]"

    def __repr__(self) -> str:
        return f"Sym({self}, {None if self.value is None else list(map(str, self.value))})"


class Facts:
    """What a symbolic rule may ask of the walk: ``op`` (the layer's op type), ``inputs``
    and ``outputs`` (the numeric ``values.Tensor`` objects the shape walk computed), and
    :meth:`equal` / :meth:`fresh` served by the walk's union-find."""

    def __init__(self, op: str, inputs: list, outputs: list, equal: Callable, fresh: Callable
                 ) -> None:
        self.op, self.inputs, self.outputs = op, inputs, outputs
        self._equal, self._fresh = equal, fresh

    def equal(self, a: Expr, b: Expr) -> Expr:
        """Record that the op's rules require ``a == b``; returns the one to use."""
        return self._equal(a, b)

    def fresh(self) -> Expr:
        """A new name for a dim nothing proves."""
        return self._fresh()


# -- helpers op files share ----------------------------------------------------------
def dims_product(dims: Sequence[Expr]) -> Expr:
    total = const(1)
    for d in dims:
        total = total * d
    return total


def broadcast(a: Expr, b: Expr, facts: Facts) -> Expr:
    """One output dim of NumPy broadcasting: a 1 takes the other side, equal sides stay;
    two different expressions are never assumed equal (a fresh name), unless the
    numeric rules fixed the output (the walk then puts the number in), or one side is a
    multiple of the other (:func:`_multiple`).

    >>> B, S = name("B"), name("S")
    >>> str(broadcast(S, B * S, None)), str(broadcast(B * S * 2, S, None))
    ('B*S', '2*B*S')
    """
    if a == b or b.const == 1 or _at_most(b, a) or _one_or(b, a):
        return a
    if a.const == 1 or _at_most(a, b) or _one_or(a, b):
        return b
    if a.const is not None and b.const is None:
        return a
    if b.const is not None and a.const is None:
        return b
    if _multiple(b, a):
        return b
    if _multiple(a, b):
        return a
    return facts.fresh()


def _multiple(a: Expr, b: Expr) -> bool:
    """``a`` is ``k*b`` for an integer ``k``: broadcast with ``b`` it is ``a`` at every
    size where the two broadcast (equal; ``b`` of 1, so ``a`` is ``k``; or ``a`` of 1,
    which ``k*b`` with ``b >= 0`` is only at ``k == b == 1``). An ONNX export that fixed
    the batch at 1 adds ``[N,S,C]`` to ``[1,N*S,C]``: it runs at ``N == 1``, giving
    ``N*S`` there."""
    return b.const != 0 and exact_quotient(a, b) is not None


def window(d: Expr, kernel: int, stride: int, dilation: int, pads: tuple[int, int],
           mode: str, ceil: bool = False) -> Expr:
    """A Convolution or Pool output dim: ``(D+pb+pe-k)//s+1`` with ``k`` the dilated kernel
    (rounded up for ``ceil``), ``ceil(D/s)`` for the ``same_*`` pads, no pads for
    ``valid``.

    >>> str(window(name("H"), 3, 2, 1, (1, 1), "explicit")), str(window(name("H"), 4, 4, 1,
    ...     (0, 0), "same_upper"))
    ('(H+1)//2', '(H+3)//4')
    """
    if mode in ("same_upper", "same_lower"):
        return (d + stride - 1) // stride
    pb, pe = (0, 0) if mode == "valid" else pads
    span = d + pb + pe - (dilation * (kernel - 1) + 1) + (stride - 1 if ceil else 0)
    return span // stride + 1


def moved(x: Sym, fn: Callable) -> list | None:
    """The elements of ``x``'s value (static dims) after ``fn``, a NumPy rearrangement
    (a transpose, a slice) applied to the array of their positions: a data-movement op's
    value without knowing the elements' numbers.

    >>> [str(e) for e in moved(Sym([const(2), const(2)], [name("B"), const(1), name("S"),
    ...     const(0)]), lambda a: a.T[::-1])]
    ['1', '0', 'B', 'S']
    """
    if x.value is None or x.dims is None or any(d.const is None for d in x.dims):
        return None
    shape = [d.const for d in x.dims]
    if int(np.prod(shape)) != len(x.value):
        return None
    picks = np.asarray(fn(np.arange(len(x.value)).reshape(shape)))
    return [x.value[i] for i in picks.reshape(-1)]


def _one_or(a: Expr, b: Expr) -> bool:
    """``a`` is ``max(b, 1)`` (or ``max(b, 0)``): ``b`` when ``b >= 1``, else 1 against a
    ``b`` of 0; broadcast with ``b`` it is ``b`` either way."""
    atom = a.atom
    return atom is not None and atom[0] == "max" and len(atom) == 3 and b in atom[1:] \
        and all(x == b or x.const in (0, 1) for x in atom[1:])


def _at_most(a: Expr, b: Expr) -> bool:
    """``a`` is ``min(b, …)``: broadcast with ``b`` it is ``b`` or 1 (and then so is ``b``)."""
    atom = a.atom
    return atom is not None and atom[0] == "min" and b in atom[1:]


def elementwise(ins: list[Sym], facts: Facts, fn: Callable | None = None,
                broadcasting: bool = True) -> list[Sym] | None:
    """An elementwise op: the inputs' dims broadcast (NumPy style; without
    ``broadcasting`` the output is the first input's) and, with ``fn``, each element of a
    small value computed from the inputs' elements (None where ``fn`` gives None)."""
    ranked = [s.dims for s in ins] if broadcasting else [ins[0].dims]
    if any(d is None for d in ranked):
        return None
    n = max(len(d) for d in ranked)
    out = [const(1)] * n
    for dims in ranked:
        padded = [const(1)] * (n - len(dims)) + list(dims)
        out = [broadcast(a, b, facts) for a, b in zip(out, padded, strict=True)]
    value = None
    values = [s.value for s in ins] if fn is not None else [None]
    if None not in values:
        size = max(len(v) for v in values)
        if all(len(v) in (1, size) for v in values):
            args = [[v[i if len(v) > 1 else 0] for v in values] for i in range(size)]
            value = [None if None in a else fn(*a) for a in args]
    return [Sym(out, value)]


def _nonnegative(e: Expr) -> bool:
    """Sums and products of dims (names) with coefficients >= 0, so never below 0."""
    return all(c >= 0 for c in e.terms.values()) and all(
        atom[0] == "n" or all(map(_nonnegative, atom[1:])) for mono in e.terms for atom, _ in mono)


def _sign(e: Expr) -> tuple[int, int] | None:
    """``(lo, hi)`` among -1, 0, 1: the signs ``e`` may take, its names being dims (never
    below 0). A number has one sign; ``B+1`` is positive, ``-S`` at most 0; None when
    nothing is known."""
    if e.const is not None:
        return (e.const > 0) - (e.const < 0), (e.const > 0) - (e.const < 0)
    c = e.terms.get((), 0)
    if _nonnegative(e - c):  # e >= c
        return (1, 1) if c > 0 else (0, 1) if c == 0 else None
    if _nonnegative(c - e):  # e <= c
        return (-1, -1) if c < 0 else (-1, 0) if c == 0 else None
    return None


def _decided(test):
    """A comparison of two expressions decided by the sign their difference must have
    (``B == -1`` is false for a dim ``B``), else None."""
    def compare(a: Expr, b: Expr) -> Expr | None:
        sign = _sign(a - b)
        if sign is None:
            return None
        answers = {test(s) for s in range(sign[0], sign[1] + 1)}
        return const(int(answers.pop())) if len(answers) == 1 else None
    return compare


#: The integer arithmetic of elementwise ops on expressions (shape values), by op type.
VALUE_FUNCTIONS = {
    "Add": lambda a, b: a + b, "Subtract": lambda a, b: a - b, "Multiply": lambda a, b: a * b,
    "FloorMod": lambda a, b: a % b, "Maximum": maximum, "Minimum": minimum,
    "Equal": _decided(lambda d: d == 0), "NotEqual": _decided(lambda d: d != 0),
    "Less": _decided(lambda d: d < 0), "LessEqual": _decided(lambda d: d <= 0),
    "Greater": _decided(lambda d: d > 0), "GreaterEqual": _decided(lambda d: d >= 0),
    "Relu": lambda a: maximum(a, 0), "Negative": lambda a: -a,
    "Abs": lambda a: a if _nonnegative(a) else None,
    "IsNaN": lambda a: const(0), "IsInf": lambda a: const(0), "IsFinite": lambda a: const(1),
    **dict.fromkeys(("Convert", "ConvertLike", "Floor", "Ceiling", "Round"), lambda a, *_: a),
}


#: The element types that hold every shape value a model meets exactly (f32 up to 2**24).
EXACT_TYPES = ("i32", "i64", "u32", "u64", "f32", "f64")

#: Reductions of a 1-D shape value, by op type (``ReduceProd`` of a shape: the element count).
FOLDS = {"ReduceSum": lambda v: sum(v, const(0)), "ReduceProd": dims_product,
         "ReduceMax": lambda v: maximum(*v), "ReduceMin": lambda v: minimum(*v)}


def exact_quotient(a: Expr, b: Expr) -> Expr | None:
    """``a / b`` of real-valued tensors that hold integers: only an exact quotient."""
    q = a // b
    return q if q * b == a else None
