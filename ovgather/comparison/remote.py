"""The OpenVINO (and ONNX Runtime) work of ``compare`` in the runtime worker process
(``runtime.worker``): a native crash of the CPU plugin on the user's arrays ends that
child, never ``compare``, and becomes a reported result.

The parent reads both models (their inputs and outputs, the sizes to run, the arrays to
feed: OpenVINO's reader and shape inference, nothing compiled); the child compiles and
runs them, keeps each run's outputs where the runtime wrote them and compares them there
(so that the outputs are never copied through the pipe: only the verdicts come back).
A :class:`Session` names what it keeps in the child by keys of its own, opens a model
again when the child that held it died, and lets it all go at the end.

The functions below ``# -- in the child`` run there (sent by reference: module and name).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import RuntimeBridgeError
from ..runtime.worker import RuntimeCrash, Worker, shared_worker

__all__ = ["Session", "crash_words", "RuntimeCrash"]

_COUNTER = itertools.count()
#: The ``compare --all-layers`` in progress in this process (:class:`exposing`).
_EXPOSING: list[exposing] = []


class exposing:  # noqa: N801 - used as a function: ``with remote.exposing(budget) as e``
    """While it is open, ``compare`` compiles each model with every layer output exposed
    besides its own outputs (``open_exposed``), where a run's layer outputs fit half of
    ``budget`` each, so that ``compare --all-layers`` judges the layers on the values of
    that very run rather than compiling and running both models again; the models are
    kept in the worker when ``compare`` ends (``held``: its Session's keys), and let go
    before the next call to that worker (or with it, when the process ends)."""

    def __init__(self, budget: int, threads: int | None = None) -> None:
        self.budget, self.threads = budget, threads
        self.held: dict[str, tuple[Callable[..., Any], tuple[Any, ...], int | None]] = {}
        self.worker: Worker | None = None

    def __enter__(self) -> exposing:
        _EXPOSING.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _EXPOSING.remove(self)
        if self.held and self.worker is not None and self.worker.generation is not None:
            # let go at the next call to the child, or when it ends with this process:
            # freeing two compiled models with every layer exposed takes half a second
            _STALE.append((self.worker, self.worker.generation, list(self.held)))
        self.held.clear()

    def key(self, which: str) -> str | None:
        """The key of model ``which`` (``A`` or ``B``) that ``compare`` left here, while
        the child that ran it still holds it (None after a crash)."""
        key = next((k for k in self.held if k.endswith(f"-{which}")), None)
        if key is None or self.worker is None or \
                self.held[key][2] != self.worker.generation:
            return None
        return key


#: Models to let go in a child before its next call: ``(worker, generation, keys)``.
_STALE: list[tuple[Worker, int | None, list[str]]] = []


def _let_go(worker: Worker) -> None:
    """Drop what an ended :class:`exposing` left in ``worker``'s child (see ``_STALE``)."""
    for entry in [e for e in _STALE if e[0] is worker]:
        _STALE.remove(entry)
        if entry[1] == worker.generation:  # the child that holds them
            worker.call(drop, entry[2])


class Session:
    """Models held in the runtime worker for one comparison; ``with`` lets them go."""

    def __init__(self, worker: Worker | None = None) -> None:
        self.worker = worker if worker is not None else shared_worker()
        self._open: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {}
        self._generation: dict[str, int | None] = {}
        self._prefix = f"compare-{os.getpid()}-{next(_COUNTER)}"
        self._adopted: set[str] = set()
        #: crashes of the child so far (a crash on one model ends what the child held)
        self.crashes = 0

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def key(self, name: str) -> str:
        return f"{self._prefix}-{name}"

    def open(self, key: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(key, *args)`` in the child (it opens what ``key`` names there); called
        again, before the next call on ``key``, whenever the child has been replaced.
        ``compare``'s models are opened with their layers exposed in an :class:`exposing`."""
        self._open[key] = self._opener(fn, args)
        return self._reopen(key)

    def open_together(self, opens: Sequence[tuple[str, Callable[..., Any], tuple[Any, ...]]]
                      ) -> None:
        """Each ``(key, fn, args)`` of ``opens`` as :meth:`open` would, all at once in the
        child (:func:`open_many`: the CPU plugin compiles a model on one core, so two
        models compile in the time of one on two cores). The first error raises, as in
        turn; a crash raises RuntimeCrash with nothing opened (open them in turn to learn
        which one crashes)."""
        for key, fn, args in opens:
            self._open[key] = self._opener(fn, args)
        cwd = os.getcwd()
        self._call(open_many, [(self._open[key][0], key, cwd, *self._open[key][1])
                               for key, _, _ in opens])
        for key, _, _ in opens:
            self._generation[key] = self.worker.generation

    @staticmethod
    def _opener(fn: Callable[..., Any], args: tuple[Any, ...]
                ) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        if fn is open_model and _EXPOSING and _EXPOSING[-1].budget > 0:
            return open_exposed, (*args, _EXPOSING[-1].budget)
        return fn, args

    def adopt(self, held: Mapping[str, tuple[Callable[..., Any], tuple[Any, ...],
                                                int | None]]) -> None:
        """Take on models another Session opened (an :class:`exposing`'s ``held``): they
        are called and reopened as this one's, and let go by their owner."""
        for key, (fn, args, generation) in held.items():
            self._open[key] = (fn, args)
            self._generation[key] = generation
            self._adopted.add(key)

    def _reopen(self, key: str) -> Any:
        fn, args = self._open[key]
        result = self._call(fn, key, os.getcwd(), *args)
        self._generation[key] = self.worker.generation
        return result

    def call(self, fn: Callable[..., Any], key: str, *args: Any) -> Any:
        """``fn(key, *args)`` in the child, with ``key`` opened there."""
        if self.worker.generation is None or \
                self._generation.get(key) != self.worker.generation:
            self._reopen(key)
        return self._call(fn, key, *args)

    def call_both(self, fn: Callable[..., Any], key_a: str, key_b: str, *args: Any) -> Any:
        """``fn(key_a, key_b, *args)`` in the child that holds both (no reopening: the
        values of the last runs are what ``fn`` reads)."""
        return self._call(fn, key_a, key_b, *args)

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            if _STALE:
                _let_go(self.worker)
            return self.worker.call(fn, *args)
        except RuntimeCrash:
            self.crashes += 1
            raise

    def close(self) -> None:
        keys = [k for k in self._open if k not in self._adopted]
        exposed = [k for k in keys if self._open[k][0] is open_exposed]
        if exposed and _EXPOSING:  # compare's models, for compare --all-layers to judge
            _EXPOSING[-1].worker = self.worker
            _EXPOSING[-1].held.update({k: (*self._open[k], self._generation.get(k))
                                       for k in exposed})
            keys = [k for k in keys if k not in exposed]
        if keys and self.worker.generation is not None:
            try:
                self.worker.call(drop, keys)
            except RuntimeBridgeError:  # pragma: no cover - the child died meanwhile
                pass
        self._open.clear()


def crash_words(crash: RuntimeCrash) -> str:
    """``crashed (SIGSEGV)``, or the exit code's words when no signal ended it."""
    if crash.signal_name:
        return f"crashed ({crash.signal_name})"
    return crash.message.removeprefix("the runtime's ")


# -- in the child -----------------------------------------------------------------------------
_HELD: dict[str, Any] = {}
_VALUES: dict[str, Any] = {}


def _where(cwd: str) -> None:
    if os.getcwd() != cwd:
        os.chdir(cwd)


def open_many(calls: Sequence[tuple[Any, ...]]) -> None:
    """Each ``(fn, key, *args)`` of ``calls`` (``open_model``, ``open_exposed``), their
    compiles at once (``runtime.core.compile_models``): the rest of each open (reading,
    reshaping, exposing) runs in turn in this thread, since OpenVINO's Python objects
    are only safe to touch from one thread while another compiles. The first error, in
    the order of ``calls``, raises."""
    from ..runtime.core import compile_models

    if len(calls) < 2:
        for fn, *args in calls:
            fn(*args)
        return
    for fn, *args in calls:
        fn(*args, compile=False)
    opened = [_HELD[key] for _, key, *_ in calls]
    runnable = [held.model if isinstance(held, _Exposed) else held for held in opened]
    todo = [k for k, model in enumerate(runnable) if model.needs_compile()]
    results = dict(zip(todo, compile_models([runnable[k].model for k in todo],
                                            runnable[0].threads), strict=True))
    for k, held in enumerate(opened):
        if k not in results:
            continue
        held.compiled(results[k])  # an _Exposed refused compiles again unexposed


def open_model(key: str, cwd: str, source: Any, shown: str | None, threads: int | None,
               reshape: Mapping[int, str], *, compile: bool = True) -> None:
    """Read ``source`` as ``compare`` runs it (``RunnableModel``), reshape and compile it
    (``compile=False``: the caller compiles it, :func:`open_many`)."""
    from ..runtime.outputs import RunnableModel

    _where(cwd)
    drop([key])
    model = RunnableModel(source, threads)
    model.path = shown
    model.reshape(dict(reshape))
    if compile:
        model.compile()
    _HELD[key] = model


def open_exposed(key: str, cwd: str, source: Any, shown: str | None, threads: int | None,
                 reshape: Mapping[int, str], budget: int, *, compile: bool = True) -> None:
    """:func:`open_model`, the model compiled with every layer output exposed besides its
    own (:class:`_Exposed`)."""
    from ..runtime.interop import ONNX_SUFFIXES
    from ..runtime.outputs import RunnableModel

    if isinstance(source, str) and source.lower().endswith(ONNX_SUFFIXES):
        # compare converts an ONNX model whole; its layers are read node by node apart
        open_model(key, cwd, source, shown, threads, reshape, compile=compile)
        return
    _where(cwd)
    drop([key])
    model = RunnableModel(source, threads)
    model.path = shown
    model.reshape(dict(reshape))
    _HELD[key] = _Exposed(model, source, threads, budget, reshape, compile=compile)


class _Exposed:
    """A ``compare`` model (``RunnableModel``: ``outputs``, ``inputs``, ``run``) compiled
    with a Result at every layer output besides its own outputs, which keep their
    positions (the layers' come after). A run whose layer outputs, inputs and twice its
    largest tensor take more than half the budget is not run so: the model is compiled
    again without them (``compare --all-layers`` then runs its layers in chunks).
    ``layers``: the model's ``OpenVinoLayers`` (the same ``openvino.Model``); ``values``:
    the layer outputs of the last run, with the arrays it was fed (``fed``)."""

    def __init__(self, model: Any, source: Any, threads: int | None, budget: int,
                 reshape: Mapping[int, str], *, compile: bool = True) -> None:
        from ..runtime.derived import Derivation, derivable
        from ..runtime.layer_runs import OpenVinoLayers
        from ..runtime.models import clear_legacy_names

        self.model, self.budget, self.compiles = model, budget, 1
        self.outputs, self.inputs = model.outputs, model.inputs
        self._again = (source, threads, reshape)
        self.layers = OpenVinoLayers(source, threads, model=model.model, path=model.path)
        self.live = [o for o in self.layers.outputs() if not o.constant]
        ov_model = model.model
        port = {o: self.layers.port(o) for o in self.live}
        # data movement is computed from its inputs' values, not exposed (``derived``)
        self.derived = Derivation(derivable(list(port.values()), [
            r.input_value(0) for r in ov_model.get_results()]))
        self.key_of = {o: (p.get_node(), p.get_index()) for o, p in port.items()}
        self.layer_of = {k: o for o, k in self.key_of.items()}
        moved = self.derived.keys
        ov_model.add_outputs([port[o] for o in self.live if self.key_of[o] not in moved])
        self.exposed = True  # every layer output is exposed or derived (until _unexpose)
        clear_legacy_names(ov_model)
        slot = {}
        for k, result in enumerate(ov_model.get_results()):
            source_port = result.input_value(0)
            slot.setdefault((source_port.get_node(), source_port.get_index()), k)
        self.slot = {o: slot[k] for o, k in self.key_of.items() if k not in moved}
        self.values: dict[Any, np.ndarray] | None = None
        self.fed: list[np.ndarray] = []
        self._bytes: dict[str, dict[Any, int]] = {}
        if compile:
            try:
                model.compile()
            except RuntimeBridgeError as err:
                self.compiled(err)

    def compiled(self, result: Any) -> None:
        """Take the compile of the model with its layers exposed (or the error): refused
        so, the model is read and compiled again without them."""
        try:
            self.model.compiled(result)
        except RuntimeBridgeError:
            self._unexpose()
            self.model.compile()

    def _unexpose(self) -> None:
        """The model read and compiled again as ``compare`` alone runs it (a run over the
        budget with every layer exposed, or a compile the plugin refuses so)."""
        from ..runtime.outputs import RunnableModel

        source, threads, reshape = self._again
        path = self.model.path
        self.model = RunnableModel(source, threads)
        self.model.path = path
        self.model.reshape(dict(reshape))
        self.slot, self.compiles, self.exposed = {}, 0, False

    def output_bytes(self, shapes: Mapping[str, list[int]]) -> dict[Any, int]:
        key = repr(sorted(shapes.items()))
        if key not in self._bytes:
            ran = self._ran_bytes(shapes)
            self._bytes[key] = ran if ran is not None else self.layers.output_bytes(shapes)
        return self._bytes[key]

    def _ran_bytes(self, shapes: Mapping[str, list[int]]) -> dict[Any, int] | None:
        """The bytes of each layer output that runs, as the last run made them, when it
        ran at ``shapes`` with every layer exposed (exact, and no shape inference to run
        again). Constants are left out: the runtime folds them, no run holds them."""
        if self.values is None:
            return None
        names = self.layers.input_names()
        if [list(np.shape(f)) for f in self.fed] != [list(shapes.get(n, [-1])) for n in names]:
            return None
        if any(o not in self.values for o in self.live):
            return None
        return {o: int(self.values[o].nbytes) for o in self.live}

    def run(self, feed: Sequence[np.ndarray], *, copy: bool = False,
            largest: int | None = None) -> list[np.ndarray]:
        self.values, self.fed = None, []
        if self.exposed and not self._fits(feed, largest):
            self._unexpose()
        try:
            values = self.model.run(feed, copy=copy)
        except RuntimeBridgeError:
            if not self.exposed:
                raise
            self._unexpose()  # a size whose compile refuses the layers exposed
            values = self.model.run(feed, copy=copy)
        if self.exposed:
            self.values = {o: values[k] for o, k in self.slot.items()}
            made = self.derived.values({self.key_of[o]: v for o, v in self.values.items()})
            self.values.update({self.layer_of[k]: v for k, v in made.items()})
            self.fed = [np.asarray(f) for f in feed]
        return values[:len(self.outputs)]

    def _fits(self, feed: Sequence[np.ndarray], largest: int | None = None) -> bool:
        """The run's layer outputs, inputs and twice its largest tensor fit half the
        budget: at once where ``largest`` (the largest tensor of the run, as the parent
        measured it) bounds them all, else measured output by output."""
        fed = sum(np.asarray(f).nbytes for f in feed)
        if largest and fed + (len(self.live) + 2) * largest <= self.budget // 2:
            return True
        names = self.layers.input_names()
        sizes = self.output_bytes({n: list(np.shape(f)) for n, f in zip(names, feed,
                                                                         strict=True)})
        live = [sizes.get(o, 0) for o in self.live]
        need = fed + sum(live) + 2 * max(live, default=0)
        return bool(sizes) and need <= self.budget // 2

    def layer_values(self, feeds: Mapping[str, np.ndarray], wanted: Sequence[Any]
                     ) -> dict[Any, np.ndarray] | None:
        """The values of ``wanted`` that the last run gave (exposed or derived) when it
        was fed ``feeds`` (by input name), else None."""
        if self.values is None:
            return None
        try:
            fed = self.layers.arrays(feeds)
        except RuntimeBridgeError:
            return None
        if len(fed) != len(self.fed) or not all(
                a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
                for a, b in zip(fed, self.fed, strict=True)):
            return None
        return {w: self.values[w] for w in wanted if w in self.values}


def run_model(key: str, feed: Sequence[np.ndarray], largest: int | None = None
              ) -> list[str]:
    """Run the model of ``key`` on ``feed``; its outputs are kept (the runtime's memory)
    and their shapes returned. ``largest``: the run's largest tensor, when known (it
    spares an exposed model measuring its layer outputs against the budget)."""
    _VALUES.pop(key, None)
    held = _HELD[key]
    _VALUES[key] = held.run(feed, copy=False, largest=largest) if isinstance(held, _Exposed) \
        else held.run(feed, copy=False)
    return ["[" + ",".join(map(str, v.shape)) + "]" for v in _VALUES[key]]


def exposed_layers(key: str) -> list[Any] | None:
    """The layer outputs of ``compare``'s model of ``key`` when it was compiled with them
    exposed (:func:`open_exposed`), else None."""
    held = _HELD.get(key)
    return list(held.layers.outputs()) if isinstance(held, _Exposed) else None


def judge_outputs(key_a: str, key_b: str, verdict: Callable[..., Any],
                  plan: Sequence[tuple[Any, Any, Any]], rtol: float, atol: float
                  ) -> list[Any]:
    """``verdict`` (``outputs._verdict``, sent by reference) of each ``(A's output, B's,
    how paired)`` of ``plan`` on the outputs of the last runs of both models."""
    ma, mb = _HELD[key_a], _HELD[key_b]
    return [verdict(ma.outputs, mb.outputs, _VALUES[key_a], _VALUES[key_b], i, j, how,
                    rtol, atol) for i, j, how in plan]


def open_layers(key: str, cwd: str, source: Any, ref: str, threads: int | None
                ) -> list[Any]:
    """A layer runner of ``source`` (OpenVINO, or ONNX Runtime with ``ref``); its
    layer outputs."""
    _where(cwd)
    drop([key])
    if ref == "onnxruntime":
        from ..runtime.onnxruntime_runner import OnnxRuntimeLayers

        runner: Any = OnnxRuntimeLayers(source, threads=threads)
    else:
        from ..runtime.layer_runs import OpenVinoLayers

        runner = OpenVinoLayers(source, threads)
    _HELD[key] = runner
    return list(runner.outputs())


def layer_bytes(key: str, shapes: Mapping[str, list[int]]) -> dict[Any, int]:
    estimate = getattr(_HELD[key], "output_bytes", None)  # an _Exposed's is cached
    return estimate(shapes) if estimate is not None else {}


def run_layers(key: str, feeds: Mapping[str, np.ndarray], wanted: Sequence[Any]) -> int:
    """Run the layer runner of ``key`` with ``wanted`` exposed; the values are kept. The
    runner's compiles so far. ``compare``'s model compiled with every layer exposed
    (:class:`_Exposed`) hands over the values of its run on ``feeds`` instead, when it
    has them all."""
    _VALUES.pop(key, None)
    held = _HELD[key]
    if isinstance(held, _Exposed):
        values = held.layer_values(feeds, wanted)
        if values is not None and len(values) == len(wanted):
            _VALUES[key] = values
            return held.compiles
        if values is None:
            held.values, values = None, {}
        # the rest (a derived layer OpenVINO could not evaluate, say) run exposed
        _VALUES[key] = {**values, **held.layers.run(feeds, [w for w in wanted
                                                             if w not in values])}
        return held.compiles + held.layers.compiles
    _VALUES[key] = held.run(feeds, wanted)
    return getattr(held, "compiles", 0)


def judge_layers(key_a: str, key_b: str, judge_all: Callable[..., Any],
                 alone: Callable[..., Any], chunk: Sequence[tuple[Any, Any]], rtol: float,
                 atol: float) -> list[Any]:
    """The verdict of each pair of ``chunk`` on the last runs' values: ``judge_all`` of
    the pairs with both values, at once (and ``alone`` for a pair without a value;
    ``layers``' own, sent by reference)."""
    va, vb = _VALUES.get(key_a, {}), _VALUES.get(key_b, {})
    out: list[Any] = []
    both = [k for k, (x, y) in enumerate(chunk) if x in va and y in vb]
    judged = iter(judge_all([(chunk[k], va[chunk[k][0]], vb[chunk[k][1]]) for k in both],
                            rtol, atol))
    for x, y in chunk:
        if x in va and y in vb:
            out.append(next(judged))
        else:
            out.append(alone((x, y), "not run", "the runtime gave no value for it in "
                             f"{'A' if x not in va else 'B'}"))
    return out


def drop(keys: Sequence[str]) -> None:
    """Let go of what ``keys`` hold in the child."""
    for key in keys:
        _VALUES.pop(key, None)
        _HELD.pop(key, None)
