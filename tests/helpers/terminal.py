"""Running a command as a newcomer types it: on a pseudo-terminal, read whole."""

from __future__ import annotations

import os


def read_terminal(master: int) -> bytes:
    """Everything shown on the pseudo-terminal ``master`` until the child closes it (then
    ``master`` is closed too)."""
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    return shown


def _commands() -> tuple[str, ...]:
    """Every subcommand the parser offers (a new one is then covered by every test here)."""
    import argparse

    from ovgather.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return tuple(sub.choices)


COMMANDS = _commands()
