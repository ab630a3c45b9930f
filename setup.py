"""Builds the optional compiled reader (``ovgather/_fastwalk.pyx``); everything else
is in pyproject.toml. Without a C compiler the install still succeeds and ovgather
reads IRs with its pure-Python walk (slower, same results)."""

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup

extension = Extension(
    "ovgather._fastwalk",
    ["ovgather/_fastwalk.pyx"],
    include_dirs=lxml.get_include(),
    optional=True,
)
setup(ext_modules=cythonize([extension], language_level=3, quiet=True))
