"""Everything the command line prints goes through here: one place for the width, the
indent of wrapped lines, the escaping of names, the JSON style and the progress bars on
stderr.

* Human lines on stdout fit the terminal: its width (``COLUMNS`` first, as
  ``shutil.get_terminal_size`` reads it; ``WIDTH``, 100, when it is unknown). A wrapped
  line goes on with a hanging indent (4 spaces past the line's own indent unless the
  caller names one), so a table row's long "why" still reads as one entry. In a pipe or a
  file, and with ``--wide``, nothing is wrapped: one line stays one line, to grep.
* A table (:func:`table`) keeps every row on one line of the terminal: a long layer name
  is shortened in the middle (``__module.model.la…self_attn/MatMul``) rather than wrapped;
  in a pipe or with ``--wide`` it is shown whole.
* Every human line is shown escaped (:func:`shown`): a control character in a name (an
  IR can encode ``&#10;`` or ``&#27;`` in one) prints as ``\\n`` or ``\\x1b``, so a name
  can never print a line of its own (a forged ``model.xml: OK``) nor move the cursor.
  :func:`say_line` prints exactly one line; :func:`say` splits its text at ``\\n`` (text
  of several lines that holds no name). JSON is printed exact.
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

__all__ = ["WIDTH", "wrap", "shown", "shorten", "width", "set_wide", "say", "say_line",
           "say_record", "say_err", "table", "error", "warning", "print_json", "write_bytes",
           "Progress", "say_report"]

#: the width of a terminal that does not tell its own, and the most ``--help`` takes
WIDTH = 100
HANG = 4
#: the narrowest width lines are fitted to (a terminal may claim 1 column)
NARROWEST = 20
_COUNT = re.compile(r"(?<!\S)(\d+) (?=\S)")

_bars: list[Progress] = []  # the live bars: lines are printed above them
_lock = threading.RLock()  # one writer at a time: the ticker threads and the main thread
_tty: Any = None  # the terminal behind stderr, kept even while fd 2 is redirected
_wide = False  # --wide: human lines on stdout are never shortened nor wrapped

#: what :func:`shown` escapes: C0 and C1 controls, DEL, the Unicode line and paragraph
#: separators and the bidirectional controls (which reorder what a line shows)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(found: re.Match) -> str:
    ch = found.group()
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def shown(text: str) -> str:
    """``text`` as one line a terminal shows as it is: every control character escaped
    visibly (a newline as ``\\n``, ESC as ``\\x1b``, U+2028 as ``\\u2028``).

    >>> print(shown("a\\nmodel.xml: OK\\x1b[2K\\tb"))
    a\\nmodel.xml: OK\\x1b[2K\\tb
    """
    return _CONTROL.sub(_escape, text)


def shorten(text: str, size: int) -> str:
    """``text`` in at most ``size`` columns, cut in the middle: both ends of a layer name
    say the most (``__module.model.layers.0`` … ``self_attn/MatMul``).

    >>> shorten("__module.model.layers.0.self_attn/MatMul", 20)
    '__module.m…tn/MatMul'
    """
    if len(text) <= size:
        return text
    if size <= 1:
        return "…"[:size]
    head = size // 2
    return text[:head] + "…" + text[len(text) - (size - 1 - head):]


def set_wide(on: bool) -> None:
    """``--wide``: human lines on stdout are never shortened nor wrapped (as in a pipe)."""
    global _wide
    _wide = bool(on)


def columns(stream: Any) -> int:
    """The width of the terminal ``stream`` is on: ``COLUMNS`` when it is set (as
    ``shutil.get_terminal_size`` reads it), else the terminal's own; ``WIDTH`` when
    neither says (a new pseudo-terminal reports 0)."""
    try:
        cols = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        cols = 0
    if cols <= 0:
        try:
            cols = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            cols = 0
    return max(cols, NARROWEST) if cols > 0 else WIDTH


def width(stream: Any = None) -> int | None:
    """The columns human lines on ``stream`` (stdout) are fitted to; None in a pipe or a
    file, or with ``--wide`` on stdout: a line is then never wrapped."""
    stream = sys.stdout if stream is None else stream
    if not _isatty(stream) or (_wide and stream is sys.stdout):
        return None
    return columns(stream)


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
    if len(lines) > 1 and " " not in lines[0].strip() and len(lines[0]) < width // 2:
        # a short first word alone ("error:") and a path too long for any line: the path
        # starts on the first line, cut where the line ends
        first = glued[:width]
        lines = [first, *textwrap.wrap(glued[width:], width=width, initial_indent=indent,
                                        subsequent_indent=indent, break_on_hyphens=False,
                                        break_long_words=True, replace_whitespace=False)]
    return [piece.replace("\0", " ") for piece in lines]


def _write(text: str, stream: Any) -> None:
    with _lock:
        shown = [p for p in _bars if p.shown()]
        for p in shown:
            p.bar.clear(nolock=True)
        stream.write(text + "\n")  # one write: an interrupt never leaves a line unended
        if shown:
            stream.flush()
        for p in shown:
            p.bar.refresh(nolock=True)


def say_line(text: str = "", hang: int | None = None) -> None:
    """One human line on stdout, escaped (:func:`shown`): on a terminal wrapped at its
    width with a hanging indent, in a pipe or a file (or with ``--wide``) whole."""
    text = shown(text)
    cols = width()
    for line in [text.rstrip()] if cols is None else wrap(text, hang, cols):
        _write(line, sys.stdout)


def say(text: str = "", hang: int | None = None) -> None:
    """Human text of one or more lines (split at ``\\n``), each as :func:`say_line`
    prints it. A line that holds a name goes through :func:`say_line`, so a newline in
    the name cannot start a line of its own."""
    for raw in text.split("\n"):
        say_line(raw, hang)


def say_record(text: str) -> None:
    """A summary line scripts grep for (``PATH: OK: …``), escaped: wrapped like
    :func:`say_line` on a terminal, where a person reads it, else one line however long
    the path (as errors)."""
    text = shown(text)
    cols = width()
    lines = [text] if cols is None else wrap(text, width=cols)
    _write("\n".join(lines), sys.stdout)


def say_err(text: str, hang: int | None = None) -> None:
    """A line on stderr, escaped: wrapped when stderr is a terminal, else one line."""
    text = shown(text)
    cols = width(sys.stderr)
    lines = [text] if cols is None else wrap(text, hang, cols)
    _write("\n".join(lines), sys.stderr)


def table(head: tuple[str, ...], rows: list[tuple[str, ...]],
          shrink: tuple[int, ...] = (1,)) -> None:
    """Aligned columns on stdout, the last one free (a "why", a note): see
    :func:`table_lines`."""
    cols = width()
    for line, hang in table_lines(head, rows, cols, shrink):
        for piece in [line] if cols is None or hang is None else wrap(line, hang, cols):
            _write(piece, sys.stdout)


def table_lines(head: tuple[str, ...], rows: list[tuple[str, ...]], cols: int | None,
                shrink: tuple[int, ...] = (1,)) -> list[tuple[str, int | None]]:
    """The lines of a table, each with the hanging indent to wrap it by (None: never).

    Every cell is escaped (:func:`shown`). ``cols`` None (a pipe, a file, ``--wide``):
    each row is one line, every cell whole. On a terminal of ``cols`` columns the aligned
    columns fit it: the columns of ``shrink`` (the layer name first) are shortened in
    the middle as much as it takes; when they leave the last column less than 30 columns
    and some row has text there, it goes on its own line under each row, indented by 4,
    and that line (or a row's last column) may wrap.

    >>> name = "__module.model.layers.0.self_attn/MatMul"
    >>> [line for line, _ in table_lines(("id", "layer", "note"), [("7", name, "")], 30)]
    ['id  layer                 note', '7   __module.m…tn/MatMul']
    >>> table_lines(("id", "layer", "note"), [("7", name, "")], None)[1]
    ('7   __module.model.layers.0.self_attn/MatMul', None)
    """
    table = [tuple(shown(cell) for cell in row) for row in (head, *rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(head) - 1)]
    if cols is None:
        return [("  ".join([c.ljust(w) for c, w in zip(row, widths, strict=False)]
                           + [row[-1]]).rstrip(), None) for row in table]
    widths = _fit(widths, cols, shrink, head)
    below = sum(widths) + 2 * len(widths) > cols - 30 and any(row[-1] for row in table[1:])
    if not below:  # the heading of the last column fits beside the others
        widths = _fit(widths, cols - 2 - len(table[0][-1]), shrink, head)
    lines: list[tuple[str, int | None]] = []
    for row in table:
        cells = [shorten(c, w).ljust(w) for c, w in zip(row, widths, strict=False)]
        if below:
            lines.append(("  ".join(cells).rstrip(), HANG))
            if row[-1]:
                lines.append(("    " + row[-1], 2 * HANG))
        else:
            lines.append(("  ".join(cells + [row[-1]]).rstrip(), HANG))
    return lines


def _fit(widths: list[int], cols: int, shrink: tuple[int, ...],
         head: tuple[str, ...]) -> list[int]:
    """``widths`` of the aligned columns narrowed to fit ``cols``: the first column of
    ``shrink`` down to 16, then the others in turn down to 10, then the first down to its
    heading; a row still too wide then wraps."""
    widths = list(widths)
    excess = sum(widths) + 2 * (len(widths) - 1) - cols
    floors = [(shrink[0], 16), *((i, 10) for i in shrink[1:]), (shrink[0], 0)]
    for i, floor in floors:
        if excess <= 0:
            break
        cut = min(excess, widths[i] - max(floor, len(head[i]), 2))
        if cut > 0:
            widths[i] -= cut
            excess -= cut
    return widths


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
        self.bar = tqdm(total=total, desc=shown(desc), unit=unit, file=_tty, leave=False,
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
                self.bar.set_description_str(shown(desc), refresh=False)

    def reset(self, total: int | None, desc: str | None = None) -> None:
        """Start the next stage on the same line (the elapsed time goes on)."""
        if self.bar is not None:
            with _lock:
                start = self.bar.start_t
                if desc is not None:
                    self.bar.set_description_str(shown(desc), refresh=False)
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


def say_report(report: Any, as_json: bool, hang: int | None = None) -> None:
    """A report of the one-document commands (reduce, precision, info): its JSON with
    ``--json``, else its lines, each one line (:func:`say_line`)."""
    if as_json:
        print_json(report.to_dict())
        return
    for line in report.lines():
        say_line(line, hang=hang)
