"""The ``toolreg-conformance`` command."""

from conformance.cli.main import main

__all__ = ["main"]
