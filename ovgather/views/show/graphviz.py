"""Graphviz's ``dot`` program: DOT text to SVG or PNG, a PNG of bounded size.

A whole model laid out at Graphviz's usual 96 dpi can be a picture of hundreds of
megapixels (a Swin transformer: 10,863 × 22,353) that image viewers and Pillow refuse.
A PNG is therefore laid out first (``dot -Tdot`` gives the bounding box), then drawn from
that layout (``dot -Kneato -n2``, which keeps every position) at the resolution that keeps it
within :data:`MAX_PIXELS`; the layout is computed once.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess

from ...atomic import AtomicOutput
from ...errors import OutputError, UsageError

__all__ = ["FORMATS", "MAX_PIXELS", "DOT_TIMEOUT", "render", "to_svg"]

FORMATS = ("dot", "svg", "png", "html")
#: The most pixels (width × height) of a PNG ``render`` writes.
MAX_PIXELS = 20_000_000
#: Seconds Graphviz may take before ``render`` gives up on it.
DOT_TIMEOUT = 300
_DPI = 96.0
_INSTALL_HINT = ("Graphviz's 'dot' program is needed for --format {fmt}; install it with "
                 "'apt-get install graphviz' (or 'brew install graphviz', 'conda install "
                 "graphviz'), or write --format dot and render it elsewhere")
_BOX = re.compile(rb'\bbb="([-\d.]+),([-\d.]+),([-\d.]+),([-\d.]+)"')


def render(dot_text: str, fmt: str, path: str | os.PathLike[str]) -> None:
    """Write ``dot_text`` as ``fmt`` (dot, svg or png) to ``path``, atomically (see
    :mod:`ovgather.atomic`: a private temporary file renamed over ``path``; a link at
    ``path`` is replaced, never written through). A PNG stays within MAX_PIXELS."""
    if fmt not in ("dot", "svg", "png"):
        raise UsageError(f"--format must be one of dot, svg, png, but got '{fmt}'")
    exe = None if fmt == "dot" else _dot(fmt, path)
    with AtomicOutput([path], "the picture") as out:
        if exe is None:
            with out.open(path, "w") as f:
                f.write(dot_text)
            return
        data, args = dot_text.encode("utf-8"), [f"-T{fmt}"]
        if fmt == "png":  # lay out once, then draw that layout at the resolution it allows
            data = _run(exe, ["-Tdot"], data, path)
            args = ["-Kneato", "-n2", "-Tpng", f"-Gdpi={_dpi(data):.3f}"]
        tmp = out.path(path)
        _run(exe, [*args, "-o", tmp], data, path)
        if not os.path.isfile(tmp):
            raise OutputError("Graphviz 'dot' wrote no picture", file=str(path))


def to_svg(dot_text: str, path: str | os.PathLike[str]) -> str:
    """The SVG Graphviz draws of ``dot_text`` (``path`` names the file in errors)."""
    svg = _run(_dot("html", path), ["-Tsvg"], dot_text.encode("utf-8"), path)
    if not svg:
        raise OutputError("Graphviz 'dot' wrote no picture", file=str(path))
    return svg.decode("utf-8")


def _dot(fmt: str, path: str | os.PathLike[str]) -> str:
    exe = shutil.which("dot")
    if exe is None:
        raise OutputError(_INSTALL_HINT.format(fmt=fmt), file=str(path))
    return exe


def _dpi(laid: bytes) -> float:
    """The resolution that keeps the laid-out picture within MAX_PIXELS (96 at most).

    >>> _dpi(b'digraph { graph [bb="0,0,720,720"]; }')  # 10 x 10 inches
    96.0
    >>> round(_dpi(b'graph [bb="0,0,7200,72000"]'), 1)  # 100 x 1000 inches
    14.1
    """
    m = _BOX.search(laid)
    if m is None:
        return _DPI
    x0, y0, x1, y1 = (float(v) for v in m.groups())
    # Graphviz adds a 4-point pad on each side and rounds pixels up: one inch spare
    inches = ((x1 - x0) / 72 + 1) * ((y1 - y0) / 72 + 1)
    return min(_DPI, math.sqrt(MAX_PIXELS / inches))


def _run(exe: str, args: list[str], data: bytes, path: str | os.PathLike[str]) -> bytes:
    try:
        run = subprocess.run([exe, *args], input=data, capture_output=True,
                             timeout=DOT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise OutputError(f"Graphviz 'dot' did not finish within {DOT_TIMEOUT} s (the graph "
                          "may be too big to lay out: draw a part with --layer and --depth, "
                          "or lower --max-layers, or write --format dot)",
                          file=str(path)) from None
    if run.returncode != 0:
        message = run.stderr.decode("utf-8", "replace").strip().splitlines()
        last = message[-1] if message else f"exit code {run.returncode}"
        raise OutputError(f"Graphviz 'dot' failed: {last}", file=str(path))
    return run.stdout
