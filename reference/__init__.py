"""The reference tool registry: small, readable, and conformant to every rule of SPEC.md.

Start with :class:`Registry` (``registry.py``); its module docstring is the
theory of operation. Rule IDs stand beside the code that implements them.
"""

from reference._json import FrozenDict, NotLosslessJSON, materialize, thaw
from reference._signal import AbortController, AbortSignal
from reference._types import (
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
from reference.code_mode import CodeDispatchLog, CodeRunFailed, CodeRuntime, CodeSdk, ToolCallError
from reference.registry import EVENTS, ROUTES, Prepared, Registry, ToolRunContext
from reference.scheduler import run_batch
from reference.timeout import timeout_wrapper

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
    "CodeRuntime",
    "CodeSdk",
    "DispatchExecution",
    "ErrorCode",
    "ErrorInfo",
    "ExecutionToken",
    "FrozenDict",
    "NotLosslessJSON",
    "Prepared",
    "RegistrationError",
    "Registry",
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
