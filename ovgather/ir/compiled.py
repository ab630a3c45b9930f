"""The compiled walk (``_fastwalk.pyx``), or None when it is not built or was built
against another lxml (it reads lxml's C structs). Users read ``compiled._fastwalk`` when
they call it, so that setting it to None here turns off every use of it."""

from __future__ import annotations

from lxml import etree

try:  # setup.py builds it when a C compiler is there
    from . import _fastwalk
except ImportError:  # pragma: no cover - an install without a compiler
    _fastwalk = None
if _fastwalk is not None and _fastwalk.LXML_BUILT != etree.__version__:
    _fastwalk = None  # it reads lxml's structs: only with the lxml it was built against
