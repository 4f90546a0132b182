"""The kit's version: one fact every floor may read (the package face re-exports it)."""

__version__ = "0.1.0"
