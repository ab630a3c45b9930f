"""The ``ovgather`` command line: the only place that prints and picks exit codes.

Each subcommand lives in its own module (``check.py`` holds check and infer,
``convert.py``, ``validate.py``) and registers itself through ``add_parser(sub)``
returning its handler ``run(args) -> int``. This module turns every ``OvgatherError``
into one ``error:`` line and exit code 2; ``--debug`` shows the traceback instead.

Exit codes (SPEC.md §3): 0 all good, 1 the model has a problem, 2 the input could not
be used.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from ..errors import OvgatherError, UsageError

EXIT_OK, EXIT_PROBLEM, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    from . import check, convert, validate

    parser = _Parser(prog="ovgather", description="Check, convert and validate OpenVINO IR models.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks (for bug reports)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in (check, convert, validate):
        module.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        return int(args.run(args))
    except OvgatherError as err:
        if debug:
            traceback.print_exc()
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug in ovgather: still one line unless --debug
        if debug:
            traceback.print_exc()
        else:
            print(f"error: internal error ({type(err).__name__}: {err}); "
                  "rerun with --debug and report it", file=sys.stderr)
        return EXIT_BAD_INPUT
