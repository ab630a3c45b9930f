"""What every subcommand shares: exit codes, ``--shape`` parsing, the output-path guard,
count arguments, the options of the one-layer commands, the ``error:`` line and the run
of named model files with one job (the MODEL argument and how it is loaded are in
``models.py``; folders and ``--jobs`` in ``folders.py``, imported only for them).

Exit codes (docs/cli/README.md): 0 all good, 1 the model has a problem, 2 the input could not
be used; 128 + N for a command ended by signal N (141 when the reader of a pipe has gone).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .models import add_model_argument
from .output import error

if TYPE_CHECKING:  # pathlib costs a check ~7 ms to import
    from pathlib import Path

__all__ = ["EXIT_OK", "EXIT_PROBLEM", "EXIT_BAD_INPUT", "EXIT_SIGNAL", "EXIT_SIGPIPE",
           "add_layer_command", "add_json", "add_wide", "parse_shape_options", "shape_overrides",
           "UNNAMED", "name_the_input",
           "check_output", "whole_number", "print_error", "one_line", "take_layer_limit",
           "layer_limit", "LAYER_LIMIT_HELP", "add_jobs", "needs_folders", "run_files",
           "FileRun", "run_one", "take_outcome"]

EXIT_OK, EXIT_PROBLEM, EXIT_BAD_INPUT = 0, 1, 2
EXIT_SIGNAL = 128  # a command ended by signal N exits with EXIT_SIGNAL + N, as a shell reports
EXIT_SIGPIPE = EXIT_SIGNAL + 13  # 141: the reader of a pipe has gone


# -- errors and counts ------------------------------------------------------------------------
def one_line(text: str) -> str:
    """The message on one line: scripts rely on exactly one ``error:`` line."""
    return re.sub(r"\s*[\r\n]+\s*", " ", text).strip()


def print_error(err: BaseException, debug: bool = False) -> None:
    """Print ``err`` as the one ``error: …`` line on stderr, after its traceback if ``debug``.

    For subcommands that report an unusable input and carry on (several files): call it
    from the ``except`` block with ``args.debug`` so ``--debug`` works there too.
    """
    if debug:
        import traceback  # only with --debug: it costs every run ~5 ms to import

        traceback.print_exception(err)
    error(one_line(str(err)))


def whole_number(text: str, digits: int = 19) -> int:
    """argparse type of a count (``--depth``, ``--batch-size``, ``--seed``): an integer
    >= 0 in the digits 0-9 (``int()`` would also take ``３`` or ``٣``), at most
    ``digits`` of them; a refusal quotes at most 40 characters."""
    if not (text.isascii() and text.isdigit()) or len(text) > digits:
        shown = text if len(text) <= 40 else f"{text[:40]}… ({len(text)} characters)"
        raise argparse.ArgumentTypeError(f"must be an integer >= 0 (digits 0-9, at most "
                                         f"{digits}), but got '{shown}'")
    return int(text)


# -- --layer-limit ----------------------------------------------------------------------------
LAYER_LIMIT_HELP = ("read models of up to N layers (default 300,000; each layer costs about "
                    "5 KB and 0.1 ms to check; works anywhere on the line, for every command)")


def take_layer_limit(argv: list[str]) -> tuple[list[str], int | None]:
    """``argv`` without ``--layer-limit N`` (or ``=N``), wherever it stands before a
    ``--``, and N (None when not given). Like ``--debug`` it works after the subcommand
    too; :func:`layer_limit` applies it."""
    end = argv.index("--") if "--" in argv else len(argv)
    out: list[str] = []
    value = None
    i = 0
    while i < end:
        arg = argv[i]
        if arg == "--layer-limit" or arg.startswith("--layer-limit="):
            if arg == "--layer-limit":
                if i + 1 >= end:
                    raise UsageError("--layer-limit needs a number of layers")
                i += 1
            value = argv[i] if arg == "--layer-limit" else arg.partition("=")[2]
        else:
            out.append(arg)
        i += 1
    if value is None:
        return out + argv[end:], None
    try:
        return out + argv[end:], whole_number(value, digits=18)
    except argparse.ArgumentTypeError as err:
        raise UsageError(f"--layer-limit {err}") from None


@contextmanager
def layer_limit(limit: int | None) -> Iterator[None]:
    """While the block runs, ``limit`` (when not None) is the default of every IR read
    in this process (``ir.parse.MAX_LAYERS``); the old default afterwards."""
    if limit is None:
        yield
        return
    from ..ir import parse  # lxml: only when the option is given

    saved, parse.MAX_LAYERS = parse.MAX_LAYERS, limit
    try:
        yield
    finally:
        parse.MAX_LAYERS = saved


# -- --shape ----------------------------------------------------------------------------------
def _split_top(text: str, option: str) -> list[str]:
    """Split on the commas that are neither inside brackets nor inside a quoted name."""
    parts, depth, cur, quote, escaped = [], 0, [], None, False
    for ch in text:
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            cur.append(ch)
            continue
        if ch in "\"'" and not "".join(cur).strip():
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quote is not None:
        raise UsageError(f"{option} has a quoted name without its closing {quote}: '{text}'")
    parts.append("".join(cur))
    return parts


#: the key of a shape given without a name (``--shape '[?,1,28,28]'``): it is the shape of
#: the model's one input (:func:`name_the_input` puts that input's name in its place)
UNNAMED = ""


def parse_shape_options(options: list[str], option: str = "--shape") -> dict[str, str]:
    """``["data[1,?,4],ids=2..8,3"]`` → ``{"data": "[1,?,4]", "ids": "2..8,3"}``.

    A shape alone in brackets, with no name (``[?,1,28,28]``), is the shape of a model's
    one input: its key is ``UNNAMED`` (``""``), and it must be the only shape given.

    A comma-separated piece without ``=`` or ``[`` continues the previous shape, so a
    bare ``NAME=2,?,4`` works too. A name holding ``[``, ``]``, ``=``, ``,``, quotes or
    spaces is written in double (or single) quotes, with ``\\"`` for a quote and ``\\\\``
    for a backslash inside: ``"d[1]"=[2,3]``, ``'a,b'[4]``.

    >>> parse_shape_options(["data[1,?,4],ids=2..8,3", "x=[5]"])
    {'data': '[1,?,4]', 'ids': '2..8,3', 'x': '[5]'}
    >>> parse_shape_options(['"d[1]"=[2,3],"a=b, c"[4]', "'say \\"hi\\"'=1"])
    {'d[1]': '[2,3]', 'a=b, c': '[4]', 'say "hi"': '1'}
    >>> parse_shape_options(["[?,1,28,28]"])
    {'': '[?,1,28,28]'}
    """
    items: list[str] = []
    for text in options:
        plain = '"' not in text and "'" not in text
        if plain and text.count("[") != text.count("]"):
            raise UsageError(f"{option} has unbalanced brackets: '{text}'")
        pieces = _split_top(text, option)
        for piece in pieces:
            quoted = piece.strip()[:1] in ("\"", "'")
            if items and not quoted and "=" not in piece and "[" not in piece:
                items[-1] += "," + piece
            else:
                items.append(piece)
    out: dict[str, str] = {}
    for item in items:
        name, shape = _one_override(item.strip(), option)
        out[name] = shape
    if UNNAMED in out and len(items) > 1:
        raise UsageError(f"{option} {out[UNNAMED]} has no input name, which is for a model of "
                         f"one input and only alone: name each input (NAME=SHAPE) when "
                         f"{option} gives several")
    return out


def name_the_input(G, shapes: dict[str, str], option: str = "--shape") -> dict[str, str]:
    """``shapes`` with a shape given without a name (``UNNAMED``) given the name of the
    model's one input; a model of no input or of several refuses it, naming them."""
    if UNNAMED not in shapes:
        return shapes
    inputs = [attrs["name"] for attrs in G._node.values()
              if str(attrs.get("type") or "").lower() == "parameter"]
    if len(inputs) == 1:
        return {inputs[0]: shapes[UNNAMED]}
    shape = shapes[UNNAMED]
    if not inputs:
        raise UsageError(f"{option} {shape} has no input name, and the model has no input "
                         "to give it to", file=G.graph.get("xml_path"))
    shown = ", ".join(f"'{name}'" for name in inputs[:10])
    more = f" and {len(inputs) - 10} more" if len(inputs) > 10 else ""
    raise UsageError(f"{option} {shape} has no input name, but the model has {len(inputs)} "
                     f"inputs ({shown}{more}): name the one it is for, as "
                     f"{option} '{inputs[0]}={shape}'", file=G.graph.get("xml_path"))


def _quoted_name(item: str, option: str) -> tuple[str, str]:
    """The name in quotes at the start of ``item`` (unescaped) and the text after it."""
    quote, name, i = item[0], [], 1
    while i < len(item):
        ch = item[i]
        if ch == "\\" and i + 1 < len(item) and item[i + 1] in (quote, "\\"):
            name.append(item[i + 1])
            i += 2
            continue
        if ch == quote:
            return "".join(name), item[i + 1:]
        name.append(ch)
        i += 1
    raise UsageError(f"{option} has a quoted name without its closing {quote}: '{item}'")


def _one_override(item: str, option: str) -> tuple[str, str]:
    if item[:1] in ("\"", "'"):
        name, rest = _quoted_name(item, option)
        rest = rest.strip()
        if rest.startswith("="):
            shape = rest[1:]
        elif rest.startswith("[") and rest.endswith("]"):
            shape = rest
        else:
            raise UsageError(f"{option} takes \"NAME\"=SHAPE or \"NAME\"[SHAPE], but got '{item}'")
        if not name or not shape.strip():
            raise UsageError(f"{option} needs a name and a shape, but got '{item}'")
        return name, shape.strip()
    if item.count("[") != item.count("]"):
        raise UsageError(f"{option} has unbalanced brackets: '{item}'")
    if item.startswith("[") and item.endswith("]") and "=" not in item:
        return UNNAMED, item  # the model's one input (name_the_input)
    if "=" in item and ("[" not in item or item.index("=") < item.index("[")):
        name, _, shape = item.partition("=")
    elif item.endswith("]") and "[" in item:
        i = item.index("[")
        name, shape = item[:i], item[i:]
    else:
        raise UsageError(f"{option} takes NAME=SHAPE or NAME[SHAPE], but got '{item}'")
    if not name.strip() or not shape.strip():
        raise UsageError(f"{option} needs a name and a shape, but got '{item}'")
    return name.strip(), shape.strip()


def shape_overrides(values: list[str] | None, model=None) -> dict[str, str] | None:
    """The ``--shape`` options of explain, extract, show and compare; None when there are
    none. A shape without a name is the input's of ``model`` (a graph) when it has one
    input; without ``model`` it must be named."""
    if not values:
        return None
    shapes = parse_shape_options(values)
    if model is not None:
        return name_the_input(model, shapes)
    if UNNAMED in shapes:
        raise UsageError(f"--shape {shapes[UNNAMED]} has no input name: this command needs "
                         "the input's name (NAME=SHAPE)")
    return shapes


def check_output(out: Path, model: str, replace: bool) -> None:
    """OUT must be an ``.xml`` path, and neither it nor its ``.bin`` may be a file of
    ``model`` unless ``replace`` (``--in-place``) allows it."""
    from ..atomic import clashes_with_model

    if out.suffix.lower() != ".xml":
        raise UsageError(f"OUT must be an .xml path (its .bin goes beside it), but got '{out}'")
    clash = clashes_with_model([out, out.with_suffix(".bin")], model)
    if clash is not None and not replace:
        raise UsageError(f"OUT '{out}' would overwrite the input model ('{clash}' is one of "
                         "its files); pass --in-place to replace it")


def add_json(p: argparse.ArgumentParser) -> None:
    """``--json``, which every subcommand takes."""
    p.add_argument("--json", action="store_true",
                   help="one JSON document on stdout (see docs/json.md)")


def add_wide(p: argparse.ArgumentParser) -> None:
    """``--wide``, for the commands that print a table of layers."""
    p.add_argument("--wide", action="store_true",
                   help="never shorten a layer name nor wrap a line, however wide the "
                   "terminal (as in a pipe, where nothing is shortened or wrapped)")


# -- several models -----------------------------------------------------------------------------
def add_jobs(p: argparse.ArgumentParser) -> None:
    """``--jobs N``: the models at once, each in a worker process of its own (``folders.py``
    runs them; here so that registering the option does not import it)."""
    p.add_argument("--jobs", "-j", type=whole_number, default=1, metavar="N",
                   help="run N models at once, each in a worker process of its own "
                   "(default 1; 0: one per CPU core); results come in the models' order")


def needs_folders(args: argparse.Namespace, models: list[str]) -> bool:
    """Whether the run takes ``folders.py`` (a folder among ``models``, or ``--jobs`` other
    than 1); else :func:`run_files` runs the named files, and ``folders.py`` (its worker
    pool, its folder walk) is never imported."""
    import os

    return getattr(args, "jobs", 1) != 1 or any(os.path.isdir(path) for path in models)


class FileRun:
    """What :func:`run_files` gave, with the fields of ``folders.Batch``: the results of
    the models that could be used, in order; ``errors`` (path, message) of those that
    could not; ``failing`` the paths whose result has a problem."""

    def __init__(self) -> None:
        self.results: list[Any] = []
        self.errors: list[tuple[str, str]] = []
        self.failing: list[str] = []

    @property
    def code(self) -> int:
        """2 when a model could not be used, else 1 when one has a problem, else 0."""
        if self.errors:
            return EXIT_BAD_INPUT
        return EXIT_PROBLEM if self.failing else EXIT_OK

    def json_fields(self) -> dict[str, Any]:
        """Nothing: only a run with a folder adds totals to the JSON (docs/json.md)."""
        return {}

    def print_summary(self) -> None:
        """Nothing: only a run with a folder ends with a summary."""


def run_files(args: argparse.Namespace, paths: list[str], prepare: Callable[[], Any],
              failing: Callable[[Any], bool], show: Callable[[Any], None] | None = None,
              steps: int | None = None) -> FileRun:
    """``folders.run_models`` for named files and one job, without importing it: each
    ``prepare()(path, bar)`` in turn (:func:`run_one`), taken as it ends
    (:func:`take_outcome`: a pipe sees each model's lines as it ends). A model that
    cannot be used prints its ``error:`` line and the others still run."""
    from .output import Progress

    run = FileRun()
    debug = getattr(args, "debug", False)
    one = prepare() if paths else None
    bar = Progress(steps * len(paths), unit="step") if steps else None
    try:
        for path in paths:
            take_outcome(run, path, run_one(one, path, bar, debug), failing,
                         None if args.json else show)
    finally:
        if bar is not None:
            bar.close()
    return run


def run_one(one: Callable[[str, Any], Any], path: str, bar: Any, debug: bool
            ) -> tuple[str, Any, str]:
    """``("ok", result, "")``, or ``("error", the error line's text, its traceback when
    debug)`` for a model that cannot be used or that meets a bug of ovgather. The result
    gets ``elapsed``, the seconds its model took, which the JUnit XML gives each case."""
    import time

    from ..errors import OvgatherError

    started = time.perf_counter()
    try:
        result = one(path, bar)
    except OvgatherError as err:
        err.located(file=path)
        return "error", one_line(str(err)), _trace(err, debug)
    except Exception as err:  # a bug of ovgather: this model's error, the others still run
        return "error", one_line(f"{path}: internal error ({type(err).__name__}: {err}); "
                                 "rerun with --debug and report it"), _trace(err, debug)
    if not hasattr(result, "elapsed"):  # a result that cannot take it goes without
        with suppress(AttributeError, TypeError):
            result.elapsed = time.perf_counter() - started
    return "ok", result, ""


def take_outcome(run: Any, path: str, outcome: tuple[str, Any, str],
                 failing: Callable[[Any], bool], show: Callable[[Any], None] | None) -> None:
    """One model's outcome (:func:`run_one`) into ``run`` (a FileRun or ``folders.Batch``:
    ``results``, ``failing``, ``errors``), shown at once (``show``; stdout flushed, so a
    pipe sees each model's lines as it ends) or its ``error:`` line printed."""
    kind, value, trace = outcome
    if kind == "ok":
        run.results.append(value)
        if failing(value):
            run.failing.append(getattr(value, "path", None) or path)
        if show is not None:
            show(value)
            sys.stdout.flush()
        return
    if trace:
        sys.stderr.write(trace)
    error(value)
    run.errors.append((path, value))


def _trace(err: BaseException, debug: bool) -> str:
    if not debug:
        return ""
    import traceback

    return "".join(traceback.format_exception(err))


# -- the subcommands about one layer ---------------------------------------------------------
def add_layer_command(sub: argparse._SubParsersAction, name: str, summary: str,
                      description: str, run, layer_help: str = "the layer's name (or id)",
                      layer_required: bool = True) -> argparse.ArgumentParser:
    """Register a subcommand about one layer of a model (explain, extract, show): the
    model, ``--shape``, ``--json`` and ``--layer``; the caller adds its own options."""
    p = sub.add_parser(name, help=summary, description=description)
    add_model_argument(p)
    p.add_argument("--shape", action="append", metavar="NAME=SHAPE",
                   help="input shape override, as for check (repeatable)")
    add_json(p)
    p.add_argument("--layer", required=layer_required, help=layer_help)
    p.set_defaults(run=run)
    return p


def tolerance(text: str) -> float:
    """An ``--rtol``/``--atol`` value: a finite number >= 0."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0 such as 1e-5, but got "
                                         f"'{text[:40]}'")
    return value
