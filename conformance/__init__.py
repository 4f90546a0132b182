"""toolreg-conformance: the conformance kit."""

__version__ = "0.1.0"
