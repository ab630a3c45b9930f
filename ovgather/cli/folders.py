"""Folders of models and ``--jobs``: how ``check``, ``infer`` and ``validate`` run many models.

A MODEL that is a folder stands for the IRs below it (:func:`find_models`): every ``.xml``
file whose root element is ``<net>``, the one OpenVINO's reader takes, in path order with
number folders by number (a model server's ``1/``, ``2/``, ``10/``). Another ``.xml`` file
(a config, a Pascal VOC label file) and an ``.onnx`` file are skipped with a ``note:`` line
on stderr; hidden folders (``.git``, ``.ipynb_checkpoints``) are not searched. Only the
first bytes of each file are read to tell: the reader reads the models.

:func:`run_models` runs one function per model, in this process (``--jobs 1``) or in N
worker processes (``--jobs N``), and gives the results in the models' order whatever the
order they finish in: each result is shown as soon as it and those before it are done,
so the output is the one of a run with one job. A model that cannot be used (an
``OvgatherError``, or a bug: an internal error) prints its ``error:`` line in its turn and
the others still run; so does a worker process that dies (a crash in native code), which
is replaced. The exit code is the worst one of the models'.

The workers are forked before any thread starts, ignore Ctrl-C (the parent stops them:
SIGTERM, then SIGKILL), stop with the parent (Linux ``PR_SET_PDEATHSIG``) and stop their
own OpenVINO processes (``validate``) on the way out, so an interrupted run leaves no
process behind.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import OvgatherError
from .common import EXIT_BAD_INPUT, EXIT_OK, EXIT_PROBLEM, one_line, whole_number
from .output import Progress, error, say_err, say_record

__all__ = ["add_jobs", "find_models", "run_models", "Found", "Batch", "jobs_wanted"]

#: One model's work, made once per process by the command's ``prepare()``: ``(path, bar)
#: -> result``; ``bar`` is the run's progress bar (or a silent one, in a worker).
OneModel = Callable[[str, Any], Any]


def add_jobs(p: argparse.ArgumentParser) -> None:
    """``--jobs N``: the models at once, each in a worker process of its own."""
    p.add_argument("--jobs", "-j", type=whole_number, default=1, metavar="N",
                   help="run N models at once, each in a worker process of its own "
                   "(default 1; 0: one per CPU core); results come in the models' order")


def jobs_wanted(jobs: int, models: int) -> int:
    """The worker processes to start: ``jobs`` (0: the CPU cores this process may use),
    never more than there are models."""
    if jobs == 0:
        try:
            jobs = len(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            jobs = os.cpu_count() or 1
    return max(1, min(jobs, models))


# -- finding the models -----------------------------------------------------------------------
@dataclass
class Found:
    """The models to run, in order; the files skipped (path, why) and the folders that
    held no IR (path, message); ``folders``: some MODEL was a folder."""

    models: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)
    folders: bool = False


#: what stands before the root element: the XML declaration, processing instructions,
#: comments, a DOCTYPE (with an internal subset)
_PROLOG = re.compile(r"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]|\[.*?\])*>)", re.S)
_ROOT = re.compile(r"\s*<([^\s/>!?]+)")
#: bytes read to find the root element (an IR's begins at once)
_HEAD = 1 << 16


def root_element(path: str) -> str | None:
    """The name of the root element of the XML file ``path`` (as written: ``net``,
    ``ns:config``), or None when its first bytes are no XML; OSError when unreadable."""
    with open(path, "rb") as f:
        head = f.read(_HEAD)
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"),
                       (b"\xfe\xff", "utf-16-be")):
        if head.startswith(bom):
            text = head[len(bom):].decode(codec, "replace")
            break
    else:
        text = head.decode("latin-1")  # the markup is ASCII in every 8-bit encoding
    pos = 0
    while (m := _PROLOG.match(text, pos)) is not None and m.end() > pos:
        pos = m.end()
    m = _ROOT.match(text, pos)
    return None if m is None else m[1]


def _order(path: str) -> tuple:
    """Path order, a folder named by a number by its number (``2/`` before ``10/``)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in path.split(os.sep))


def _not_a_model(path: str) -> str | None:
    """Why the file ``path`` of a folder is no IR to run, or None when it is one (or
    cannot be read: then the reader says why, as for a file given by name)."""
    if path.lower().endswith(".onnx"):
        return "an .onnx model: pass it by name to take it"
    try:
        root = root_element(path)
    except OSError:
        return None
    if root is None:
        return "not an XML document"
    if root != "net":
        return f"not an IR: its root element is <{root}>, an IR's is <net>"
    return None


def _files_in(folder: str, empty: list[tuple[str, str]]) -> list[str]:
    """The .xml and .onnx files below ``folder``, hidden folders left out, in path order;
    a folder that cannot be listed goes into ``empty`` (path, message)."""
    found = []

    def unlisted(err: OSError) -> None:
        empty.append((err.filename or folder, f"the folder cannot be read: "
                      f"{err.strerror or err}"))

    for top, dirs, files in os.walk(folder, onerror=unlisted):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [os.path.join(top, f) for f in files
                  if f.lower().endswith((".xml", ".onnx")) and not f.startswith(".")]
    return sorted(found, key=_order)


def find_models(inputs: list[str]) -> Found:
    """The models that ``inputs`` (files and folders, as given) stand for, in order: a
    file as it is (the reader judges it), a folder by the IRs below it. Prints a ``note:``
    line on stderr for each file skipped."""
    found = Found()
    for given in inputs:
        if not os.path.isdir(given):
            found.models.append(given)
            continue
        found.folders = True
        taken = 0
        for path in _files_in(given, found.empty):
            why = _not_a_model(path)
            if why is None:
                found.models.append(path)
                taken += 1
            else:
                found.skipped.append((path, why))
                say_err(f"note: skipped {path}: {why}")
        if not taken:
            found.empty.append((given, "no IR in this folder (an .xml file whose root "
                                "element is <net>)"))
    return found


# -- running them -----------------------------------------------------------------------------
@dataclass
class Batch:
    """What a run of many models gave: the results of the models that could be used, in
    order; ``errors`` (path, message) of those that could not; ``failing`` the paths whose
    result has a problem (exit 1)."""

    found: Found
    results: list[Any] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)

    @property
    def code(self) -> int:
        """The worst exit code of the models: 2 when one could not be used (or a folder
        held no IR), else 1 when one has a problem, else 0."""
        if self.errors or self.found.empty:
            return EXIT_BAD_INPUT
        return EXIT_PROBLEM if self.failing else EXIT_OK

    def totals(self) -> dict[str, int]:
        used = len(self.results)
        return {"models": used + len(self.errors), "ok": used - len(self.failing),
                "failing": len(self.failing), "errors": len(self.errors) + len(self.found.empty),
                "skipped": len(self.found.skipped)}

    def json_fields(self) -> dict[str, Any]:
        """What a run with a folder adds to the JSON document (docs/json.md): the
        ``totals``, the ``errors`` (path and message) and the ``skipped`` files (path and
        why); nothing for a run of files only."""
        if not self.found.folders:
            return {}
        return {"totals": self.totals(),
                "errors": [{"path": p, "message": m}
                           for p, m in [*self.found.empty, *self.errors]],
                "skipped": [{"path": p, "why": w} for p, w in self.found.skipped]}

    def print_summary(self) -> None:
        """The summary of a run with a folder, after the models' own output (none when
        no model ran: the error lines say all)."""
        if not self.found.folders or not self.found.models:
            return
        t = self.totals()
        skipped = f"; {t['skipped']} file(s) skipped" if t["skipped"] else ""
        say_record(f"summary: {t['models']} model(s): {t['ok']} ok, {t['failing']} failing, "
                   f"{t['errors']} could not be used{skipped}")
        for path in self.failing:  # whole lines, as the models' own summary lines
            say_record(f"  failing: {path}")
        for path, _ in [*self.found.empty, *self.errors]:
            say_record(f"  could not be used: {path}")


class _Silent:
    """The progress bar of a worker process: it draws nothing (the parent has the bar)."""

    def update(self, n: int = 1) -> None:
        pass

    def describe(self, desc: str) -> None:
        pass

    def reset(self, total: int | None, desc: str | None = None) -> None:
        pass


def run_models(args: argparse.Namespace, found: Found, prepare: Callable[[], OneModel],
               failing: Callable[[Any], bool], show: Callable[[Any], None] | None = None,
               steps: int | None = None, verb: str = "checking",
               warm: Callable[[], object] | None = None) -> Batch:
    """Run ``prepare()(path, bar)`` for every model of ``found`` (``args.jobs`` at once)
    and ``show(result)`` each in order (human output only); ``failing(result)``: it has a
    problem. ``steps``: the steps of one model on the run's progress bar (None: the
    function makes its own bar per model). ``warm()``, before the workers are forked,
    imports what every model needs once for all of them (never openvino: a process that
    holds OpenVINO's threads must not fork). A folder with no IR prints its error first."""
    batch = Batch(found)
    for path, message in found.empty:
        error(f"{path}: {message}")
    debug = getattr(args, "debug", False)
    jobs = jobs_wanted(getattr(args, "jobs", 1), len(found.models))

    def take(path: str, outcome: tuple) -> None:
        kind, value, trace = outcome
        if kind == "ok":
            batch.results.append(value)
            if failing(value):
                batch.failing.append(getattr(value, "path", None) or path)
            if show is not None and not args.json:
                show(value)
            return
        if trace:
            sys.stderr.write(trace)
        error(value)
        batch.errors.append((path, value))

    if jobs == 1:
        one = prepare() if found.models else None
        with (Progress(steps * len(found.models), unit="step") if steps else
              contextlib.nullcontext()) as bar:
            for path in found.models:
                take(path, _run_one(one, path, bar, debug))
        return batch
    if warm is not None:
        warm()
    with _gc_paused(), _Pool(jobs, prepare, debug) as pool, \
            Progress(len(found.models), f"{verb} {len(found.models)} models",
                     unit="model") as bar:
        for path, outcome in pool.in_order(found.models):
            bar.update()
            take(path, outcome)
    return batch


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection in the parent while the workers run: it makes
    little garbage, and a collection's walk over every object unpickled so far cost
    four times the unpickling itself (0.15 s of 0.19 s for ir_corpus's reports). What
    exists is frozen before the fork, so the workers' collections do not touch (and copy)
    the pages they share with the parent."""
    import gc

    was = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def _run_one(one: OneModel, path: str, bar: Any, debug: bool) -> tuple[str, Any, str]:
    """``("ok", result, "")``, or ``("error", the error line's text, its traceback when
    debug)`` for a model that cannot be used or that meets a bug of ovgather."""
    try:
        return "ok", one(path, bar), ""
    except OvgatherError as err:
        err.located(file=path)
        return "error", one_line(str(err)), _trace(err, debug)
    except Exception as err:  # a bug of ovgather: this model's error, the others still run
        return "error", one_line(f"{path}: internal error ({type(err).__name__}: {err}); "
                                 "rerun with --debug and report it"), _trace(err, debug)


def _trace(err: BaseException, debug: bool) -> str:
    if not debug:
        return ""
    import traceback

    return "".join(traceback.format_exception(err))


# -- the worker processes ---------------------------------------------------------------------
class _PrepareFailed(Exception):
    """``prepare()`` failed in a worker (an --extension that cannot be loaded): the run
    stops with that error, as it does with one job."""


class _Pool:
    """``size`` forked worker processes, each running one model at a time."""

    def __init__(self, size: int, prepare: Callable[[], OneModel], debug: bool) -> None:
        import multiprocessing

        self._ctx = multiprocessing.get_context("fork")
        self._prepare, self._debug = prepare, debug
        self._workers: list[Any] = []
        for _ in range(size):  # all now, before the progress bar's thread starts
            self._workers.append(self._start())

    def _start(self) -> Any:
        here, there = self._ctx.Pipe()
        others = [w.conn for w in self._workers]
        proc = self._ctx.Process(target=_serve, daemon=True, name="ovgather-job",
                                 args=(there, here, others, self._prepare, self._debug,
                                       os.getpid()))
        # born with Ctrl-C blocked, so that one pressed now cannot reach the worker before
        # it ignores Ctrl-C (the parent gets it as soon as the fork is done)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        there.close()
        proc.conn = here
        return proc

    def in_order(self, paths: list[str]) -> Iterator[tuple[str, tuple]]:
        """``(path, outcome)`` for every path, in the order of ``paths``, each as soon as
        it and those before it are done."""
        done: dict[int, tuple] = {}
        shown = 0
        for i, outcome in self._as_done(paths):
            done[i] = outcome
            while shown in done:
                yield paths[shown], done.pop(shown)
                shown += 1

    def _as_done(self, paths: list[str]) -> Iterator[tuple[int, tuple]]:
        from multiprocessing.connection import wait

        todo = list(enumerate(paths))[::-1]
        busy: dict[Any, tuple[int, str]] = {}
        idle = list(self._workers)
        while todo or busy:
            while todo and idle:
                w = idle.pop()
                busy[w] = todo.pop()
                try:
                    w.conn.send(busy[w][1])
                except OSError:  # it has just died: its sentinel says so below
                    pass
            ready = set(wait([w.conn for w in busy] + [w.sentinel for w in busy]))
            for w in [w for w in busy if w.conn in ready or w.sentinel in ready]:
                i, path = busy.pop(w)
                try:
                    outcome = w.conn.recv()
                except (EOFError, OSError):
                    outcome = self._died(w, path)
                    w = None
                    if todo:  # a new worker takes the dead one's place
                        w = self._start()
                        self._workers.append(w)
                if outcome[0] == "prepare":
                    raise _PrepareFailed(outcome[1])
                if w is not None:
                    idle.append(w)
                yield i, outcome

    def _died(self, w: Any, path: str) -> tuple[str, str, str]:
        w.join()
        self._workers.remove(w)
        w.conn.close()
        code = w.exitcode
        how = (signal.Signals(-code).name if code is not None and code < 0
               and -code in signal.Signals._value2member_map_ else f"exit code {code}")
        return "error", f"{path}: the worker process running this model ended ({how})", ""

    def __enter__(self) -> _Pool:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        """Normal end: each worker told to stop; an interruption or error: SIGTERM (the
        worker stops its own children), then SIGKILL for one that does not end at once."""
        for w in self._workers:
            if kind is None:
                try:
                    w.conn.send(None)
                except OSError:
                    pass
            else:
                w.terminate()
        for w in self._workers:
            w.join(timeout=None if kind is None else 3)
            if w.is_alive():
                w.kill()
                w.join()
            w.conn.close()
        if isinstance(exc, _PrepareFailed):
            raise OvgatherError(str(exc)) from None


def _serve(conn: Any, parent_end: Any, others: list[Any], prepare: Callable[[], OneModel],
           debug: bool, parent: int) -> None:
    """A worker: run each path received, send back its outcome; stop at None, at a
    closed pipe or at SIGTERM."""
    parent_end.close()
    for c in others:  # the parent's ends of the earlier workers' pipes, inherited by fork
        c.close()
    _die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGTERM, _stop)
    import gc

    gc.enable()  # the parent paused it (_gc_paused): the models' garbage is collected here
    one = None
    try:
        while True:
            try:
                path = conn.recv()
            except (EOFError, OSError):
                return
            if path is None:
                return
            if one is None:
                try:
                    one = prepare()
                except Exception as err:  # noqa: BLE001 - the run stops with this error
                    conn.send(("prepare", one_line(str(err)), ""))
                    return
            outcome = _run_one(one, path, _Silent(), debug)
            try:
                conn.send(outcome)
            except Exception as err:  # noqa: BLE001 - a result that does not pickle
                conn.send(("error", one_line(f"{path}: internal error (the result could not "
                                             f"be sent back: {err}); rerun with --debug and "
                                             "report it"), ""))
    finally:
        _stop_runtime()


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _die_with(parent: int) -> None:
    """Have the kernel send SIGTERM to this process when its parent ends (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent ended before the request took effect
        os._exit(EXIT_BAD_INPUT)


def _stop_runtime() -> None:
    """Stop the OpenVINO processes this worker started (validate), which a forked
    process's exit would otherwise leave to find their closed pipe."""
    if "ovgather.runtime.worker" in sys.modules:
        from ..runtime import shared_workers

        shared_workers().close()
