"""Text helpers the reader, the writer and the bodies share: tensor names in a port's
``names``, rt_info elements as compact text, values cut short for messages and attribute
values escaped for XML."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

__all__ = ["split_names", "join_names", "rt_text", "short", "xml_attrs", "MAX_DIGITS"]

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
