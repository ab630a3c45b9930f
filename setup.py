"""Builds the optional compiled reader (``ovgather/ir/_fastwalk.pyx``); everything else
is in pyproject.toml.

The extension is optional for real: ``cythonize()`` returns new Extension objects and
drops their ``optional`` flag, so the build step itself catches a failed compile (no C
compiler, no Python headers), says so in one warning and carries on. The install then
succeeds and ovgather reads IRs with its pure-Python walk (slower, same results).
"""

import sys

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class optional_build_ext(build_ext):
    """build_ext that turns a failed compile of the optional walk into a warning."""

    def run(self):
        try:
            super().run()
        except Exception as err:  # distutils' CCompilerError, PlatformError, OSError…
            self._skip(err)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as err:
            self._skip(err)

    @staticmethod
    def _skip(err):
        print(f"warning: the compiled IR walk was not built ({type(err).__name__}: {err}); "
              "ovgather will read IRs with its pure-Python walk (slower, same results)",
              file=sys.stderr)


extension = Extension("ovgather.ir._fastwalk", ["ovgather/ir/_fastwalk.pyx"],
                      include_dirs=lxml.get_include())
setup(ext_modules=cythonize([extension], language_level=3, quiet=True),
      cmdclass={"build_ext": optional_build_ext})
