"""Runtime work in a child process, so that a crash of OpenVINO's native code (SIGSEGV,
SIGFPE, an abort inside the CPU plugin) ends the child, never ovgather: the caller gets a
:class:`RuntimeCrash` naming the signal, and the next call starts a new child.

Screening known crashes one by one (``core.compile_crash``) does not scale; this does.
One child serves every call of a run (started on first use, about a second to import
OpenVINO there, then each call costs a round trip through a pipe), and is started again
only after a crash. :func:`run_split` runs a group of items (layers, cases) and, when the
child dies on it, splits the group until the items that crash it alone are found: those
get the crash, the others their results.

The function a call runs is sent by reference (module and name, as ``pickle`` does), its
arguments and result by value, through two pipes to a fresh interpreter (running
:func:`child_main`, with this process's ``sys.path``): no fork of a process that
holds OpenVINO's threads (which may hang), and no new import of the caller's script
(which ``multiprocessing``'s spawn would make). What OpenVINO prints there goes to stderr.

Ctrl-C in a terminal reaches the whole foreground process group, the child with it: the
child then ends at once and silently (SIGINT at its default action, never Python's
KeyboardInterrupt and its traceback), and the call it was running raises
KeyboardInterrupt in the caller, not a :class:`RuntimeCrash` (no new child is started
for the work that was interrupted). A child of a process that ignores SIGINT (a
``--jobs`` worker, a run started with ``&``) ignores it too and is stopped by its parent.

>>> with Worker() as w:
...     w.call(divmod, 7, 2)
(3, 1)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from ..errors import RuntimeBridgeError

__all__ = ["RuntimeCrash", "Worker", "Workers", "run_split", "shared_worker", "shared_workers",
           "child_main", "kill_children"]


class RuntimeCrash(RuntimeBridgeError):
    """The child process died while running a call (a signal in native code, most often):
    ``signal_name`` says which (``SIGSEGV``), or the exit code when it was no signal."""

    def __init__(self, message: str, signal_name: str = "") -> None:
        super().__init__(message)
        self.signal_name = signal_name


def _serve(recv: Connection, conn: Connection) -> None:
    """The child's loop: run each ``(function, args, kwargs)`` received, send back
    ``(True, result)`` or ``(False, exception)``; stop at None or a closed pipe."""
    while True:
        try:
            msg = recv.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        fn, args, kwargs = msg
        try:
            reply: tuple[bool, Any] = (True, fn(*args, **kwargs))
        except Exception as err:  # noqa: BLE001 - every error goes back to the caller
            reply = (False, err)
        try:
            conn.send(reply)
        except Exception as err:  # noqa: BLE001 - an unpicklable result or error
            conn.send((False, RuntimeBridgeError(f"{type(err).__name__}: {err}")))


def _signal_words(exitcode: int | None) -> tuple[str, str]:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return name, f"the runtime crashed ({name})"
    return "", f"the runtime's process ended (exit code {exitcode})"


#: The threads (other than the main one) that were running when a child was ended by
#: SIGINT (Ctrl-C): a call from one of them raises KeyboardInterrupt at once rather than
#: start a child again, so that a pool of threads whose caller was interrupted ends its
#: queued work quickly; a new thread (a new pool) calls as usual.
_INTERRUPTED: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
#: Every Worker whose child may be running, for :func:`kill_children` (by the id of the
#: process that started it: a forked process holds copies of its parent's)
_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()


def _interrupted() -> KeyboardInterrupt:
    """The threads running now take part in an interrupted run (see ``_INTERRUPTED``)."""
    main = threading.main_thread()
    _INTERRUPTED.update(t for t in threading.enumerate() if t is not main)
    return KeyboardInterrupt()


class Worker:
    """One child process running calls one at a time (a lock keeps threads in turn)."""

    def __init__(self) -> None:
        self._proc: Any = None
        self._conn: Any = None
        self._owner = 0
        self._killed = False
        self._lock = threading.Lock()
        #: children started so far (1 unless the runtime crashed)
        self.starts = 0

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        if self._proc is not None:  # a forked process's copy of its parent's child
            self._drop()  # (a crashed one was dropped): its pipes let go
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        # born with Ctrl-C blocked (the mask of this thread, inherited through exec): one
        # pressed while the child's Python starts waits until the child has set SIGINT's
        # action (_CHILD), and then ends it silently rather than with a traceback
        held = _block_sigint()
        try:
            self._proc = subprocess.Popen([sys.executable, "-c", _CHILD], env=env,
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        finally:
            _restore_mask(held)
        self._owner, self._killed = os.getpid(), False
        _LIVE.add(self)
        self._conn = (Connection(os.dup(self._proc.stdin.fileno()), readable=False),
                      Connection(os.dup(self._proc.stdout.fileno()), writable=False))
        self._proc.stdin.close()
        self._proc.stdout.close()
        self.starts += 1

    @property
    def generation(self) -> int | None:
        """Which child is running (:attr:`starts` at its start), None when none is: what
        a caller that keeps state in the child (a compiled model) checks before relying
        on it, as a crash takes that state with the child."""
        with self._lock:
            alive = self._proc is not None and self._proc.poll() is None
            return self.starts if alive else None

    def start(self) -> None:
        """Start the child now, without waiting for it: it imports OpenVINO while the
        caller reads and plans (the first call then finds it ready)."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` run in the child; its exception raised here; a
        :class:`RuntimeCrash` when the child dies meanwhile."""
        if threading.current_thread() in _INTERRUPTED:
            raise KeyboardInterrupt
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            send, recv = self._conn
            try:
                send.send((fn, args, kwargs))
                ok, value = recv.recv()
            except (EOFError, OSError) as err:
                code, killed = self._proc.wait(), self._killed
                self._drop()
                if code == -signal.SIGINT or killed:  # Ctrl-C, or this process is
                    raise _interrupted() from None  # ending: interrupted, not crashed
                name, words = _signal_words(code)
                raise RuntimeCrash(words, name) from err
            except BaseException:  # KeyboardInterrupt here: the reply would answer the
                self._proc.kill()  # next call, so this child goes
                self._proc.wait()
                self._drop()
                raise
        if ok:
            return value
        raise value

    def close(self) -> None:
        """Stop the child: it holds nothing to save, so it is killed rather than waited
        for (OpenVINO's teardown there takes half a second)."""
        with self._lock:
            if self._proc is None:
                return
            if self._owner == os.getpid():  # a forked process's copy: its parent's child
                self._proc.kill()
                self._proc.wait()
            self._drop()

    def _drop(self) -> None:
        for conn in self._conn:
            conn.close()
        self._proc = self._conn = None
        _LIVE.discard(self)

    def kill(self) -> None:
        """SIGKILL to the child, if this process started one, without waiting or taking
        the lock: what a signal handler may do while a call holds it (the call then
        sees the child gone)."""
        proc = self._proc
        if proc is not None and self._owner == os.getpid():
            self._killed = True
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except OSError:
                pass


def kill_children() -> None:
    """SIGKILL to every runtime child this process started (:meth:`Worker.kill`): for a
    process that ends at once from a signal handler, which must not wait for a lock."""
    for worker in list(_LIVE):
        worker.kill()


def _block_sigint() -> Any:
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _restore_mask(held: Any) -> None:
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


class Workers:
    """A few :class:`Worker` children taking calls side by side, each call in the first
    one free (OpenVINO compiles without the GIL in the caller's threads; across
    processes the same holds). A child is started only when every other one is busy."""

    def __init__(self, size: int) -> None:
        self.children = [Worker() for _ in range(max(1, size))]
        self._free = list(self.children)
        self._cond = threading.Condition()

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """:meth:`Worker.call` in a free child."""
        with self._cond:
            while not self._free:
                self._cond.wait()
            child = self._free.pop(0)
        try:
            return child.call(fn, *args, **kwargs)
        finally:
            with self._cond:
                self._free.insert(0, child)  # a started child before an idle one
                self._cond.notify()

    def start(self) -> None:
        """Start the first child now (:meth:`Worker.start`); the others start when two
        calls run at once."""
        self.children[0].start()

    def close(self) -> None:
        for child in self.children:
            child.close()


#: the children of this process's runtime proofs (``validate``'s two compiling threads)
SHARED_SIZE = 2
_SHARED: list[Workers] = []


def shared_workers() -> Workers:
    """The workers of this process's runtime proofs, started on first use and stopped at
    exit (the same children for a whole ``validate``, every mode)."""
    if not _SHARED:
        import atexit

        _SHARED.append(Workers(SHARED_SIZE))
        atexit.register(_SHARED[0].close)
    return _SHARED[0]


def shared_worker() -> Worker:
    """One child of :func:`shared_workers`, for work that keeps state there between calls
    (a compiled model run at several sizes)."""
    return shared_workers().children[0]


def run_split(worker: Worker | Workers, fn: Callable[..., list[Any]], items: Sequence[Any],
              *args: Any, **kwargs: Any) -> list[Any]:
    """``fn(items, *args, **kwargs)`` (one result per item) run in ``worker``; when the
    child dies on the group it is split in halves and each run again, down to single
    items: an item that crashes the child alone gets the :class:`RuntimeCrash` as its
    result (with ``group``, the items of the first group that crashed, on it), the
    others their own results."""
    return _split(worker, fn, list(items), None, args, kwargs)


def _split(worker, fn, items: list[Any], group: list[Any] | None, args, kwargs) -> list[Any]:
    if not items:
        return []
    try:
        return list(worker.call(fn, items, *args, **kwargs))
    except RuntimeCrash as crash:
        if len(items) == 1:
            crash.group = group or items
            return [crash]
        group = group or items
        half = len(items) // 2
        return (_split(worker, fn, items[:half], group, args, kwargs)
                + _split(worker, fn, items[half:], group, args, kwargs))


def child_main() -> None:
    """The child: the protocol on descriptors of its own, anything printed to stderr."""
    requests = Connection(os.dup(0), writable=False)
    replies = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    from .core import openvino

    openvino()  # every call needs it: imported while the caller is still busy
    _serve(requests, replies)


#: The child's program: SIGINT (still blocked, :meth:`Worker._start`) at its default
#: action, an end without a word, unless it came ignored (kept so), then unblocked; then
#: :func:`child_main`.
_CHILD = ("import signal as s\n"
          "if s.getsignal(s.SIGINT) is s.default_int_handler: s.signal(s.SIGINT, s.SIG_DFL)\n"
          "if hasattr(s, 'pthread_sigmask'): s.pthread_sigmask(s.SIG_UNBLOCK, {s.SIGINT})\n"
          f"from {__name__} import child_main; child_main()")
