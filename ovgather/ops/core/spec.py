"""What ovgather knows about one op version, in one place: :class:`OpSpec`.

An op file (``gather_nd.py``, ``reshape.py`` …) declares its ``SPECS`` with
:func:`specs_of`; the registry (``registry.py``) finds a spec by the ``type`` and
``version`` text a layer carries. Every part of ovgather that needs an op asks its spec:
``infer`` runs :attr:`OpSpec.rule`, ``explain`` runs the same rule with a :class:`Trace`
and prints the steps it took, ``validate`` makes inputs with :attr:`OpSpec.inputs`,
``runtime`` builds the op with :attr:`OpSpec.build` and compares with
:attr:`OpSpec.reference`. None of them re-derives a rule, so adding a version of an op
touches its op file and its test file only.

A rule has one signature, ``rule(ins, attrs, trace) -> list[Tensor]``: the input tensors
as the walk carries them (``values.Tensor``), the layer's attributes as an :class:`Attrs`
(the IR's text, plus the op version and the number of output ports), and a
:class:`Trace` or None. It returns fewer information when it knows less and raises
:class:`~ovgather.errors.ShapeInferenceError` only when known facts break the op's rules
(OpenVINO's shape inference does the same).

>>> attrs = Attrs({"batch_dims": "x"}, version=8)
>>> attrs.int("batch_dims", 0)
Traceback (most recent call last):
...
ovgather.errors.ShapeInferenceError: the attribute 'batch_dims' must be an integer, but got 'x'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import ShapeInferenceError
from .opsets import LAST_OPSET, OPSETS

__all__ = ["Attrs", "Step", "Trace", "Checks", "OpSpec", "LAST_OPSET", "ALIASES", "opset_rows",
           "openvino_type", "specs_of"]

#: The IR spellings OpenVINO's serializer writes for four op types (``Const``, ``PReLU``,
#: ``ReLU``, ``SoftMax``), which its reader turns back into the op type, in exactly this
#: spelling; any other name it looks up in the layer's opset ignoring case.
ALIASES = {"Const": "Constant", "PReLU": "PRelu", "ReLU": "Relu", "SoftMax": "Softmax"}


def _integer(text: str, sign: str) -> int | None:
    """``text`` (ASCII whitespace around it) as an int64, or None: one optional sign of
    ``sign`` and ASCII digits only (``"--1"`` and ``"+-0"`` are None, never a crash)."""
    text = text.strip(" \t\n\r")
    body = text[1:] if text[:1] and text[0] in sign else text
    if not (body.isascii() and body.isdigit() and len(body) < 40):
        return None
    number = int(text)
    return number if -(1 << 63) <= number < (1 << 63) else None


class Attrs(dict):
    """A layer's attributes as the IR writes them (text), for a rule to read.

    A ``dict`` of the ``<data>`` attributes, plus ``version`` (the op version the
    layer's opset selects: 5 or 8 for GatherND) and ``n_outputs`` (its output ports).
    The typed readers raise ShapeInferenceError on text of the wrong kind: the one
    way a bad attribute is reported, wherever the rule runs.
    """

    #: ``bodies`` is set only for the ops with bodies (``ops/subgraph.py``): their
    #: ``subgraphs.Body`` objects by body name.
    __slots__ = ("version", "n_outputs", "bodies")

    def __init__(self, data: Mapping[str, str] | None = None, version: int = 1,
                 n_outputs: int = 1) -> None:
        super().__init__(data or ())
        self.version = version
        self.n_outputs = n_outputs

    @classmethod
    def of(cls, data: Mapping[str, str], version: int, n_outputs: int) -> Attrs:
        """``Attrs(data, version, n_outputs)`` without a Python-level ``__init__``: the
        walk makes one per layer."""
        attrs = dict.__new__(cls)
        dict.update(attrs, data)
        attrs.version, attrs.n_outputs = version, n_outputs
        return attrs

    def text(self, name: str, default: str) -> str:
        """The attribute as text, ``default`` when the IR leaves it out."""
        value = self.get(name)
        return default if value is None else str(value).strip()

    def int(self, name: str, default: int | None = None) -> int:
        """The attribute as an integer (``default`` when absent; required when None)."""
        value = self.get(name)
        if value is None:
            if default is None:
                raise ShapeInferenceError(f"the attribute '{name}' is required, but it is missing")
            return default
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        number = _integer(str(value), sign="-")  # OpenVINO refuses "+1" here, reads "-1"
        if number is not None:
            return number
        raise ShapeInferenceError(f"the attribute '{name}' must be an integer, but got '{value}'")

    def ints(self, name: str, default: tuple[int, ...] = ()) -> tuple[int, ...]:
        """A comma-separated integer list attribute (``"1,0,1"``; ``""`` is empty)."""
        text = self.get(name)
        if text is None or not str(text).strip():
            return default
        numbers = [_integer(p, sign="-") for p in str(text).split(",")]  # "+1" refused too
        if None not in numbers:
            return tuple(numbers)
        raise ShapeInferenceError(
            f"the attribute '{name}' must be a list of integers, but got '{text}'")

    def bool(self, name: str, default: bool) -> bool:
        """A boolean attribute (``true``/``false``, also ``1``/``0``)."""
        text = self.get(name)
        if text is None:
            return default
        word = str(text).strip().lower()
        if word in ("true", "1"):
            return True
        if word in ("false", "0"):
            return False
        raise ShapeInferenceError(f"the attribute '{name}' must be true or false, but got '{text}'")


@dataclass
class Step:
    """One check a rule made: the rule in words, whether it held, what was seen."""

    rule: str
    ok: bool
    detail: str


@dataclass
class Trace:
    """The steps a rule took, in order, for ``explain`` to print.

    ``facts`` holds what the rule worked out on the way under names the op's
    explanation knows (GatherND: ``k``, the merged ``batch`` rows, the ``fold``).
    """

    steps: list[Step] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def failed_rule(self) -> str | None:
        return next((s.rule for s in self.steps if not s.ok), None)


class Checks:
    """A rule's checks in order: each one is recorded in the trace (when there is one)
    and the first broken one raises, its message the rule, then what was seen.

    ``rule`` and ``detail`` may be callables and ``op`` a callable too, so that the hot
    path (no trace, every check holding) formats no text at all.
    """

    __slots__ = ("trace", "op", "seen")

    def __init__(self, trace: Trace | None, op: str | Callable[[], str],
                 seen: Callable[[], str]) -> None:
        self.trace, self.op, self.seen = trace, op, seen

    def require(self, ok: bool, rule: str | Callable[[], str],
                detail: str | Callable[[], str] = "") -> None:
        if ok and self.trace is None:
            return
        rule = rule() if callable(rule) else rule
        text = detail() if callable(detail) else detail
        if self.trace is not None:
            self.trace.steps.append(Step(rule, ok, text))
        if not ok:
            said = f"{rule} ({text})" if text else rule
            op = self.op() if callable(self.op) else self.op
            raise ShapeInferenceError(f"{op}: {said}, {self.seen()}")

    def note(self, rule: str, detail: str | Callable[[], str]) -> None:
        """A step that holds by construction (say, "the rank is unknown: nothing to check")."""
        if self.trace is not None:
            self.trace.steps.append(Step(rule, True, detail() if callable(detail) else detail))

    def fact(self, name: str, value: Any) -> None:
        if self.trace is not None:
            self.trace.facts[name] = value


Rule = Callable[[list, Attrs, "Trace | None"], list]


@dataclass(frozen=True)
class OpSpec:
    """One version of one op type.

    ``since``/``until``: the opsets that hold this version. ``rule``: its shape rule.
    ``words``: the output rule in words (used in messages). ``reference``: its NumPy
    reference, ``reference(data, indices, attrs) -> ndarray`` with ``attrs`` holding
    ``axis`` and ``batch_dims`` as numbers. ``inputs``: how ``validate`` makes valid
    concrete inputs (an ``ops.inputs.InputMaker``). ``build``: how the runtime bridge
    builds the op, ``build(opset_modules, data, indices, case) -> openvino node``
    (the bridge passes the openvino modules in; nothing here imports openvino).
    ``family``: ``"gather"`` for the ops explain, validate, extract and show centre on.
    ``views``: extra outputs ``explain`` shows beside the versions' own, as
    ``views(outputs, facts, attrs) -> {name: (output or None, note)}`` (GatherND's ONNX
    forms). ``known_crash``: ``known_crash(case) -> reason or None``, why the CPU plugin
    would crash on a runtime ``OpCase`` (the bridge then does not run it).
    ``compile_crash``: ``compile_crash(shapes, consts) -> reason or None``, why compiling a
    model holding this op would end the process: ``shapes`` the inputs' shapes as tuples
    (None for a dynamic dim or rank), ``consts`` the single values of constant inputs by
    index (the bridge screens every model before it compiles it). ``nested``:
    the op holds bodies (TensorIterator, Loop, If); the walk gives its rule the bodies
    in ``attrs.bodies``. ``row_dims``: ``row_dims(attrs, shapes) -> (positions, dims) or
    None``, the inputs whose dims must agree and which dims (all but the axis of a
    Concat, the batch dims of a Gather): what ``reshape --fix`` broadcasts a constant
    input along when another input's rows change. ``index_reach``: ``index_reach(ins,
    attrs, indices) -> message or None``, indices that reach past the data (their value
    bounds, or ``indices``, the array of a constant indices input, else None), which
    shape inference lets pass and the runtime reads out of bounds (``reshape`` blocks).
    ``table_rows``: ``table_rows(shapes, attrs, consts) -> {input index: size}``, for each
    input that holds indices, how many entries they may pick from (the data's dim on the
    gathered axis; the smallest such dim when one index row picks several), from the
    inputs' shapes as ``compile_crash`` has them (a dynamic dim gives 1); what the runtime
    bridge keeps the indices it makes for a whole model inside (``runtime.feeding``);
    with ``widest=True``, the largest size any index may reach, None where unknown: the
    bound a user's indices are held to before a run (``runtime.outputs.index_bounds``).
    ``symbolic``: ``symbolic(ins, attrs, facts) -> list[symbolic.Sym] or None``, the
    outputs' dims (and the elements of small integer outputs) as expressions in the input
    dims' names, from the inputs' (``ops/core/symbolic.py``; ``infer --symbols``); a dim
    it leaves None, or an op without it, gets a fresh name.
    """

    type: str
    version: int
    since: int
    rule: Rule
    until: int = LAST_OPSET - 1
    words: str = ""
    reference: Callable[..., Any] | None = None
    inputs: Any = None
    build: Callable[..., Any] | None = None
    family: str = ""
    views: Callable[..., Any] | None = None
    known_crash: Callable[..., str | None] | None = None
    compile_crash: Callable[..., str | None] | None = None
    nested: bool = False
    row_dims: Callable[..., Any] | None = None
    index_reach: Callable[..., str | None] | None = None
    symbolic: Callable[..., Any] | None = None
    table_rows: Callable[..., dict[int, int]] | None = None

    @property
    def name(self) -> str:
        """``GatherND-8``: the op as OpenVINO's specification names it."""
        return f"{self.type}-{self.version}"

    def infer(self, ins: list, data: Mapping[str, str] | None = None, n_outputs: int = 1,
              trace: Trace | None = None) -> list:
        """Run the rule on ``ins`` with the attribute text ``data``."""
        return self.rule(ins, Attrs(data, self.version, n_outputs), trace)


def opset_rows(op_type: str) -> tuple[tuple[int, int, int], ...]:
    """``(first opset, last opset, op version)`` rows of the opsets holding ``op_type``
    (spelled as :func:`openvino_type` reads it), from the installed OpenVINO's table
    (``opsets.py``).

    >>> opset_rows("Squeeze"), opset_rows("SoftMax")
    (((1, 14, 1), (15, 16, 15)), ((1, 7, 1), (8, 16, 8)))
    """
    name = openvino_type(op_type)
    if name is None:
        raise KeyError(f"no opset of OpenVINO holds an op type {op_type!r}")
    return OPSETS[name]


def openvino_type(op_type: str) -> str | None:
    """The op type OpenVINO's IR reader makes of the ``type`` text ``op_type``: one of the
    serializer's :data:`ALIASES` as spelled there, else the op whose name equals it
    ignoring case; None when no opset holds such an op (the reader refuses the layer,
    unless an extension provides the type).

    >>> openvino_type("PReLU"), openvino_type("gathernd"), openvino_type("Const")
    ('PRelu', 'GatherND', 'Constant')
    >>> openvino_type("const") is None, openvino_type("MyCustomOp") is None
    (True, True)
    """
    name = ALIASES.get(op_type)
    return name if name is not None else _CASELESS.get(op_type.lower())


_CASELESS = {t.lower(): t for t in OPSETS}


def specs_of(rules: Mapping[str, Rule], versions: Mapping[int, Mapping[str, Any]] | None = None,
             **extra: Any) -> list[OpSpec]:
    """The specs of an op file: for each op type of ``rules``, one spec per run of opsets
    holding one op version (as :func:`opset_rows` gives them), all with the op's rule (a
    rule that differs by version reads ``attrs.version``).

    ``extra``: the spec fields every version shares (``family``, ``build``, ``nested``…).
    ``versions``: the op versions the rule knows, each with the fields of its own
    (``words``, ``reference``, ``inputs``…); the opsets' other versions get no spec.

    >>> [s.name + f"@{s.since}..{s.until}" for s in specs_of({"Squeeze": None})]
    ['Squeeze-1@1..14', 'Squeeze-15@15..16']
    >>> [s.name + f"@{s.since}..{s.until}" for s in specs_of({"RNNCell": None})]
    ['RNNCell-1@1..1', 'RNNCell-1@3..16']
    >>> [s.words for s in specs_of({"GatherND": None}, {8: {"words": "keeps the batch"}})]
    ['keeps the batch']
    """
    return [OpSpec(op, version, first, rule, until=last, **extra,
                   **(versions[version] if versions is not None else {}))
            for op, rule in rules.items()
            for first, last, version in opset_rows(op)
            if versions is None or version in versions]
