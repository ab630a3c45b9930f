"""The one way ovgather writes files: all or nothing, never through a link, never
over the input model by accident.

Every output goes through :class:`AtomicOutput`: an IR's .xml + .bin pair
(``ir.write_ir``) and the pictures of ``show`` (DOT, SVG, PNG). The rules:

* **Temporary files are unpredictable and private.** The new files are written into a
  fresh folder made by :func:`tempfile.mkdtemp` inside the destination folder (name
  ``.ovgather-XXXXXXXX``, mode 0700), each file created with ``O_EXCL | O_NOFOLLOW``. No
  other user can guess, pre-create or link a name ovgather then writes through, and the
  same folder keeps the renames on one file system.
* **A link is replaced, never written through.** The last step is ``rename(2)`` onto the
  destination, which replaces a symbolic link named as the output by the new file and
  leaves the link's target alone. (A destination that resolves to a file of the input
  model is refused earlier, by :func:`clashes_with_model`, unless the caller allows an
  in-place write.)
* **A pair is never mixed.** The .bin is renamed first, then the .xml, while an
  exclusive ``flock`` is held on the destination folder itself (no lock file is left
  behind): two ovgather processes writing the same output take turns in this short
  commit step, so the last one wins with both of its files. Before the commit the old
  .bin is hard-linked into the private folder; if the .xml rename fails, the old .bin is
  put back, so a failure leaves the old pair byte for byte.
* **Signals clean up.** While a write is under way SIGINT, SIGTERM and SIGHUP are caught
  (the handlers are installed only for the write and restored afterwards, only in the
  main thread, where Python runs them, and only for signals that still have their
  default action: a program's own handler, or SIGHUP ignored under ``nohup``, stays).
  Arriving while the data is written, the signal stops the write and the private folder
  is removed: the old files stay. Arriving during the commit or the clean-up, it is held
  until both renames are done and then raised, so an ``--in-place`` write is never left
  half-renamed by a signal. It is raised as :class:`Interrupted` (a ``KeyboardInterrupt``)
  carrying the signal number; the CLI exits with ``128 + signal``.

Only SIGKILL or a power cut inside the commit step (two renames, microseconds) can still
leave a new .bin beside the old .xml; the private folder then stays behind too, holding
the old .bin (``0.old``), which is the recovery: move it back over the .bin.

Why a folder and not two temporary files beside the outputs: one clean-up removes
everything however far the write got, and nothing in the destination folder except the
final names ever becomes visible under a guessable name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .errors import OutputError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, writers do not take turns
    fcntl = None

__all__ = ["AtomicOutput", "Interrupted", "clashes_with_model", "model_files", "same_file"]

#: Test hook: called as ``_hook(point)`` at "started" (private folder made), "written"
#: (data written, before the commit), "committing" (lock held, before the first rename)
#: and "between-renames".
_hook: Callable[[str], None] | None = None

_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None),
                             getattr(signal, "SIGHUP", None)) if s is not None)


class Interrupted(KeyboardInterrupt):
    """A write stopped (or finished, then stopped) by SIGINT, SIGTERM or SIGHUP."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def signal_name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:  # pragma: no cover
            return f"signal {self.signum}"


# ---------------------------------------------------------------------------------------
# Which files belong to the input model
# ---------------------------------------------------------------------------------------
def model_files(model: str | os.PathLike[str]) -> list[Path]:
    """The files of a model: an IR's .xml and the .bin beside it; another file alone."""
    path = Path(model)
    if path.suffix.lower() == ".xml":
        return [path, path.with_suffix(".bin")]
    return [path]


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name the same file, under any spelling: the same inode
    when both exist (this also covers links and case-insensitive file systems), else the
    same real path, compared case-folded when the folder ignores case."""
    sa, sb = _stat(a), _stat(b)
    if sa is not None and sb is not None:
        return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
    ra, rb = os.path.realpath(a), os.path.realpath(b)
    if ra == rb:
        return True
    if ra.casefold() != rb.casefold():
        return False
    return _ignores_case(Path(ra).parent) and _ignores_case(Path(rb).parent)


def _ignores_case(folder: Path) -> bool:
    """Whether the file system of ``folder`` ignores case (probed with the folder's own
    name spelt otherwise); False when that cannot be told."""
    name = folder.name
    other = name.swapcase()
    if not name or other == name:
        return False
    mine, theirs = _stat(folder), _stat(folder.with_name(other))
    return mine is not None and theirs is not None and (
        (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino))


def clashes_with_model(outputs: Sequence[str | os.PathLike[str]],
                       model: str | os.PathLike[str] | None) -> Path | None:
    """The first of ``outputs`` that is a file of the input ``model`` (its .xml or its
    .bin, under any spelling: case, ``./``, symbolic or hard links), or None.

    Every command that writes asks this before writing; only ``--in-place`` may go on.
    """
    if model is None:
        return None
    inputs = model_files(model)
    for out in outputs:
        for src in inputs:
            if same_file(Path(out), src):
                return Path(out)
    return None


# ---------------------------------------------------------------------------------------
# Signals
# ---------------------------------------------------------------------------------------
class _Signals:
    """SIGINT/SIGTERM/SIGHUP handlers for the length of one write: raise while the data
    is written, hold the signal while ``deferred`` (commit and clean-up)."""

    def __init__(self) -> None:
        self.deferred = False
        self.pending: int | None = None
        self.old: dict[int, Any] = {}

    def install(self) -> None:
        """Take over the signals that still have their default action (a program's own
        handler, or an ignored SIGHUP under ``nohup``, is left alone)."""
        if threading.current_thread() is not threading.main_thread():
            return  # Python runs handlers in the main thread only
        for signum in _SIGNALS:
            try:
                current = signal.getsignal(signum)
                if current in (signal.SIG_DFL, signal.default_int_handler):
                    self.old[signum] = signal.signal(signum, self.handle)
            except (OSError, ValueError):  # pragma: no cover
                pass

    def handle(self, signum: int, frame: object) -> None:
        if self.deferred:
            self.pending = self.pending or signum
            return
        raise Interrupted(signum)

    def restore(self) -> int | None:
        """Put the old handlers back; the signal held meanwhile, if any."""
        self.deferred = True
        for signum, old in self.old.items():
            signal.signal(signum, old)
        self.old.clear()
        return self.pending


# ---------------------------------------------------------------------------------------
# The writer
# ---------------------------------------------------------------------------------------
class AtomicOutput:
    """Write ``targets`` all at once: a context manager handing out private temporary
    files, renamed onto the targets (in the given order) when the block ends without an
    error, and all removed otherwise.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with AtomicOutput([folder / "a.bin", folder / "a.xml"]) as out:
    ...     with out.open(folder / "a.bin", "wb") as f:
    ...         _ = f.write(b"\\x00")
    ...     with out.open(folder / "a.xml", "w") as f:
    ...         _ = f.write("<net/>")
    >>> sorted(p.name for p in folder.iterdir())
    ['a.bin', 'a.xml']

    OSErrors become an :class:`~ovgather.errors.OutputError` naming ``what`` and the
    last target (the .xml of a pair).
    """

    def __init__(self, targets: Sequence[str | os.PathLike[str]], what: str = "the output"):
        self.targets = [Path(t) for t in targets]
        self.what = what
        self.temp_dir: str | None = None
        self.temps: dict[Path, str] = {}
        self.signals = _Signals()

    # -- the temporary files -------------------------------------------------------
    def path(self, target: str | os.PathLike[str]) -> str:
        """The temporary path standing for ``target`` (for a program that writes it)."""
        target = Path(target)
        if target not in self.temps:
            raise ValueError(f"{target} is not one of this write's targets")
        return self.temps[target]

    def open(self, target: str | os.PathLike[str], mode: str = "wb") -> IO[Any]:
        """A new file standing for ``target``: created exclusively, never through a link
        (``O_EXCL | O_NOFOLLOW``), with the permissions a new file gets (0666 - umask)."""
        path = self.path(target)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o666)
        if "b" in mode:
            return os.fdopen(fd, mode)
        return os.fdopen(fd, mode, encoding="utf-8")

    def __enter__(self) -> AtomicOutput:
        try:
            self.signals.install()
            folder = self.targets[-1].parent
            # held while the folder is made: a signal between mkdtemp's mkdir and the
            # assignment would leave a folder the clean-up does not know of
            self.signals.deferred = True
            self.temp_dir = tempfile.mkdtemp(dir=folder, prefix=".ovgather-")
            self.signals.deferred = False
            if self.signals.pending is not None:
                raise Interrupted(self.signals.pending)
            for i, target in enumerate(self.targets):
                self.temps[target] = os.path.join(self.temp_dir, f"{i}{target.suffix}")
            if _hook is not None:
                _hook("started")
        except BaseException as err:
            self._cleanup()
            self.signals.restore()
            if isinstance(err, OSError):
                raise self._error(err) from err
            raise
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        error: BaseException | None = None
        try:
            self.signals.deferred = True
            if exc_type is None and _hook is not None:
                try:
                    self.signals.deferred = False
                    _hook("written")
                except BaseException as err:
                    error = err
                finally:
                    self.signals.deferred = True
            if exc_type is None and error is None:
                try:
                    self._commit()
                except BaseException as err:
                    error = err
        finally:
            self._cleanup()
            pending = self.signals.restore()
        if error is not None:
            if isinstance(error, OSError):
                raise self._error(error) from error
            raise error
        if isinstance(exc, OSError):
            raise self._error(exc) from exc
        if exc_type is None and pending is not None:
            raise Interrupted(pending)

    def _error(self, err: OSError) -> OutputError:
        return OutputError(f"{self.what} cannot be written: {err.strerror or err}",
                           file=str(self.targets[-1]))

    # -- commit and clean-up -------------------------------------------------------
    def _commit(self) -> None:
        assert self.temp_dir is not None
        for target in self.targets:  # a folder in the way: refuse before renaming anything
            st = _lstat(target)
            if st is not None and stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "a folder is in the way", str(target))
        with _folder_lock(self.targets[-1].parent):
            if _hook is not None:
                _hook("committing")
            backups = self._backups()
            done: list[Path] = []
            try:
                for target in self.targets:
                    os.replace(self.temps[target], target)
                    done.append(target)
                    if _hook is not None and len(done) < len(self.targets):
                        _hook("between-renames")
            except BaseException:
                self._roll_back(done, backups)
                raise

    def _backups(self) -> dict[Path, str]:
        """Hard links (copies where there are none) of the targets that exist, all but
        the last (its rename is the final step: nothing after it can fail)."""
        backups = {}
        for i, target in enumerate(self.targets[:-1]):
            st = _lstat(target)
            if st is None or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                continue
            backup = os.path.join(self.temp_dir, f"{i}.old")
            try:  # a link is kept as the link itself
                os.link(target, backup, follow_symlinks=False)
            except OSError:
                shutil.copyfile(target, backup, follow_symlinks=False)
            backups[target] = backup
        return backups

    def _roll_back(self, done: list[Path], backups: dict[Path, str]) -> None:
        for target in done:
            try:
                if target in backups:
                    os.replace(backups[target], target)
                else:
                    os.unlink(target)
            except OSError:
                pass

    def _cleanup(self) -> None:
        if self.temp_dir is None:
            return
        try:  # the private folder holds only plain files of ours
            for name in os.listdir(self.temp_dir):
                os.unlink(os.path.join(self.temp_dir, name))
            os.rmdir(self.temp_dir)
        except OSError:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        self.temp_dir = None


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` on the folder itself (where the file system allows it)."""
    try:
        if fcntl is None:
            raise OSError(errno.ENOSYS, "no flock")
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # pragma: no cover - a file system without flock
            pass
        yield
    finally:
        os.close(fd)  # closing releases the lock
