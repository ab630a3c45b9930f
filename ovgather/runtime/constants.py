"""Constants of the packed and 8-bit element types numpy has no dtype for, decoded by
OpenVINO itself (its Convert, evaluated on the host): what ``convert --target-runtime``
stores instead when an older release cannot read the type.

>>> import numpy as np
>>> widened(np.array([0x38, 0xC0], np.uint8), "f8e4m3", (2,))   # 1.0 and -2.0 in E4M3
array([ 1., -2.], dtype=float16)
"""

from __future__ import annotations

import numpy as np

from .core import openvino

__all__ = ["WIDER", "widened"]

#: the element type that holds every value of a narrow type exactly
WIDER = {"f8e4m3": "float16", "f8e5m2": "float16", "f4e2m1": "float16", "f8e8m0": "float32",
         "nf4": "float32", "u2": "uint8", "u3": "uint8", "u6": "uint8"}


def widened(raw: np.ndarray, element_type: str, shape: tuple[int, ...]) -> np.ndarray:
    """The values of a Const of ``element_type`` and ``shape`` stored as the bytes
    ``raw``, as a numpy array of the type :data:`WIDER` names for it."""
    ov = openvino()
    ov_shape = ov.Shape(list(shape))
    packed = ov.Tensor(getattr(ov.Type, element_type), ov_shape)
    packed.data.view(np.uint8).reshape(-1)[:] = np.asarray(raw, np.uint8).reshape(-1)[
        :packed.byte_size]
    decoded = ov.Tensor(ov.Type.f32, ov_shape)
    convert = ov.opset1.convert(ov.op.Constant(packed), ov.Type.f32)
    if not convert.evaluate([decoded], [packed]):  # pragma: no cover - every type above
        raise ValueError(f"OpenVINO cannot decode {element_type}")
    return decoded.data.astype(WIDER[element_type]).reshape(shape)
