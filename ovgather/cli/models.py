"""The MODEL argument of every subcommand: its help text and how the CLI loads it.

An IR goes through the lean reader (no openvino import); an ``.onnx`` model goes through
``openvino.convert_model``, whose frontends write native log lines (absl, TensorFlow's
text-format parser probing the file) straight to file descriptor 2 when a file is not
what they expect. Those lines would stand before the ``error:`` line, so while the
conversion runs fd 2 points at a scratch file that is dropped afterwards (kept with
``--debug``). A ``.bin`` given as MODEL gets a hint to pass the ``.xml`` beside it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import UsageError
from .output import Progress

__all__ = ["add_model_argument", "load", "quiet_native_stderr", "refuse_weights"]

IR_HELP = "an OpenVINO IR: the .xml file, with its .bin beside it"
ANY_HELP = ("the model: an OpenVINO IR .xml (its .bin beside it) or an .onnx file, which "
            "OpenVINO converts in memory")


def add_model_argument(p: argparse.ArgumentParser, many: bool = False,
                       onnx: bool = True) -> None:
    """The positional MODEL (``many``: one or more) with a help text naming what it takes."""
    text = ANY_HELP if onnx else IR_HELP
    if many:
        p.add_argument("models", nargs="+", metavar="MODEL",
                       help=text + "; several allowed; a folder stands for the IRs below it")
    else:
        p.add_argument("model", metavar="MODEL", help=text)


def refuse_weights(path: str) -> None:
    if path.lower().endswith(".bin"):
        xml = path[:-4] + ".xml"
        raise UsageError(f"this is the weights file of an IR; pass the .xml beside it: {xml}",
                         file=path)


def load(path: str, progress: Progress | None = None, debug: bool = False,
         ir_only: bool | str = False, what: str = "reading", plain: bool = False,
         meanwhile: Callable[[], object] | None = None) -> Any:
    """Read ``path`` as the CLI does (see the module docstring); the progress bar, when
    there is one, names the step. ``plain``: an IR comes as a ``LayerGraph`` (no networkx
    import), for commands that only infer; ``meanwhile``: as ``read_layer_graph`` takes
    it (called once in any case)."""
    refuse_weights(path)  # ir_only: the command that takes an IR only (True: convert)
    onnx = path.lower().endswith(".onnx")
    if onnx and ir_only:
        command = ir_only if isinstance(ir_only, str) else "convert"
        raise UsageError(f"{command} takes an IR .xml; .onnx is converted by check/validate "
                         "only (and infer, explain, extract, show): save the model as an IR "
                         "first (openvino.save_model)", file=path)
    owned = progress is None
    bar = Progress(None, f"{what} {os.path.basename(path)}") if owned else progress
    try:
        if progress is not None:
            progress.describe(f"{what} {os.path.basename(path)}")
        if meanwhile is not None and (onnx or not plain):  # read_layer_graph calls it
            meanwhile()
        if onnx:
            from ..runtime.interop import load_model

            with quiet_native_stderr(enabled=not debug):
                return load_model(path)
        from ..ir import read_ir, read_layer_graph

        return read_layer_graph(path, meanwhile=meanwhile) if plain else read_ir(path)
    finally:
        if owned:
            bar.close()


@contextmanager
def quiet_native_stderr(enabled: bool = True) -> Iterator[None]:
    """Send what native code writes to fd 2 into a scratch file while the block runs.

    ``sys.stderr`` itself is kept on the real stderr (a duplicate of fd 2), so Python's
    own output and the progress bar still show.
    """
    if not enabled:
        yield
        return
    try:
        sys.stderr.flush()
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # pytest's capture: no real fd 2
        yield
        return
    saved = os.dup(fd)
    old_stderr = sys.stderr
    sys.stderr = os.fdopen(os.dup(saved), "w", buffering=1, encoding=old_stderr.encoding,
                           errors="backslashreplace")
    import tempfile  # here: it costs a check ~10 ms to import (random, shutil, lzma...)

    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), fd)
            try:
                yield
            finally:
                os.dup2(saved, fd)
    finally:
        os.close(saved)
        sys.stderr.close()
        sys.stderr = old_stderr
