"""Pictures of a model (Graphviz): shapes on the edges, check status as colour.

:func:`to_dot` writes DOT text and needs no extra program (:mod:`.dot`); a whole model
is drawn folded and bounded (:mod:`.outline`); :func:`render` turns DOT into SVG or a
PNG of at most 20 megapixels with Graphviz's ``dot`` (:mod:`.graphviz`), and says how to
install it when it is missing; :func:`write_picture` also writes an interactive HTML page
(:mod:`.page`). A per-layer comparison's report colours the layers by their error instead
of their check status (:mod:`.errors`).
"""

from .dot import STATUS_COLOURS, Drawing, draw, to_dot
from .errors import ErrorView, LayerError, layer_errors, read_error_report
from .graphviz import FORMATS, MAX_PIXELS, render
from .outline import Outline, block_paths, outline
from .picture import DEFAULT_MAX_LAYERS, write_picture

__all__ = ["STATUS_COLOURS", "FORMATS", "MAX_PIXELS", "DEFAULT_MAX_LAYERS", "Drawing",
           "Outline", "to_dot", "draw", "outline", "block_paths", "render", "write_picture",
           "ErrorView", "LayerError", "layer_errors", "read_error_report"]
