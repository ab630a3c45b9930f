"""Folders of models and ``--jobs``: how ``check``, ``infer`` and ``validate`` run many models.

A MODEL that is a folder stands for the IRs below it (:func:`find_models`): every ``.xml``
file whose root element is ``<net>``, the one OpenVINO's reader takes, in path order with
number folders by number (a model server's ``1/``, ``2/``, ``10/``). Another ``.xml`` file
(a config, a Pascal VOC label file), an ``.onnx`` file, a file that is no regular file (a
FIFO, a socket, a device: never opened, it could block) and one that vanished since the
folder was listed are skipped with a ``note:`` line on stderr; hidden folders (``.git``,
``.ipynb_checkpoints``) are not searched. The root element is read as OpenVINO's reader
meets it: after the prolog, however long, in any encoding the XML parser accepts (UTF-16
with or without a byte-order mark). A symbolic link loop and a broken link are skipped
too, with their note. A file that cannot be decided (an unreadable file, a prolog the
parser stops in) is taken as a model, so the reader reports it (``error:``, exit 2):
never dropped in silence. Every file found is counted once in the summary: a model (ok,
failing or could not be used) or skipped.

:func:`run_models` runs one function per model, in this process (``--jobs 1``) or in N
worker processes (``--jobs N``), and gives the results in the models' order whatever the
order they finish in: each result is shown as soon as it and those before it are done,
so the output is the one of a run with one job. Never more workers start than the CPU
cores, the open-file limit (``ulimit -n``) and the models allow; a ``note:`` line says so
when ``--jobs`` asked for more. A model that cannot be used (an
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
import errno
import os
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import OvgatherError
from .common import EXIT_BAD_INPUT, EXIT_OK, EXIT_PROBLEM, add_jobs, one_line, run_one, take_outcome
from .output import Progress, error, say_err, say_record

__all__ = ["add_jobs", "find_models", "run_models", "Found", "Batch", "jobs_wanted"]

#: One model's work, made once per process by the command's ``prepare()``: ``(path, bar)
#: -> result``; ``bar`` is the run's progress bar (or a silent one, in a worker).
OneModel = Callable[[str, Any], Any]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


#: file descriptors the parent holds per worker process (its pipe end and its sentinel,
#: and for a moment the other ends while it starts), and those kept for everything else
_FDS_PER_WORKER, _FDS_KEPT = 4, 32


def _fd_room() -> int | None:
    """The worker processes the open-file limit (RLIMIT_NOFILE) leaves room for, or None
    when there is no limit to speak of."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft > 1 << 20:
        return None
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:
        used = 16
    return max(1, (soft - used - _FDS_KEPT) // _FDS_PER_WORKER)


def worker_count(jobs: int, models: int) -> tuple[int, str | None]:
    """The worker processes to start for ``--jobs jobs`` and ``models`` models, and the
    line that says why fewer than asked run, or None: never more than the CPU cores this
    process may use (``jobs`` 0: that many), than the open-file limit leaves room for, or
    than there are models (which needs no line)."""
    cores = _cores()
    if jobs == 0:
        jobs = cores
    asked = jobs
    why = []
    if jobs > cores:
        jobs = cores
        why.append(f"{cores} CPU core(s)")
    room = _fd_room()
    if room is not None and jobs > room:
        jobs = room
        why.append(f"room for {room} under the open-file limit (ulimit -n)")
    count = max(1, min(jobs, models))
    if not why or count >= min(asked, models):
        return count, None
    return count, (f"--jobs {asked}: running {count} worker process(es) at once, what this "
                   f"machine allows ({', '.join(why)}) for {models} model(s)")


def jobs_wanted(jobs: int, models: int) -> int:
    """The worker processes to start (see :func:`worker_count`)."""
    return worker_count(jobs, models)[0]


# -- finding the models -----------------------------------------------------------------------
@dataclass
class Found:
    """The models to run, in order; the files skipped (path, why) and the folders that
    held no IR (path, message); ``folders``: some MODEL was a folder."""

    models: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)
    folders: bool = False


def root_element(path: str) -> str | None:
    """The name of the root element of the XML file ``path`` as written (``net``,
    ``ns:config``), read as OpenVINO's reader meets it (ir/parse.py ``document_root``:
    after a prolog of any length, in any encoding the XML parser accepts), or None when it
    cannot be told; OSError when the file cannot be read or is no regular file."""
    from ..ir.parse import RootUnknown, document_root

    try:
        return document_root(path)[0]
    except RootUnknown:
        return None


def _order(path: str) -> tuple:
    """Path order, a folder named by a number by its number (``2/`` before ``10/``)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in path.split(os.sep))


#: the kinds of file that are no regular file, by the stat test that tells each
_KINDS = (("S_ISFIFO", "a FIFO"), ("S_ISSOCK", "a socket"), ("S_ISCHR", "a character device"),
          ("S_ISBLK", "a block device"), ("S_ISDIR", "a folder"))


def _not_a_model(path: str) -> str | None:
    """Why the file ``path`` of a folder is no IR to run, or None when it is one, or when
    that cannot be decided (then the reader says why, as for a file given by name: a file
    that cannot be read, a prolog the XML parser stops in). A FIFO, a socket or a device
    is never opened (it could block forever); a symbolic link loop, a broken link and a
    file gone since the listing are skipped with the reason."""
    import stat

    from ..ir.parse import RootUnknown, document_root

    if path.lower().endswith(".onnx"):
        return "an .onnx model: pass it by name to take it"
    try:
        os.lstat(path)
    except FileNotFoundError:
        return "it vanished after its folder was listed"
    except OSError:
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError as err:  # a link: to itself, to no file; else the reader reports it
        if err.errno == errno.ELOOP:
            return "a symbolic link loop: there is no file to read"
        if err.errno in (errno.ENOENT, errno.ENOTDIR):
            return "a broken symbolic link: it points at no file"
        return None
    if not stat.S_ISREG(mode):
        kind = next((what for test, what in _KINDS if getattr(stat, test)(mode)),
                    "no regular file")
        return f"not a regular file ({kind}); it is not opened"
    try:
        root, _, _ = document_root(path)
    except RootUnknown as err:
        return err.why if err.not_xml else None
    except OSError:
        return None
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
        """The counts of the run (docs/json.md): ``models`` is ``ok`` + ``failing`` + the
        models that could not be used; ``errors`` adds the folders that gave no model (the
        length of the JSON ``errors``); every file found below a folder is a model or
        ``skipped``."""
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
        folders = (f"; {len(self.found.empty)} folder(s) could not be used"
                   if self.found.empty else "")
        skipped = f"; {t['skipped']} file(s) skipped" if t["skipped"] else ""
        say_record(f"summary: {t['models']} model(s): {t['ok']} ok, {t['failing']} failing, "
                   f"{len(self.errors)} could not be used{folders}{skipped}")
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
    jobs, capped = worker_count(getattr(args, "jobs", 1), len(found.models))
    if capped is not None:
        say_err(f"note: {capped}")

    def take(path: str, outcome: tuple) -> None:
        take_outcome(batch, path, outcome, failing, None if args.json else show)

    if jobs == 1:
        one = prepare() if found.models else None
        with (Progress(steps * len(found.models), unit="step") if steps else
              contextlib.nullcontext()) as bar:
            for path in found.models:
                take(path, run_one(one, path, bar, debug))
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
                except OvgatherError as err:  # the run stops with this error, as with one job
                    conn.send(("prepare", one_line(str(err)), ""))
                    return
                except Exception as err:  # noqa: BLE001 - a bug: the line main() gives it
                    conn.send(("prepare", one_line(f"internal error ({type(err).__name__}: "
                                                   f"{err}); rerun with --debug and report "
                                                   "it"), ""))
                    return
            outcome = run_one(one, path, _Silent(), debug)
            try:
                conn.send(outcome)
            except Exception as err:  # noqa: BLE001 - a result that does not pickle
                conn.send(("error", one_line(f"{path}: internal error (the result could not "
                                             f"be sent back: {err}); rerun with --debug and "
                                             "report it"), ""))
    finally:
        _stop_runtime()


def _stop(signum: int, frame: Any) -> None:
    """SIGTERM from the parent (Ctrl-C, an error): the runtime's processes killed at once
    (a call waiting on one ends), then an exit through the ``finally`` blocks, without a
    word: should it land in a ``__del__``, where Python would print it and go on, the
    worker ends there (:func:`_quiet_exit`)."""
    sys.unraisablehook = _quiet_exit
    _stop_runtime_now()
    raise SystemExit(128 + signum)


def _quiet_exit(unraisable: Any) -> None:
    """The end of a worker stopped by SIGTERM, whatever Python was doing: no traceback
    (the parent says what happened)."""
    code = unraisable.exc_value.code if isinstance(unraisable.exc_value, SystemExit) else 1
    with contextlib.suppress(Exception):
        _stop_runtime_now()
    os._exit(code if isinstance(code, int) else 1)


def _stop_runtime_now() -> None:
    if "ovgather.runtime.worker" in sys.modules:
        from ..runtime.worker import kill_children

        kill_children()


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
