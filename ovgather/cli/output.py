"""Everything the command line prints goes through here: one place for the width, the
indent of wrapped lines, the JSON style and the progress bars on stderr.

* Human lines on stdout are wrapped at ``WIDTH`` (100) columns; a wrapped line goes on
  with a hanging indent (4 spaces past the line's own indent unless the caller names
  one), so a table row's long "why" still reads as one entry.
* ``error:`` and ``warning:`` lines go to stderr. Scripts rely on one ``error:`` line, so
  stderr is wrapped only when it is a terminal, where a person reads it.
* ``print_json`` is the one JSON style of every subcommand: ``indent=2``, UTF-8 as is.
* ``Progress`` is a tqdm bar on stderr, only when stderr is a terminal, that appears
  after ``OVGATHER_PROGRESS_DELAY`` seconds (default 0.5) so short runs stay quiet, and
  keeps its elapsed time moving while one long step (reading a big model) runs.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from typing import Any

__all__ = ["WIDTH", "wrap", "say", "say_err", "error", "warning", "print_json", "write_bytes",
           "Progress"]

WIDTH = 100
HANG = 4
_COUNT = re.compile(r"(?<!\S)(\d+) (?=\S)")

_bars: list[Progress] = []  # the live bars: lines are printed above them
_lock = threading.RLock()  # one writer at a time: the ticker threads and the main thread
_tty: Any = None  # the terminal behind stderr, kept even while fd 2 is redirected


def wrap(line: str, hang: int | None = None, width: int = WIDTH) -> list[str]:
    """``line`` cut into lines of at most ``width`` columns, the later ones indented.

    >>> wrap("one two three four five six", width=14)
    ['one two three', '    four five', '    six']
    >>> wrap("  why: a long message", hang=7, width=16)
    ['  why: a long', '       message']
    """
    line = line.rstrip()
    if len(line) <= width:
        return [line]
    lead = len(line) - len(line.lstrip(" "))
    indent = " " * min(lead + HANG if hang is None else hang, width // 2)
    glued = _COUNT.sub("\\1\0", line)  # "0 unchecked", "id 14" stay on one line
    import textwrap  # here: a --json run wraps nothing, and need not import it

    lines = textwrap.wrap(glued, width=width, subsequent_indent=indent, break_on_hyphens=False,
                          break_long_words=True, replace_whitespace=False) or [glued]
    return [piece.replace("\0", " ") for piece in lines]


def _write(text: str, stream: Any) -> None:
    with _lock:
        shown = [p for p in _bars if p.shown()]
        for p in shown:
            p.bar.clear(nolock=True)
        print(text, file=stream)
        if shown:
            stream.flush()
        for p in shown:
            p.bar.refresh(nolock=True)


def say(text: str = "", hang: int | None = None) -> None:
    """Human output on stdout, every line wrapped at ``WIDTH``."""
    for raw in text.split("\n"):
        for line in wrap(raw, hang):
            _write(line, sys.stdout)


def say_record(text: str) -> None:
    """A summary line scripts grep for (``PATH: OK: …``): wrapped like :func:`say` on a
    terminal, where a person reads it, else one line however long the path (as errors)."""
    lines = wrap(text) if _isatty(sys.stdout) else [text]
    _write("\n".join(lines), sys.stdout)


def say_err(text: str, hang: int | None = None) -> None:
    """A line on stderr: wrapped when stderr is a terminal, else kept on one line."""
    lines = wrap(text, hang) if _isatty(sys.stderr) else [text]
    _write("\n".join(lines), sys.stderr)


def error(message: str) -> None:
    """The one ``error: …`` line (newlines in ``message`` become spaces)."""
    say_err("error: " + " ".join(message.split()))


def warning(message: str) -> None:
    say_err("warning: " + " ".join(message.split()))


def print_json(doc: Any) -> None:
    """The machine form of every subcommand: one JSON document, indented by 2; UTF-8 as
    is, or ``\\u`` escapes when stdout's encoding cannot hold it (``PYTHONIOENCODING=
    ascii``: the stream's own backslash escapes would make invalid JSON)."""
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(doc, indent=2)
    print(text)


def write_bytes(data: bytes) -> None:
    """A document that states its own encoding (``check --format junit``'s XML) on
    stdout as bytes, whatever the stream's text encoding."""
    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text-only stream (a test's StringIO): the text, as UTF-8 decodes it
        sys.stdout.write(data.decode("utf-8"))
        return
    out.write(data)
    out.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _columns() -> int:
    """The bar's width: the terminal's, at most ``WIDTH`` (a new pty may report 0)."""
    try:
        cols = os.get_terminal_size(_tty.fileno()).columns
    except (AttributeError, OSError, ValueError):
        cols = 0
    return min(cols or WIDTH, WIDTH)


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("OVGATHER_PROGRESS_DELAY", "0.5")))
    except ValueError:
        return 0.5


#: a step of unknown length: what it is and the time spent so far
_UNSIZED = "{desc} … {elapsed}"


class Progress:
    """A progress bar on stderr, or nothing when stderr is not a terminal.

    ``total=None`` counts without a bar (a long step of unknown length shows its elapsed
    time); ``reset(total, desc)`` starts the next stage on the same line.
    """

    def __init__(self, total: int | None = None, desc: str = "", unit: str = "step") -> None:
        self.bar: Any = None
        if not _isatty(sys.stderr):
            return
        from tqdm import tqdm

        global _tty
        if _tty is None:
            try:
                _tty = os.fdopen(os.dup(sys.stderr.fileno()), "w", encoding="utf-8",
                                 errors="replace")
            except (AttributeError, OSError, ValueError):  # no real descriptor behind it
                _tty = sys.stderr
        self.delay = _delay()
        self.bar = tqdm(total=total, desc=desc, unit=unit, file=_tty, leave=False,
                        delay=self.delay, ncols=_columns(), mininterval=0.1,
                        bar_format=None if total is not None else _UNSIZED)
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)
        self._ticker.start()
        _bars.append(self)

    def shown(self) -> bool:
        """Whether the bar is on screen (it waits ``delay`` seconds before it shows)."""
        return self.bar is not None and self.bar.format_dict["elapsed"] >= self.delay

    def _tick(self) -> None:
        """Redraw while the main thread is inside one long call (nothing calls update)."""
        while not self._stop.wait(0.2):
            with _lock:
                if self.shown():
                    self.bar.refresh(nolock=True)

    def update(self, n: int = 1) -> None:
        if self.bar is not None:
            with _lock:
                self.bar.update(n)

    def describe(self, desc: str) -> None:
        if self.bar is not None:
            with _lock:
                self.bar.set_description_str(desc, refresh=False)

    def reset(self, total: int | None, desc: str | None = None) -> None:
        """Start the next stage on the same line (the elapsed time goes on)."""
        if self.bar is not None:
            with _lock:
                start = self.bar.start_t
                if desc is not None:
                    self.bar.set_description_str(desc, refresh=False)
                self.bar.bar_format = None if total is not None else _UNSIZED
                if self.shown():
                    self.bar.reset(total=total)  # redraws the line at 0
                else:  # tqdm's reset() draws at once, delay or not: start the stage unseen
                    self.bar.total, self.bar.n, self.bar.last_print_n = total, 0, 0
                self.bar.start_t = start

    def close(self) -> None:
        """Take the bar off the screen. tqdm clears only a bar its own update() drew after
        the delay; the ticker's redraws (one long step) must go too."""
        if self.bar is not None:
            self._stop.set()
            self._ticker.join()
            with _lock:
                _bars.remove(self)
                if self.shown():
                    self.bar.clear(nolock=True)
                self.bar.close()
                _tty.flush()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
