"""The reference tool registry: small, readable, and conformant to every rule of SPEC.md.

Start with :class:`Registry` (``registry.py``); its module docstring is the
theory of operation. Rule IDs stand beside the code that implements them.
"""

from ._json import FrozenDict, NotLosslessJSON, materialize, thaw
from ._signal import AbortController, AbortSignal
from ._types import (
    RUN_CODE,
    ApprovalRequest,
    DispatchExecution,
    ErrorCode,
    ErrorInfo,
    ExecutionToken,
    RegistrationError,
    ToolError,
    ToolExecution,
    ToolExecutionInput,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    accept,
    allow,
    ask,
    block,
    deny,
    failure,
    success,
    text,
)
from .code_mode import CodeDispatchLog, CodeRunFailed, ScriptedCodeRuntime, ToolCallError
from .registry import EVENTS, ROUTES, Prepared, Registry, ToolRunContext
from .scheduler import run_batch
from .timeout import timeout_wrapper

__version__ = "0.1.0"

__all__ = [
    "EVENTS",
    "ROUTES",
    "RUN_CODE",
    "AbortController",
    "AbortSignal",
    "ApprovalRequest",
    "CodeDispatchLog",
    "CodeRunFailed",
    "DispatchExecution",
    "ErrorCode",
    "ErrorInfo",
    "ExecutionToken",
    "FrozenDict",
    "NotLosslessJSON",
    "Prepared",
    "RegistrationError",
    "Registry",
    "ScriptedCodeRuntime",
    "ToolCallError",
    "ToolError",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolFailure",
    "ToolResult",
    "ToolRunContext",
    "ToolSuccess",
    "__version__",
    "accept",
    "allow",
    "ask",
    "block",
    "deny",
    "failure",
    "materialize",
    "run_batch",
    "success",
    "text",
    "thaw",
    "timeout_wrapper",
]
