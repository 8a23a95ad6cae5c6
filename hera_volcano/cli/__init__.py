"""The command-line edge: every argument parser, standard stream, file write and exit code of the commands.
``hera-volcano COMMAND`` starts at :func:`main`."""

from hera_volcano.cli.dispatch import main

__all__ = ["main"]
