"""toolreg-conformance: the conformance kit."""

__version__ = "0.1.0"

from conformance.seam.adapter import Adapter, AdapterError, AdapterInfo

__all__ = ["Adapter", "AdapterError", "AdapterInfo", "__version__"]
