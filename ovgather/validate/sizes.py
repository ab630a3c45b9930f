"""The input sizes runtime proof runs a model at: concrete shapes inside each dynamic dim's
bounds, by Parameter friendly name.

One size ``s`` per run, clipped into each dynamic dim's bounds, so that dims that must
agree (a batch shared by two inputs, say) get the same value. ``validate --all-layers``
takes low, mid and high sizes (:func:`size_picks`), pins the dims of one axis to a
static size of the inputs when ovgather's rules reject a size (:func:`pin_patterns`),
then falls back to other sizes (:func:`fallback_sizes`) and grows the one that runs
(:func:`grown_sizes`); a dynamic axis that none of those ran above 1 (a batch pinned to
1, say) is tried at 1, 2 and 3 besides (:func:`sweep_sizes`). ``validate --whole-model``
needs one size that runs (:func:`one_size_tries`). A dynamic-rank input takes rank 3, 2,
4 or 1 in turn (the CPU plugin runs no dynamic-rank input).

Every candidate then goes through :func:`honour`: the dims the model's own rules tie to a
number or to another input's dim (GatherND-8's merged batch dims, a Concat's other dims,
MatMul's inner dims, as ``infer --symbols`` derives them) take that value, so that no
size is tried that the model states it cannot run.
"""

from __future__ import annotations

import itertools
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence

import networkx as nx
import numpy as np

from ..infer.inputs import parameter_tensor
from ..ops.core.inputs import SPAN, pick
from ..shapes import INF, Dimension, PartialShape

__all__ = ["DYNAMIC_RANKS", "parameter_shapes", "parameter_types", "ranks", "dims",
           "size_picks", "input_sizes", "static_sizes", "pin_patterns", "fallback_sizes",
           "grown_sizes", "sweep_sizes", "one_size_tries", "concrete", "SWEEP", "dim_rules",
           "honour", "share_rules", "initial_states", "state_sizes", "PAST"]

#: Ranks tried for a dynamic-rank Parameter, in turn (the CPU plugin needs one).
DYNAMIC_RANKS = (3, 2, 4, 1)
#: Pinned variants of one size checked at most (ovgather's check, no runtime).
MAX_PINNED = 24
#: Sizes tried last: image sides and audio lengths that pass convolution and pooling.
LARGER_SIZES = (32, 64, 224, 400, 1600)
#: The sizes a dynamic axis is tried at when no size above 1 ran there: a model reshaped
#: to a dynamic batch may still hold a constant that only batch 1 fits.
SWEEP = (1, 2, 3)
#: How many sizes --whole-model tries per rank before giving up.
MAX_TRIES = 8

#: A size for one dim: a number clipped into its bounds, or a function of the dim.
SizeOf = int | Callable[[Dimension], int]


_RULES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: The past length a state without an initializer is seeded with (a cache of 0 proves
#: nothing, and one the rules cannot tell from a broadcast 1 hides a mistake).
PAST = 2


def share_rules(copy: nx.MultiDiGraph, G: nx.MultiDiGraph) -> None:
    """``copy`` (a variant of ``G`` with the same inputs) gets ``G``'s rules: they come
    from ``G``, whose states are still dynamic."""
    try:
        _RULES[copy] = dim_rules(G)
    except TypeError:
        pass


def dim_rules(G: nx.MultiDiGraph) -> dict[tuple[str, int], object]:
    """``(Parameter name, axis)`` -> the expression the model's rules give that dynamic
    dim (``infer.symbols.input_dim_constraints``), worked out once per graph; empty
    when the walk cannot follow the model (sizes are then chosen as before)."""
    try:
        return _RULES[G]
    except (KeyError, TypeError):
        pass
    from ..errors import OvgatherError
    from ..infer.symbols import input_dim_constraints

    try:
        rules = {k: e for k, e in input_dim_constraints(G).items()
                 if e.names() != {f"{k[0]}:{k[1]}"}}  # only the dims something fixes
    except (OvgatherError, ArithmeticError, KeyError, TypeError, ValueError, RecursionError):
        rules = {}
    try:
        _RULES[G] = rules
    except TypeError:
        pass
    return rules


def honour(sizes: Mapping[str, PartialShape], params: Mapping[str, PartialShape],
           rules: Mapping[tuple[str, int], object]) -> dict[str, PartialShape]:
    """``sizes`` with every dim a rule fixes set to what it says, when that fits the dim's
    bounds: a dim tied to a number takes it, one tied to another input's dim takes that
    dim's size (the free dims keep the size they were given).

    >>> from ovgather.ops.core.symbolic import const, name
    >>> params = {"data": PartialShape.parse("?,3,?,5"), "indices": PartialShape.parse("2,?,4,1")}
    >>> sizes = {"data": PartialShape.parse("1,3,1,5"), "indices": PartialShape.parse("2,1,4,1")}
    >>> rules = {("data", 0): const(2), ("indices", 1): const(3)}
    >>> {n: str(s) for n, s in honour(sizes, params, rules).items()}
    {'data': '[2,3,1,5]', 'indices': '[2,3,4,1]'}
    """
    if not rules:
        return dict(sizes)
    env = {f"{n}:{i}": d.lo for n, s in sizes.items() if s.dims is not None
           for i, d in enumerate(s.dims)}
    out = dict(sizes)
    for (n, axis), expr in rules.items():
        shape, given = params.get(n), sizes.get(n)
        if shape is None or shape.dims is None or given is None or given.dims is None \
                or axis >= len(given.dims):
            continue
        try:
            value = expr.evaluate(env)
        except (KeyError, ArithmeticError):
            continue
        bound = shape.dims[axis]
        # never an empty dim: a size of 0 runs, but its empty tensors prove nothing
        if max(bound.lo, 1) <= value <= bound.hi and value != given.dims[axis].lo:
            dims = list(out[n].dims)
            dims[axis] = Dimension.static(value)
            out[n] = PartialShape.of(tuple(dims))
    return out


def initial_states(G: nx.MultiDiGraph) -> dict[str, tuple[str, PartialShape]]:
    """``variable_id -> (element type, variable shape)`` of each ReadValue without an
    initializer input, whose shape is not static: at a first call such a state is empty
    (the CPU plugin makes its dynamic dims 0), so a proof seeds it."""
    out = {}
    for node, attrs in G.nodes(data=True):
        data = attrs.get("data") or {}
        if attrs["type"] != "ReadValue" or G.in_degree(node) or not data.get("variable_id"):
            continue
        try:
            shape = PartialShape.parse(data.get("variable_shape") or "")
        except ValueError:
            continue
        if shape.dims is not None and not shape.is_static:
            out[data["variable_id"]] = (data.get("variable_type") or "f32", shape)
    return out


def state_sizes(G: nx.MultiDiGraph, sizes: Mapping[str, PartialShape],
                rules: Mapping[tuple[str, int], object]) -> dict[str, PartialShape]:
    """The shape each state without an initializer is seeded with at ``sizes``: a dim
    the rules tie to the inputs takes their value (the batch), a free one (the past
    length) :data:`PAST`, both clipped into the variable's bounds and never 0."""
    from ..infer.symbols import STATE_KEY

    env = {f"{n}:{i}": d.lo for n, s in sizes.items() if s.dims is not None
           for i, d in enumerate(s.dims)}
    out = {}
    for variable, (_, shape) in initial_states(G).items():
        dims = []
        for axis, d in enumerate(shape.dims):
            value = PAST
            rule = rules.get((STATE_KEY + variable, axis))
            if d.is_static:
                value = d.lo
            elif rule is not None:
                try:
                    value = rule.evaluate(env)
                except (KeyError, ArithmeticError):
                    value = PAST
            dims.append(Dimension.static(d.lo if d.is_static
                                         else min(max(value, d.lo, 1), d.hi)))
        out[variable] = PartialShape.of(tuple(dims))
    return out


def parameter_shapes(G: nx.MultiDiGraph) -> dict[str, PartialShape]:
    """Each Parameter's partial shape as ``check`` starts from it, by friendly name."""
    return {attrs["name"]: parameter_tensor(attrs, attrs.get("data") or {}, None).shape
            for _, attrs in G.nodes(data=True) if attrs["type"] == "Parameter"}


def parameter_types(G: nx.MultiDiGraph) -> dict[str, str]:
    """Each Parameter's element type, by friendly name."""
    return {a["name"]: (a.get("data") or {}).get("element_type", "f32")
            for _, a in G.nodes(data=True) if a["type"] == "Parameter"}


def ranks(params: Mapping[str, PartialShape]) -> tuple[int, ...]:
    """The ranks a dynamic-rank input takes in turn (one pass when there is none)."""
    return DYNAMIC_RANKS if any(s.dims is None for s in params.values()) else (2,)


def dims(shape: PartialShape, rank: int) -> tuple[Dimension, ...]:
    """The dims of ``shape``; ``rank`` dynamic ones for a dynamic rank."""
    return shape.dims if shape.dims is not None else (Dimension.dynamic(),) * rank


def concrete(shape: PartialShape, size: SizeOf, rank: int = 2,
             pins: Mapping[int, int] | None = None) -> PartialShape:
    """``shape`` with ``size`` clipped into each dynamic dim (a dynamic rank: ``rank`` of
    them); ``pins`` gives other sizes to some axes (``{0: 1}``: a batch of 1)."""
    pins = pins or {}

    def size_at(i: int, d: Dimension) -> int:
        v = pins.get(i, size)
        return min(max(v if isinstance(v, int) else v(d), d.lo), d.hi)

    return PartialShape.of(tuple(d if d.is_static else Dimension.static(size_at(i, d))
                                 for i, d in enumerate(dims(shape, rank))))


def size_picks(params: Mapping[str, PartialShape], rank: int) -> dict[str, int]:
    """``{"low"|"mid"|"high": s}`` (``{"static": 1}`` when no dim is dynamic): the
    smallest ``s`` every dim's lower bound allows, the largest every bounded dim allows
    (four times the small one when no dim is bounded), and one between."""
    dynamic = [d for s in params.values() for d in dims(s, rank) if not d.is_static]
    if not dynamic:
        return {"static": 1}
    low = max(1, *(d.lo for d in dynamic))
    bounded = [d.hi for d in dynamic if d.hi < INF and d.hi >= low]
    high = min(bounded) if bounded else 4 * low
    picks = {"low": low, "mid": (low + high) // 2, "high": high}
    unique = dict(sorted({v: k for k, v in reversed(picks.items())}.items()))
    return {name: size for size, name in unique.items()}


def input_sizes(G: nx.MultiDiGraph, rank: int = 2) -> dict[str, dict[str, PartialShape]]:
    """Concrete input shapes to run: ``{"low"|"mid"|"high": {parameter: shape}}`` (a
    dynamic-rank input gets ``rank`` dims).

    >>> import networkx as nx
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("0", name="x", type="Parameter", data={"shape": "?,2..8,3"})
    >>> {k: str(v["x"]) for k, v in input_sizes(G).items()}
    {'low': '[2,2,3]', 'mid': '[5,5,3]', 'high': '[8,8,3]'}
    """
    params = parameter_shapes(G)
    return {label: {n: concrete(s, size, rank) for n, s in params.items()}
            for label, size in size_picks(params, rank).items()}


def static_sizes(params: Mapping[str, PartialShape]) -> list[int]:
    """The static dims above 1 of the inputs, most frequent first (a dynamic dim often
    has to equal one of them: a batch dim shared with a static input)."""
    counts = Counter(d.lo for s in params.values() for d in s.dims or ()
                     if d.is_static and d.lo > 1)
    return sorted(counts, key=lambda v: (-counts[v], v))


def pin_patterns(params: Mapping[str, PartialShape], rank: int) -> list[dict[int, int]]:
    """Dims to pin, ``{axis: size}``, fewest axes first: the dynamic dims at an axis (a
    batch several inputs share, say) set to a static size of the inputs, or 1."""
    axes = sorted({i for s in params.values() for i, d in enumerate(dims(s, rank))
                   if not d.is_static})
    values = [*static_sizes(params)[:4], 1]
    patterns = (dict.fromkeys(subset, v) for k in range(1, len(axes) + 1)
                for subset in itertools.combinations(axes, k) for v in values)
    return list(itertools.islice(patterns, MAX_PINNED))


def fallback_sizes(params: Mapping[str, PartialShape],
                   rank: int) -> list[dict[str, PartialShape]]:
    """Other sizes to try when neither the runtime nor ovgather's rules accept the first
    ones: the static dims of the inputs, then 1, then the sizes images and audio need (a
    kernel or a stride wider than a small input fails)."""
    sizes = list(dict.fromkeys([*static_sizes(params), 1]))
    plans = [{n: concrete(s, v, rank) for n, s in params.items()} for v in sizes]
    for v in LARGER_SIZES:  # with a batch of 1 first: exports often bake it in
        plans += [{n: concrete(s, v, rank, {0: 1}) for n, s in params.items()},
                  {n: concrete(s, v, rank) for n, s in params.items()}]
    return plans


def grown_sizes(params: Mapping[str, PartialShape], rank: int,
                ran: Mapping[str, PartialShape]) -> Iterator[dict[str, PartialShape]]:
    """The sizes ``ran`` with every dynamic dim twice, then one and a half times as large
    (clipped into its bounds); then the same keeping dim 0 (a batch an export baked in)."""
    for factor, batch in ((2, True), (1.5, True), (2, False), (1.5, False)):
        yield {n: PartialShape.of(tuple(
            v if d.is_static or (i == 0 and not batch)
            else Dimension.static(min(max(int(v.lo * factor), d.lo), d.hi))
            for i, (d, v) in enumerate(zip(dims(s, rank), ran[n].dims, strict=True))))
            for n, s in params.items()}


def sweep_sizes(params: Mapping[str, PartialShape], rank: int,
                ran: Sequence[Mapping[str, PartialShape]]
                ) -> Iterator[tuple[int, int, dict[str, PartialShape]]]:
    """``(axis, size, sizes)``: for each axis whose dynamic dims ran at no size above 1,
    the first sizes of ``ran`` with those dims set to each size of :data:`SWEEP` that
    every one of them allows and that has not run there.

    >>> ran = [{"x": PartialShape.parse("[1,3,8]")}]
    >>> [(a, v, str(s["x"])) for a, v, s in sweep_sizes({"x": PartialShape.parse("?,3,1..8")},
    ...                                                   2, ran)]
    [(0, 2, '[2,3,8]'), (0, 3, '[3,3,8]')]
    """
    if not ran:
        return
    shapes = {n: dims(s, rank) for n, s in params.items()}
    axes = sorted({i for ds in shapes.values() for i, d in enumerate(ds) if not d.is_static})
    for axis in axes:
        at = [(n, ds[axis]) for n, ds in shapes.items()
              if axis < len(ds) and not ds[axis].is_static]
        seen = {sizes[n].dims[axis].lo for sizes in ran for n, _ in at}
        if any(v > 1 for v in seen):
            continue
        for v in SWEEP:
            if v in seen or not all(d.lo <= v <= d.hi for _, d in at):
                continue
            sizes = dict(ran[0])
            for n, _ in at:
                old = sizes[n].dims
                sizes[n] = PartialShape.of(old[:axis] + (Dimension.static(v),) + old[axis + 1:])
            yield axis, v, sizes


def one_size_tries(params: Mapping[str, PartialShape], rng: np.random.Generator,
                   rules: Mapping[tuple[str, int], object] | None = None
                   ) -> Iterator[tuple[int, dict[str, PartialShape]]]:
    """(rank, sizes) to try until one runs: one size for every dynamic dim (so that a
    batch ``N`` shared by several inputs stays shared), a random one, then the static
    sizes seen elsewhere, then 1; then one random size per distinct bounds; last, a batch
    (axis 0) of 1 with the larger sizes of images and audio (:data:`LARGER_SIZES`: a
    convolution stack needs more than a few pixels, and an export may bake in batch 1);
    each with the dims ``rules`` fix set (:func:`honour`)."""
    if rules:
        for rank, sizes in one_size_tries(params, rng):
            yield rank, honour(sizes, params, rules)
        return
    candidates = dict.fromkeys([int(rng.integers(2, SPAN + 1)), *static_sizes(params), 1])
    strategies: list[SizeOf] = [*candidates, _SharedByBounds(rng)][:MAX_TRIES]
    for rank in ranks(params):
        for size in strategies:
            yield rank, {n: concrete(s, size, rank) for n, s in params.items()}
        for size in LARGER_SIZES[:4]:
            yield rank, {n: concrete(s, size, rank, {0: 1}) for n, s in params.items()}


class _SharedByBounds:
    """One random size per distinct (lower, upper) bounds."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self.sizes = rng, {}

    def __call__(self, d: Dimension) -> int:
        return self.sizes.setdefault((d.lo, d.hi), pick(self.rng, d))
