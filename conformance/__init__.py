"""toolreg-conformance: the conformance kit."""

from conformance._version import __version__
from conformance.seam.adapter import Adapter, AdapterError, AdapterInfo

__all__ = ["Adapter", "AdapterError", "AdapterInfo", "__version__"]
