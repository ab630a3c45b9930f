"""What a person or a CI reads: pictures and the HTML page (``show``), one layer's rule
step by step (``explain``), notebook display, and check's SARIF and JUnit reports.

The library never prints: these build the text, markup and pictures; ``cli/`` writes them.
"""

from .notebook import Picture, picture, view

__all__ = ["Picture", "picture", "view"]
