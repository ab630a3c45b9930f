"""The ``ovgather`` command line: the only place that prints and picks exit codes.

Each subcommand lives in its own module (``check.py`` holds check and infer, ``stats.py``
stats and info, ``convert.py``, ``reshape.py``, ``validate.py``, ``explain.py``,
``extract.py``, ``show.py``, ``compare.py``, ``diff.py``, ``reduce.py``) and
registers itself through ``add_parsers(sub)``, which sets each subparser's handler
``args.run(args) -> int``. This module turns every ``OvgatherError``
into one ``error:`` line and exit code 2; ``--debug`` (anywhere on the command line)
prints the traceback before that line, and nothing else ever prints one.

The exit codes, the MODEL argument, ``--shape`` parsing and the ``error:`` line are in
``common.py`` (docs/cli/README.md). Everything is printed through ``output.py`` (the width,
the JSON style, the progress bars). ``ovgather --help`` imports none of numpy, networkx, lxml or
openvino: the subcommand modules import them inside their handlers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import OvgatherError, UsageError
from . import output
from .common import (
    EXIT_BAD_INPUT,
    EXIT_SIGNAL,
    EXIT_SIGPIPE,
    LAYER_LIMIT_HELP,
    layer_limit,
    one_line,
    print_error,
    take_layer_limit,
)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}{_did_you_mean(message)} "
                         f"(see: {self.prog} --help)")

    #: True while help or usage is made to be shown (argparse also makes a formatter for
    #: every add_argument, only to check the argument: no terminal width is needed then,
    #: and asking for it imports shutil, a few ms of every run)
    _showing = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        """Help text as wide as the terminal, but never wider than the 100 columns that
        every other line of ovgather keeps to."""
        width = output.WIDTH
        if self._showing:
            import shutil

            width = min(shutil.get_terminal_size().columns, width)
        return self.formatter_class(prog=self.prog, width=width - 2)

    def format_help(self) -> str:
        return self._shown(super().format_help)

    def format_usage(self) -> str:
        return self._shown(super().format_usage)

    def _shown(self, make) -> str:  # noqa: ANN001
        """``make()``, with the terminal width asked for (the text is to be shown)."""
        self._showing = True
        try:
            return make()
        finally:
            self._showing = False


def _did_you_mean(message: str) -> str:
    """``; did you mean 'check'?`` for argparse's "invalid choice: 'chek' (choose from
    'check', …)", when one choice is close; else nothing.

    >>> _did_you_mean("invalid choice: 'chek' (choose from 'check', 'infer', 'show')")
    "; did you mean 'check'?"
    >>> _did_you_mean("invalid choice: 'zzz' (choose from 'check', 'infer')")
    ''
    """
    import difflib
    import re

    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if found is None:
        return ""
    close = difflib.get_close_matches(found[1], re.findall(r"'([^']*)'", found[2]), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


EPILOG = """exit codes: 0 all good, 1 the model has a problem (a mismatch, an invalid layer, a
disagreement with the runtime), 2 the input could not be used (one 'error:' line on
stderr). Every subcommand takes --json (one JSON document on stdout) and --debug."""


#: The subcommands and the module that registers each, in the order ``--help`` lists them.
COMMANDS = {"check": "check", "infer": "check", "convert": "convert", "reshape": "reshape",
            "validate": "validate", "explain": "explain", "extract": "extract", "show": "show",
            "compare": "compare", "stats": "stats", "info": "stats", "diff": "diff",
            "reduce": "reduce", "precision": "precision"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``command`` (the subcommand about to run) only that
    subcommand's module is imported and registered, which spares a ``check`` the import
    of the others (through ``__import__``, which ``python -X importtime`` lists, unlike
    ``importlib.import_module``)."""
    from .. import __version__

    parser = _Parser(prog="ovgather", epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Check, convert, validate and compare OpenVINO IR models "
                     "(MODEL.xml with its .bin beside it;\ncheck, infer, validate, explain, "
                     "extract, show and compare also take an .onnx model).")
    parser.add_argument("--version", action="version", version=f"ovgather {__version__}",
                        help="print the version and exit")
    parser.add_argument("--debug", action="store_true",
                        help="show tracebacks (for bug reports); works anywhere on the line")
    parser.add_argument("--layer-limit", metavar="N", help=LAYER_LIMIT_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                help="the subcommand to run",
                                title="commands (ovgather COMMAND --help for each)")
    sub.required = True
    names = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for name in names:
        __import__(f"{__name__}.{name}")
        sys.modules[f"{__name__}.{name}"].add_parsers(sub)
    return parser


def _split_debug(argv: list[str]) -> tuple[list[str], bool]:
    """Take ``--debug`` out of ``argv`` wherever it stands before a ``--``.

    A user who hits an error adds ``--debug`` at the end of the command they just ran,
    so it must work after the subcommand too, not only where argparse would expect it.
    """
    end = argv.index("--") if "--" in argv else len(argv)
    head = [a for a in argv[:end] if a != "--debug"]
    return head + argv[end:], len(head) < end


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings as ``warning: …`` lines (no file name and source line)."""
    output.warning(str(message))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 good, 1 model problem, 2 bad input).

    Only ``--debug`` ever shows a traceback: every error, even a bug in ovgather, is
    otherwise one ``error:`` line on stderr. Handlers see the flag as ``args.debug``.
    """
    import warnings

    argv, debug = _split_debug(list(sys.argv[1:] if argv is None else argv))
    try:
        argv, limit = take_layer_limit(argv)
        parser = build_parser(argv[0] if argv else None)
        if not argv:  # `ovgather` alone: the usage and the commands, exit 2 (a usage error)
            parser.print_help(sys.stderr)
            return EXIT_BAD_INPUT
        args = parser.parse_args(argv)
        args.debug = debug
        output.set_wide(getattr(args, "wide", False))  # --wide: check, infer, validate
        from ..ir.walkcheck import warn_if_walk_missing

        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            warn_if_walk_missing()
            with layer_limit(limit):
                return int(args.run(args))
    except OvgatherError as err:
        print_error(err, debug)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `ovgather infer big.xml | head`: the reader has gone
        _silence_stdout()
        return EXIT_SIGPIPE
    except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM/SIGHUP during a write
        if debug:
            _print_traceback()
        signum = getattr(err, "signum", 2)
        name = "" if signum == 2 else f" ({err.signal_name})"
        output.error(f"interrupted{name}")
        return EXIT_SIGNAL + signum
    except Exception as err:  # a bug in ovgather: still one line unless --debug
        if debug:
            _print_traceback()
        output.error(one_line(f"internal error ({type(err).__name__}: {err}); "
                               "rerun with --debug and report it"))
        return EXIT_BAD_INPUT


class _Stdout:
    """sys.stdout, with a failed write (a full disk, ``> /dev/full``, an I/O error) turned
    into an OutputError, so it ends as one ``error:`` line and exit 2. A closed pipe
    stays a BrokenPipeError (the quiet exit 141)."""

    def __init__(self, stream) -> None:  # noqa: ANN001
        self._stream = stream

    def _guard(self, fn, *args):  # noqa: ANN001, ANN002, ANN202
        try:
            return fn(*args)
        except BrokenPipeError:
            raise
        except OSError as err:
            from ..errors import OutputError

            raise OutputError("the standard output cannot be written: "
                              f"{err.strerror or err}") from err

    def write(self, text: str) -> int:
        return self._guard(self._stream.write, text)

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self._stream, name)


def _print_traceback() -> None:
    import traceback  # only with --debug: it costs every run ~5 ms to import

    traceback.print_exc()


def _guard_streams() -> bool:
    """Make the standard streams safe to use; False when stdout is closed.

    A closed stream (``>&-``, ``2>&-``) is None in Python: its descriptor is taken by
    /dev/null so no file opened later becomes fd 1 or 2, and messages never go to the
    other stream. Text that the stream's encoding cannot hold (``PYTHONIOENCODING=ascii``
    and a layer named ``première``) is written as ``\\xe8`` instead of failing.
    """
    import os

    closed_stdout = sys.stdout is None
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            fd = os.open(os.devnull, os.O_WRONLY)
            setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))  # noqa: SIM115
        stream = getattr(sys, name)
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):  # not a TextIOWrapper (captured in tests)
            pass
    sys.stdout = _Stdout(sys.stdout)
    return not closed_stdout


def console_main() -> None:
    """Entry point of the ``ovgather`` script and ``python -m ovgather``.

    Exits without the interpreter's teardown: freeing a 20k-layer graph object by
    object costs ~0.4 s that a finished command does not need (output is flushed first).
    """
    import os

    if not _guard_streams():
        print("error: the standard output is closed, so there is nowhere to write the "
              "result", file=sys.stderr)
        code = EXIT_BAD_INPUT
    else:
        code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        code = code or EXIT_SIGPIPE
    except OvgatherError as err:  # the output did not fit (a full disk)
        _silence_stdout()
        if code != EXIT_BAD_INPUT:
            print_error(err)
        code = EXIT_BAD_INPUT
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)
