"""Graph passes: one file per rewrite, each a :class:`Pass` plus a function form;
``building`` holds the shape subgraphs they insert and the shapes they read, ``decompose``
the subgraphs ``downgrade`` builds for the ops an older OpenVINO lacks."""

from __future__ import annotations

from .base import Pass, PassResult
from .convert_gather_nd import ConvertGatherND, convert_gather_nd
from .downgrade import Downgrade, DowngradeError, downgrade
from .reshape import ReshapeResult, reshape

__all__ = ["Pass", "PassResult", "ConvertGatherND", "convert_gather_nd", "reshape", "ReshapeResult",
           "Downgrade", "DowngradeError", "downgrade"]
