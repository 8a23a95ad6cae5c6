"""The package's version, as a literal: reading it imports nothing, and the build takes it from here
(``[tool.setuptools.dynamic]`` in pyproject.toml). ``hera_volcano.__version__`` and ``hera-volcano --version`` show it.
"""

__version__ = "0.1.0"
