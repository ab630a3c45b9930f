"""The `ovgather validate` subcommand (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register this module's subcommands on ``sub``."""
