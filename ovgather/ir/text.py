"""Text helpers the reader, the writer and the bodies share: tensor names in a port's
``names``, rt_info elements as compact text, values cut short for messages and attribute
values escaped for XML."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

__all__ = ["split_names", "join_names", "rt_text", "short", "xml_attrs", "MAX_DIGITS",
           "ov_index", "canonical_id", "INT64_MAX", "is_uint", "odd_opset"]

_NAME_SPLIT = re.compile(r"(?<!\\),")


def split_names(text: str) -> list[str]:
    """Port ``names`` text → tensor names; ``\\,`` is a comma inside a name.

    >>> split_names(r"a\\,b,c")
    ['a,b', 'c']
    """
    if not text:
        return []
    if "\\" not in text:
        return text.split(",")
    return [part.replace("\\,", ",") for part in _NAME_SPLIT.split(text)]


def join_names(names: list[str]) -> str:
    """Tensor names → port ``names`` text, escaping commas as ``\\,``."""
    return ",".join(n.replace(",", "\\,") for n in names)


#: Digits of the longest integer an IR field may hold (int64 has 19): longer text is an
#: error, never handed to ``int()`` (which also stops at 4300 digits with a ValueError).
MAX_DIGITS = 19

INT64_MAX = (1 << 63) - 1

#: An index as OpenVINO's reader parses a layer id, port id, edge end or the <net>
#: version (``std::stoll`` over the whole text, then >= 0): leading whitespace, one
#: optional sign, ASCII digits to the end; nothing may follow.
_OV_INDEX = re.compile(r"[ \t\n\r]*([+-]?)([0-9]+)")


def ov_index(text: str | None) -> int | None:
    """The integer OpenVINO's reader reads from an id, port or version attribute, or
    None where it refuses the text: ``"01"``, ``" 1"``, ``"+1"`` and ``"-0"`` are
    read (1, 1, 1, 0); ``"1 "``, ``"0x1"``, ``"-1"``, ``""`` and anything past int64
    are refused.

    >>> [ov_index(t) for t in ("7", "007", " +7", "-0", "7 ", "-7", "9" * 19)]
    [7, 7, 7, 0, None, None, None]
    """
    if text is None:
        return None
    found = _OV_INDEX.fullmatch(text)
    if found is None:
        return None
    digits = found.group(2).lstrip("0")
    if len(digits) > MAX_DIGITS:
        return None
    value = int(digits or "0")
    if value > INT64_MAX or (found.group(1) == "-" and value):
        return None
    return value


def canonical_id(text: str | None) -> str | None:
    """An id in the one spelling the graph keys it by (``"01"`` and ``" +1"`` are
    ``"1"``: one layer to OpenVINO), or None for text OpenVINO refuses as an id."""
    value = ov_index(text)
    return None if value is None else str(value)



def short(value: str) -> str:
    """``value`` for a message, cut to 40 characters."""
    return value if len(value) <= 40 else value[:40] + f"… ({len(value)} characters)"



def rt_text(el: etree._Element) -> str:
    """An element as compact XML text, whitespace-only text and tails removed, so the
    same content always gives the same string (for lossless and comparable rt_info)."""
    for sub in el.iter():
        if sub.text is not None and not sub.text.strip():
            sub.text = None
        if sub.tail is not None and not sub.tail.strip():
            sub.tail = None
    return etree.tostring(el, encoding="unicode", with_tail=False)



_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                          "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


_XML_NS = "http://www.w3.org/XML/1998/namespace"
#: Prefixes to write for namespaces every reader knows (others get ns0, ns1, …).
_PREFIXES = {_XML_NS: "xml", "http://www.w3.org/2001/XMLSchema-instance": "xsi"}


def xml_attrs(items: dict[str, Any]) -> str:
    """`` k="v"`` pairs in order, values escaped for XML attributes.

    A namespaced name as lxml reads it (``{uri}local``) is written back as
    ``prefix:local``, with ``xmlns:prefix="uri"`` declared on the same element (the
    ``xml`` prefix needs no declaration)."""
    if not any(k[:1] == "{" for k in items):
        return "".join(f' {k}="{str(v).translate(_ESCAPES)}"' for k, v in items.items())
    out, declared = [], {}
    for k, v in items.items():
        if k[:1] == "{":
            uri, _, local = k[1:].partition("}")
            prefix = declared.get(uri) or _PREFIXES.get(uri)
            if prefix is None or (uri not in declared and prefix in declared.values()):
                prefix = f"ns{len(declared)}"
            if uri != _XML_NS and uri not in declared:
                out.append(f' xmlns:{prefix}="{uri.translate(_ESCAPES)}"')
            declared[uri] = prefix
            k = f"{prefix}:{local}"
        out.append(f' {k}="{str(v).translate(_ESCAPES)}"')
    return "".join(out)


def is_uint(text: str | None) -> bool:
    """True for a plain ASCII decimal integer (what ``int()`` parses exactly as OpenVINO)."""
    return (text is not None and text.isascii() and text.isdigit()
            and len(text) <= MAX_DIGITS)


def odd_opset(version: str | None) -> bool:
    """A layer version ``opset`` + digits with a leading zero (``opset01``): no opset
    OpenVINO's reader knows (it looks the text up as it is), whatever the op."""
    return version is not None and version.startswith("opset0")
