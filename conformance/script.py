"""Public import path of the step interpreter: ``conformance.script.Session`` / ``Binding``.

The interpreter lives in :mod:`conformance.interpreter.session`; this module only
re-exports what adapter authors import.
"""

from conformance.interpreter.session import *  # noqa: F403
from conformance.interpreter.session import Binding, Session, __all__  # noqa: F401
