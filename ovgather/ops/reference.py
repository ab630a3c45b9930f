"""NumPy references of the gather family, computing what OpenVINO's CPU plugin computes.

The function-style entry points::

    >>> import numpy as np
    >>> from ovgather import reference
    >>> data = np.arange(8).reshape(2, 2, 2)
    >>> reference.gather_nd(data, [[1], [0]], batch_dims=1)
    array([[2, 3],
           [4, 5]])
    >>> reference.gather_nd(data, [[[1], [0]], [[0], [-1]]], batch_dims=2, version=5)
    array([1, 2, 4, 7])
    >>> reference.gather(data, [-1, 5], axis=2)
    array([[[1, 0],
            [3, 0]],
    <BLANKLINE>
           [[5, 0],
            [7, 0]]])

Each lives beside its shape rule in ``ovgather/ops/`` (one op family per file), whose
reference section starts with the table of what the runtime does with negative and
out-of-range indices. In short, found by running OpenVINO 2026.4.1's CPU plugin
(tests/ops/test_reference.py keeps checking it):

==========================  ========================  ==============================
op                          index in ``[-s, -1]``     index outside ``[-s, s-1]``
==========================  ========================  ==============================
GatherND-5/8                from the end (``s+i``)    undefined (stray memory);
                                                      the reference raises IndexError
GatherElements-6            from the end              the runtime raises; so does
                                                      the reference (IndexError)
Gather-1, Gather-7          zeros                     zeros
Gather-8                    from the end              zeros (as its spec says), but
                                                      stray memory on 1-D i32/i64 data
ONNX GatherND/Elements      from the end              an error (ONNX); IndexError
==========================  ========================  ==============================

Two more runtime facts found on the way, both kept out of every comparison:
GatherND with index tuples of length 0 (``indices.shape[-1] == 0``, which OpenVINO's
shape rule accepts) returns garbage; and Gather-7/8 on static shapes with
``batch_dims >= 1`` and every data dim before ``axis`` of size 1 crashes the process
(``runtime.known_crash``); on dynamic shapes it computes the right values.

The references are vectorised (no Python loop over elements or index tuples): GatherND's
index tuples become flat row numbers in one ``numpy.ravel_multi_index`` call, which
checks their range as it goes, then ``numpy.take`` copies whole rows; Gather adds the
offsets of the outer dims to its indices and takes rows the same way; GatherElements is
``numpy.take_along_axis``.
"""

from __future__ import annotations

import numpy as np

from ..errors import ReferenceInputError
from .core import registry

# Each reference lives beside its shape rule; these are its public names.
from .gather import gather_reference as gather
from .gather_elements import gather_elements_reference as gather_elements
from .gather_nd import gather_nd_reference as gather_nd
from .gather_nd import onnx_gather_nd_reference as onnx_gather_nd

__all__ = [
    "gather_nd",
    "onnx_gather_nd",
    "gather_elements",
    "onnx_gather_elements",
    "gather",
    "for_layer",
]


def onnx_gather_elements(
    data: np.ndarray, indices: np.ndarray, axis: int = 0, opset: int = 13
) -> np.ndarray:
    """ONNX GatherElements-11/13: the same arithmetic as GatherElements-6."""
    if opset not in (11, 13):
        raise ReferenceInputError(f"ONNX GatherElements has opsets 11 and 13, but got {opset}")
    return gather_elements(data, indices, axis)


def for_layer(
    op_type: str,
    version: int,
    data: np.ndarray,
    indices: np.ndarray,
    *,
    batch_dims: int = 0,
    axis: int = 0,
) -> np.ndarray:
    """The reference of an OpenVINO layer given by its type, op version and attributes:
    its spec's (``OpSpec.reference``); UnsupportedOpError for an op version ovgather does
    not know, ReferenceInputError for one without a reference."""
    spec = registry.spec(op_type, version)
    if spec.reference is None:
        raise ReferenceInputError(f"no NumPy reference for {spec.name}")
    return spec.reference(data, indices, batch_dims=batch_dims, axis=axis)
