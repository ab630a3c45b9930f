"""Output dims written in the names a user gives input dims (``infer --symbols``).

``infer`` prints ``[?,?,768]`` for a dynamic model: hundreds of ``?`` that are really a
handful of quantities (the batch, the sequence, the cache plus the sequence). This walk
runs *after* the numeric one (:func:`~ovgather.infer.walk.all_tensors`, which stays the
source of truth) and writes each dim as an expression in the names: the op files' symbolic
rules (``OpSpec.symbolic``, ``ops/core/symbolic.py``) carry dims and the values of small
integer tensors (``ShapeOf → Gather → Concat → Reshape``) as expressions.

A dim no rule proves gets a fresh name, kept in a union-find: two fresh names (or a fresh
name and an expression) that an op's rules require to be equal (a Concat's other dims,
MatMul's inner dims, same-shape elementwise inputs) become one, so the cache a ReadValue
gives has the batch ``B`` once it meets the new keys in a Concat. Fresh names print as
``d1``, ``d2`` … in the order they first appear. A dim the numeric walk finds static is that
number (a symbolic rule never overrides OpenVINO's rules).

>>> import networkx as nx
>>> G = nx.MultiDiGraph()
>>> G.add_node("0", name="x", type="Parameter", version="opset1", data={"shape": "?,?",
...     "element_type": "f32"}, inputs=[], outputs=[{"id": 0, "dims": (-1, -1)}], line=3)
>>> G.add_node("2", name="p", type="Const", version="opset1", data={"shape": "2",
...     "element_type": "i64"}, value=__import__("numpy").array([1, 0]), inputs=[],
...     outputs=[{"id": 0, "dims": (2,)}], line=5)
>>> G.add_node("1", name="t", type="Transpose", version="opset1", data={},
...     inputs=[{"id": 0, "dims": (-1, -1)}, {"id": 1, "dims": (2,)}],
...     outputs=[{"id": 2, "dims": (-1, -1)}], line=9)
>>> _ = G.add_edge("0", "1", key=(0, 0), from_port=0, to_port=0)
>>> _ = G.add_edge("2", "1", key=(0, 1), from_port=0, to_port=1)
>>> {k: [str(s) for s in v] for k, v in infer_symbols(G, {"x": "[B,S]"}).items()}
{'0': ['[B,S]'], '2': ['[2]'], '1': ['[S,B]']}
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .._lazy import networkx as nx
from ..element_types import INT_TYPES
from ..errors import ShapeError, UsageError
from ..ops.core import registry
from ..ops.core.spec import Attrs, openvino_type
from ..ops.core.symbolic import FRESH, MAX_VALUE, Expr, Facts, Sym, const, name
from ..shapes import INF, ShapeLike
from .inputs import tensors_reaching
from .walk import _topological_order, all_tensors, override_targets, unknown_key

__all__ = ["infer_symbols", "input_dim_constraints", "parse_symbols", "SYMBOL_NAME",
           "STATE_KEY"]

#: A name a user may give a dim: a letter, then letters, digits or ``_``.
SYMBOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
#: The name :func:`input_dim_constraints` gives a state's dims: ``STATE_KEY + variable_id``.
STATE_KEY = "ReadValue "
#: Integer tensors up to this many elements carry their elements as expressions.
MAX_SYMBOLIC_VALUE = MAX_VALUE


def parse_symbols(text: str) -> list[str | int | None]:
    """One SPEC shape, ``[B,S]`` or ``B,S``: a name, an integer or ``?`` (None) per dim.

    >>> parse_symbols("[B, 4, ?]")
    ['B', 4, None]
    >>> parse_symbols("[B,2x]")
    Traceback (most recent call last):
    ...
    ovgather.errors.UsageError: a symbolic dim is a name (a letter, then letters, digits or _), \
an integer or ?, but got '2x' in '[B,2x]'
    """
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    if not body.strip():
        return []
    dims: list[str | int | None] = []
    for part in (p.strip() for p in body.split(",")):
        if part == "?":
            dims.append(None)
        elif part.isascii() and part.isdigit() and len(part) < 19:
            dims.append(int(part))
        elif SYMBOL_NAME.match(part):
            dims.append(part)
        else:
            raise UsageError(f"a symbolic dim is a name (a letter, then letters, digits or _), "
                             f"an integer or ?, but got '{part}' in '{text}'")
    return dims


def infer_symbols(G: nx.MultiDiGraph, symbols: Mapping[str, str | Sequence],
                  shapes: Mapping[str, ShapeLike] | None = None) -> dict[str, list[Sym]]:
    """Every top-level layer's output dims as expressions, one :class:`Sym` per output
    port (``str()`` gives ``[B,4,P+S,8]``), keyed by node id.

    ``symbols`` names input dims: keys are a Parameter's friendly or tensor name or a
    ReadValue's ``variable_id``, values shape text (``"[B,S]"``) or a list of names,
    integers and None. An unknown key, a bad name or a rank that differs from the
    input's is a UsageError. ``shapes``: Parameter and state shape overrides, as
    :func:`check` takes them (the numeric walk the expressions agree with starts from
    them).
    """
    return _SymbolWalk(G, symbols).run(shapes)


def input_dim_constraints(G: nx.MultiDiGraph, shapes: Mapping[str, ShapeLike] | None = None
                          ) -> dict[tuple[str, int], Expr]:
    """What the model's own rules say of its dynamic input dims: ``(Parameter name, axis)``
    -> an expression in the free dims, each a name ``"Parameter name:axis"``.

    Every dynamic dim starts as a fresh name, so the walk's union-find binds the dims the
    rules require equal (merged batch dims, a Concat's other dims, MatMul's inner dims,
    elementwise inputs) to one another or to a number. A dim bound to nothing maps to its
    own name; two bound to each other map to one name; a dim a static one fixes maps to
    that number. A ReadValue without an initializer input (what ``MakeStateful`` leaves)
    is an input too, keyed ``STATE_KEY + variable_id``: its cache's batch is tied to the
    batch of the new keys it meets in a Concat.

    >>> import networkx as nx
    >>> G = nx.MultiDiGraph()
    >>> for i, (n, s) in enumerate([("a", "?,4"), ("b", "3,?")]):
    ...     _ = G.add_node(str(i), name=n, type="Parameter", version="opset1",
    ...         data={"shape": s, "element_type": "f32"}, inputs=[],
    ...         outputs=[{"id": 0, "dims": tuple(-1 if x == "?" else int(x) for x in
    ...                                          s.split(","))}], line=i)
    >>> _ = G.add_node("2", name="cat", type="Concat", version="opset1", data={"axis": "0"},
    ...     inputs=[{"id": 0, "dims": (-1, 4)}, {"id": 1, "dims": (3, -1)}],
    ...     outputs=[{"id": 2, "dims": (-1, 4)}], line=9)
    >>> _ = G.add_edge("0", "2", key=(0, 0), from_port=0, to_port=0)
    >>> _ = G.add_edge("1", "2", key=(0, 1), from_port=0, to_port=1)
    >>> {k: str(v) for k, v in input_dim_constraints(G).items()}
    {('a', 0): 'a:0', ('b', 1): '4'}
    """
    walk = _SymbolWalk(G, {})
    walk.run(shapes, fresh_inputs=True)
    out: dict[tuple[str, int], Expr] = {}
    names: dict[tuple, Expr] = {}

    def rename(atom: tuple) -> Expr | None:
        return names.get(atom)

    for (param, axis), atom in walk.input_atoms.items():
        names[atom] = name(f"{param}:{axis}")
    for (param, axis), atom in walk.input_atoms.items():
        out[(param, axis)] = walk.resolve(name(atom[1])).substitute(rename)
    return out


class _SymbolWalk:
    def __init__(self, G: nx.MultiDiGraph, symbols: Mapping[str, str | Sequence]) -> None:
        self.G = G
        self.path = G.graph.get("xml_path") or G.graph.get("source_path")
        # ("Parameter", node id) or ("ReadValue", variable_id) a key names -> the key: two
        # namespaces, so a variable_id "0" never names the Parameter whose layer id is "0"
        self.keys: dict[tuple[str, str], str] = {}
        self.given = self._bind(symbols)
        self.bound: dict[tuple, Expr] = {}  # fresh atom -> what it equals
        self.count = 0
        self.fresh_inputs = False  # every dynamic input dim a fresh name (constraints)
        self.input_atoms: dict[tuple[str, int], tuple] = {}  # (Parameter, axis) -> atom

    # -- union-find ---------------------------------------------------------------------
    def fresh(self) -> Expr:
        self.count += 1
        return name(f"{FRESH}{self.count}")

    def resolve(self, e: Expr) -> Expr:
        if not any(atom[0] == "n" and atom[1].startswith(FRESH) and atom in self.bound
                   for atom in _atoms(e)):
            return e
        return e.substitute(self._bound_atom)

    def _bound_atom(self, atom: tuple) -> Expr | None:
        target = self.bound.get(atom)
        if target is None:
            return None
        target = self.resolve(target)
        self.bound[atom] = target  # path compression
        return target

    def equal(self, a: Expr, b: Expr) -> Expr:
        a, b = self.resolve(a), self.resolve(b)
        if a == b:
            return a
        solved = _solve(a - b)
        if solved is not None:  # a fresh name that a - b == 0 fixes: P+S == S+d4 is d4 = P
            atom, value = solved
            self.bound[atom] = value
            return self.resolve(a)
        return a  # two different proved expressions: the rules say they are equal, but
        # nothing here can prove which is meant; keep the first

    # -- the walk -----------------------------------------------------------------------
    def run(self, shapes: Mapping[str, ShapeLike] | None = None,
            fresh_inputs: bool = False) -> dict[str, list[Sym]]:
        G = self.G
        self.fresh_inputs = fresh_inputs
        tensors = all_tensors(G, shapes)
        syms: dict[str, dict[int, Sym]] = {}
        for node in _topological_order(G):
            attrs = G._node[node]
            numeric = [tensors[node].get(p["id"]) for p in attrs["outputs"]]
            try:
                found = self._layer(node, attrs, numeric, syms, tensors)
            except (ShapeError, ArithmeticError, IndexError, KeyError, TypeError, ValueError):
                found = None  # a rule that cannot follow this layer: fresh names
            syms[node] = {p["id"]: self._settle(found[i] if found and i < len(found) else None,
                                                t)
                          for i, (p, t) in enumerate(zip(attrs["outputs"], numeric,
                                                         strict=True))}
        return self._named(G, syms)

    def _layer(self, node, attrs, numeric, syms, tensors) -> list[Sym] | None:
        kind = openvino_type(attrs["type"]) or attrs["type"]
        data = attrs.get("data") or {}
        if kind == "Parameter":
            if self.fresh_inputs:
                return [self._fresh_input(attrs["name"], numeric[0])]
            return [self._given(("Parameter", node), numeric[0])]
        if self.fresh_inputs and kind == "ReadValue" and not self.G._pred[node] \
                and data.get("variable_id"):  # a state with no initializer: free dims too
            return [self._fresh_input(STATE_KEY + data["variable_id"], numeric[0])]
        if kind == "ReadValue" and ("ReadValue", data.get("variable_id")) in self.given:
            return [self._given(("ReadValue", data["variable_id"]), numeric[0])]
        spec = registry.find(attrs["type"], attrs.get("version")) if kind != "Constant" else None
        if spec is None or spec.symbolic is None:
            return None
        preds = self.G._pred[node]
        ins = tensors_reaching(attrs, preds, syms)
        ins = [Sym(None if s.dims is None else map(self.resolve, s.dims),
                   None if s.value is None else
                   [None if v is None else self.resolve(v) for v in s.value]) for s in ins]
        facts = Facts(kind, tensors_reaching(attrs, preds, tensors), numeric, self.equal,
                      self.fresh)
        return spec.symbolic(ins, Attrs.of(data, spec.version, len(attrs["outputs"])), facts)

    def _given(self, key: tuple[str, str], t) -> Sym:
        dims = self.given.get(key)
        if dims is None or t is None or t.shape.dims is None:
            return Sym(None)
        if len(dims) != len(t.shape.dims):
            raise UsageError(f"the symbols must give '{self.keys[key]}' one dim per dim of its "
                             f"shape {t.shape}, but got {len(dims)}", file=self.path)
        return Sym([const(d) if isinstance(d, int) else None if d is None else name(d)
                    for d in dims])

    def _fresh_input(self, param: str, t) -> Sym:
        """A Parameter whose every dynamic dim is a fresh name, noted by axis."""
        if t is None or t.shape.dims is None:
            return Sym(None)
        dims = []
        for axis, d in enumerate(t.shape.dims):
            if d.lo == d.hi:
                dims.append(const(d.lo))
            else:
                dims.append(self.fresh())
                self.input_atoms[(param, axis)] = dims[-1].atom
        return Sym(dims)

    def _settle(self, found: Sym | None, t) -> Sym:
        """The rule's answer made to agree with the numeric tensor ``t``: a static dim
        is its number, a missing dim a fresh name; an exact value its numbers."""
        if t is None or t.shape.dims is None:
            return Sym(None)
        dims = list(found.dims) if found is not None and found.dims is not None \
            and len(found.dims) == len(t.shape.dims) else [None] * len(t.shape.dims)
        for i, (d, n) in enumerate(zip(dims, t.shape.dims, strict=True)):
            if n.lo == n.hi:
                if d is not None:
                    self.equal(d, const(n.lo))
                dims[i] = const(n.lo)
            elif d is None or (d.const is not None and not n.lo <= d.const <= n.hi):
                dims[i] = self.fresh()  # unproved, or a number the numeric walk excludes
        return Sym(dims, self._value(found, t))

    def _value(self, found: Sym | None, t) -> list | None:
        """The elements: the numbers the numeric walk knows exactly (integral ones, also
        of a real-valued tensor), else the rule's expressions."""
        v = t.value if t.etype in INT_TYPES or t.const else None
        guess = found.value if found is not None else None
        length = len(v[0]) if v is not None else len(guess) if guess is not None else 0
        if not length or length > MAX_SYMBOLIC_VALUE or _static_size(t.shape) != length:
            return None
        out = list(guess) if guess is not None and len(guess) == length else [None] * length
        for i, (lo, hi) in enumerate(zip(*v, strict=True) if v is not None else ()):
            if lo == hi and float(lo).is_integer() and (t.const or abs(lo) < INF):
                out[i] = const(int(lo))
        return out if any(x is not None for x in out) else None

    # -- names ------------------------------------------------------------------------
    def _bind(self, symbols: Mapping[str, str | Sequence]) -> dict[tuple[str, str], list]:
        """The given dims by ``("Parameter", node id)`` or ``("ReadValue", variable_id)``;
        a key that is both a Parameter's name and a variable_id names the Parameter."""
        parameters, states = override_targets(self.G)
        given: dict[tuple[str, str], list] = {}
        for key, dims in symbols.items():
            if key in parameters:
                target = ("Parameter", parameters[key][0])
            elif key in states:
                target = ("ReadValue", key)
            else:
                raise unknown_key(self.G, key, "a symbols key", parameters, states)
            parsed = parse_symbols(dims) if isinstance(dims, str) else list(dims)
            for d in parsed:
                if not (d is None or isinstance(d, int) or (isinstance(d, str)
                                                            and SYMBOL_NAME.match(d))):
                    raise UsageError(f"a symbolic dim is a name, an integer or None, but "
                                     f"'{key}' has {d!r}", file=self.path)
            given[target] = parsed
            self.keys[target] = key
        return given

    def _named(self, G, syms: dict[str, dict[int, Sym]]) -> dict[str, list[Sym]]:
        """Resolve every dim and print the fresh names as d1, d2 … in order of use."""
        taken = {n for dims in self.given.values() for n in dims if isinstance(n, str)}
        names: dict[tuple, Expr] = {}
        counter = 0

        def rename(atom: tuple) -> Expr | None:
            nonlocal counter
            if atom[0] != "n" or not atom[1].startswith(FRESH):
                return None
            if atom not in names:
                counter += 1
                while f"d{counter}" in taken:
                    counter += 1
                names[atom] = name(f"d{counter}")
            return names[atom]

        out: dict[str, list[Sym]] = {}
        for node, ports in syms.items():
            out[node] = [Sym(None if s.dims is None else
                             [self.resolve(d).substitute(rename) for d in s.dims])
                         for s in ports.values()]
        return out


def _solve(diff: Expr) -> tuple[tuple, Expr] | None:
    """``(fresh atom, value)`` when ``diff == 0`` fixes a fresh name: one that appears in
    ``diff`` only as a term ``±atom`` (so ``diff == 0`` is ``atom = value`` exactly); of
    several, the newest, so that a name stays written in the older ones."""
    found = []
    for mono, coef in diff.terms.items():
        if len(mono) != 1 or mono[0][1] != 1 or abs(coef) != 1:
            continue
        atom = mono[0][0]
        if atom[0] != "n" or not atom[1].startswith(FRESH):
            continue
        rest = Expr({m: c for m, c in diff.terms.items() if m != mono})
        if atom not in set(_atoms(rest)):
            found.append((int(atom[1][len(FRESH):]), atom, rest * -coef))
    if not found:
        return None
    _, atom, value = max(found)
    return atom, value


def _atoms(e: Expr):
    for mono in e.terms:
        for atom, _ in mono:
            yield atom
            if atom[0] != "n":
                for arg in atom[1:]:
                    yield from _atoms(arg)


def _static_size(shape) -> int | None:
    n = 1
    for d in shape.dims:
        if d.lo != d.hi:
            return None
        n *= d.lo
    return n
