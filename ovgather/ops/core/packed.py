"""The packed sub-byte and 8-bit element types, unpacked as OpenVINO lays them out.

>>> import numpy as np
>>> unpack(np.array([0x32, 0x14], np.uint8), "u4", 4).tolist()
[2, 3, 4, 1]
"""

from __future__ import annotations

from ..._lazy import numpy as np

__all__ = ["UNPACKED", "unpack"]


#: what each packed type unpacks to (its values as a NumPy dtype that holds them all)
UNPACKED = {"u1": "uint8", "u2": "uint8", "u3": "uint8", "u4": "uint8", "u6": "uint8",
            "i4": "int8", "nf4": "float32", "f4e2m1": "float32", "f8e4m3": "float32",
            "f8e5m2": "float32", "f8e8m0": "float32", "bf16": "float32"}

#: NF4's sixteen levels (the QLoRA normal-float table), as float32 bits
_NF4_BITS = (3212836864, 3207739825, 3204868912, 3200922272, 3197215309, 3191682367,
             3183114353, 0, 1034091263, 1042598627, 1048315101, 1051525946, 1054975160,
             1058015147, 1060705203, 1065353216)


def unpack(raw, etype: str, count: int):
    """The first ``count`` values of a Const of ``etype`` stored as the bytes ``raw``,
    laid out as OpenVINO packs them: ``u1`` eight to a byte from the high bit; ``u2``
    four to a byte from the low bits; the 4-bit types two to a byte, low nibble first;
    ``u3`` eight values in three bytes (their low two bits four to a byte from the high
    bits, then their high bits one to a bit from the high bit); ``u6`` four values in
    three bytes (their low nibbles two to a byte, high nibble first, then their high two
    bits four to a byte from the high bits).

    >>> unpack(np.array([0b10110000], np.uint8), "u1", 4).tolist()
    [1, 0, 1, 1]
    >>> unpack(np.array([0x9F], np.uint8), "i4", 2).tolist()
    [-1, -7]
    """
    b = np.asarray(raw, dtype=np.uint8).reshape(-1)
    if etype == "u1":
        out = np.unpackbits(b)
    elif etype == "u2":
        out = (b[:, None] >> np.array([0, 2, 4, 6], np.uint8)) & 3
    elif etype in ("u4", "i4", "nf4", "f4e2m1"):
        out = np.stack([b & 15, b >> 4], axis=1)
    elif etype == "u3":
        g = _groups(b, 3)
        low = (g[:, :2, None] >> np.array([6, 4, 2, 0], np.uint8)) & 3
        high = np.unpackbits(g[:, 2:3], axis=1)
        out = low.reshape(-1, 8) | (high << 2)
    elif etype == "u6":
        g = _groups(b, 3)
        low = (g[:, :2, None] >> np.array([4, 0], np.uint8)) & 15
        high = (g[:, 2:3] >> np.array([6, 4, 2, 0], np.uint8)) & 3
        out = low.reshape(-1, 4) | (high << 4)
    elif etype in ("f8e4m3", "f8e5m2", "f8e8m0", "bf16"):
        out = b
    else:
        raise ValueError(f"{etype} is not a packed type")
    return _decoded(np.asarray(out).reshape(-1), etype, count)


def _groups(b, size: int):
    """``b`` cut in groups of ``size`` bytes, the last one padded with zeros."""
    pad = (-len(b)) % size
    return np.concatenate([b, np.zeros(pad, np.uint8)]).reshape(-1, size)


def _decoded(codes, etype: str, count: int):
    if etype == "bf16":
        halves = codes[:2 * count].view(np.uint16).astype(np.uint32)
        return (halves << 16).view(np.float32)
    codes = codes[:count]
    if etype == "i4":
        return (codes.astype(np.int8) ^ 8) - 8
    if etype == "nf4":
        return np.array(_NF4_BITS, np.uint32).view(np.float32)[codes]
    if etype == "f4e2m1":
        levels = np.array([0, .5, 1, 1.5, 2, 3, 4, 6], np.float32)
        return np.where(codes & 8, -levels[codes & 7], levels[codes & 7])
    if etype == "f8e5m2":  # the upper byte of an f16
        return (codes.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    if etype == "f8e4m3":  # OCP E4M3: bias 7, no infinities, S.1111.111 is NaN
        e, m = (codes >> 3) & 15, (codes & 7).astype(np.float32)
        mag = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * np.exp2(e.astype(np.float32) - 7))
        mag = np.where((codes & 0x7F) == 0x7F, np.nan, mag)
        return np.where(codes & 0x80, -mag, mag).astype(np.float32)
    if etype == "f8e8m0":  # the exponent of a float32 (0 is 2^-127), 0xFF is NaN
        bits = np.where(codes == 0, 1 << 22, codes.astype(np.uint32) << 23)
        return np.where(codes == 255, np.nan, bits.astype(np.uint32).view(np.float32))
    return codes.astype(UNPACKED[etype])
