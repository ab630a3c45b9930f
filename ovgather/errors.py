"""The ovgather exception family.

Every error a user can cause is an :class:`OvgatherError`. Its message states the
broken rule in words, then what was seen, then where: the file, the XML line and the
layer (name and id) when they are known. The CLI prints ``str(err)`` as one
``error:`` line; nothing else is needed to locate the problem.

The tree::

    OvgatherError
    ├── IRError                 the input file cannot be used as an IR (CLI exit 2)
    │   ├── XMLSyntaxError      not XML, empty, truncated, forbidden DTD/entities
    │   ├── IRStructureError    wrong root, unknown version, duplicate ids or ports,
    │   │                       dangling edges, cycles, malformed dims or attributes
    │   └── WeightsError        missing or short .bin, bad offset/size, overlaps
    ├── ShapeError
    │   ├── ShapeParseError     shape text that is not OpenVINO's notation
    │   ├── ShapeInferenceError the inputs of an op break one of its rules
    │   └── ReferenceInputError arrays a NumPy reference cannot compute (also a
    │       └── IndexRangeError ValueError; out-of-range indices also an IndexError)
    ├── UnsupportedOpError      an op/opset combination that does not exist
    ├── RewriteError            a graph rewrite that cannot be applied
    ├── OutputError             an output file that cannot be written
    ├── UsageError              a bad command-line option or argument
    ├── CompareError            two models that cannot be fed the same inputs
    └── RuntimeBridgeError      the OpenVINO runtime refused a model ovgather built
"""

from __future__ import annotations

__all__ = [
    "OvgatherError",
    "IRError",
    "XMLSyntaxError",
    "IRStructureError",
    "WeightsError",
    "ShapeError",
    "ShapeParseError",
    "ShapeInferenceError",
    "ReferenceInputError",
    "IndexRangeError",
    "UnsupportedOpError",
    "RewriteError",
    "ReshapeError",
    "OutputError",
    "UsageError",
    "CompareError",
    "RuntimeBridgeError",
]


class OvgatherError(Exception):
    """Base of every error ovgather raises on purpose.

    ``message`` holds the rule and what was seen; ``file``, ``line``, ``layer_name`` and
    ``layer_id`` say where. ``str()`` joins them into one line.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        layer_name: str | None = None,
        layer_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.layer_name = layer_name
        self.layer_id = layer_id

    def located(
        self,
        *,
        file: str | None = None,
        line: int | None = None,
        layer_name: str | None = None,
        layer_id: str | None = None,
    ) -> OvgatherError:
        """Fill in the location fields that are still unknown; return ``self``.

        Lets a low-level rule raise without knowing where it runs, and the caller that
        does know (the IR walker) add the file, line and layer before re-raising.
        """
        self.file = self.file or file
        self.line = self.line if self.line is not None else line
        self.layer_name = self.layer_name if self.layer_name is not None else layer_name
        self.layer_id = self.layer_id if self.layer_id is not None else layer_id
        return self

    @property
    def where(self) -> str:
        """``file:line, layer 'name' (id N)`` with the parts that are known."""
        parts = []
        if self.file:
            parts.append(self.file if self.line is None else f"{self.file}:{self.line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.layer_name is not None or self.layer_id is not None:
            layer = "layer"
            if self.layer_name is not None:
                layer += f" '{self.layer_name}'"
            if self.layer_id is not None:
                layer += f" (id {self.layer_id})"
            parts.append(layer)
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where
        return f"{where}: {self.message}" if where else self.message


class IRError(OvgatherError):
    """The input cannot be used as an OpenVINO IR."""


class XMLSyntaxError(IRError):
    """The XML itself is unusable: empty, not XML, truncated, or uses DTDs/entities."""


class IRStructureError(IRError):
    """Well-formed XML that is not a valid IR (ids, ports, edges, dims, attributes)."""


class WeightsError(IRError):
    """The .bin file is missing, too short, or a Const slice does not fit it."""


class ShapeError(OvgatherError):
    """Base of the shape errors."""


class ShapeParseError(ShapeError, ValueError):
    """Text that is not a shape or dimension in OpenVINO's notation."""


class ShapeInferenceError(ShapeError):
    """The input shapes, types or attributes of an op break one of its rules."""


class ReferenceInputError(ShapeError, ValueError):
    """Arrays that break an op's rules, given to its NumPy reference."""


class IndexRangeError(ReferenceInputError, IndexError):
    """Index values outside the range the runtime defines for the op."""


class UnsupportedOpError(OvgatherError):
    """An op type that the requested opset does not contain."""


class RewriteError(OvgatherError):
    """A graph rewrite that cannot be applied to this graph."""


class ReshapeError(RewriteError):
    """New input shapes that a layer's rule rejects (the model cannot be reshaped).

    ``blockers`` lists every such layer (``id``, ``name``, ``type``, ``line``, ``why``;
    ``sizes`` when it fails only at some sizes of a dynamic dim; ``hint``), the first of
    them in the message. ``fixes``: the rewrites tried before giving up (with ``--fix``).
    """

    def __init__(self, message: str, blockers: list | None = None,
                 fixes: list | None = None, **where) -> None:
        super().__init__(message, **where)
        self.blockers = list(blockers or [])
        self.fixes = list(fixes or [])


class OutputError(OvgatherError):
    """An output file that cannot be written."""


class UsageError(OvgatherError):
    """A bad command-line option or argument."""


class CompareError(OvgatherError):
    """Two models that cannot be fed the same inputs (``compare``): an input of one has no
    partner of the same name, element type and shapes in the other."""


class RuntimeBridgeError(OvgatherError):
    """The OpenVINO runtime could not build, compile or run what ovgather asked for."""
