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


def open_terminal(columns: int = 100, lines: int = 24) -> tuple[int, int]:
    """A pseudo-terminal (master, slave) whose window is ``columns`` wide. A new one
    reports 0 columns (ovgather then takes 100); a test of the width names its own."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    return master, slave


def terminal_env(columns: int | None = 100, **extra: str) -> dict[str, str]:
    """The environment of a command run on a terminal ``columns`` wide: ``COLUMNS`` set
    to it (None: unset, so the terminal's own window size counts), ``extra`` added."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return {**env, **extra}


def on_terminal(argv: list[str], columns: int | None = 100, cwd: str | None = None,
                env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``python -m ovgather argv`` with stdout and stderr on a pseudo-terminal of
    ``columns`` columns (its window size; ``COLUMNS`` unset); its exit code and what the
    terminal shows, ``\\r\\n`` read as ``\\n``. No progress bar (its delay is an hour)."""
    import subprocess
    import sys

    master, slave = open_terminal(columns or 0)
    proc = subprocess.Popen([sys.executable, "-m", "ovgather", *argv], cwd=cwd,
                            stdout=slave, stderr=slave,
                            env=env or terminal_env(None, OVGATHER_PROGRESS_DELAY="3600"))
    os.close(slave)
    shown = read_terminal(master)
    return proc.wait(), shown.decode("utf-8", errors="replace").replace("\r\n", "\n")
