"""Public import path of the step interpreter: ``conformance.script.Session`` / ``Binding``.

The interpreter lives in :mod:`conformance.core.interpreter`; this module only
re-exports what adapter authors import.
"""

from conformance.core.interpreter import *  # noqa: F403
from conformance.core.interpreter import Binding, Session, __all__  # noqa: F401
