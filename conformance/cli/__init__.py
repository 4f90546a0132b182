"""The ``toolreg-conformance`` command."""

from conformance.cli.main import command, main

__all__ = ["command", "main"]
