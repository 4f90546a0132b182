"""Mutants of visibility (SCOPE-1..2).

Read beside ``conformance/judging/rules/scope.py``.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import reference.registry as regmod
from conformance.adapters.reference.mutants._base import mutant
from reference import ErrorCode, ExecutionToken, Registry, ToolExecutionInput, ToolFailure, failure
from reference.registry import Prepared, _code_failure


@mutant("SCOPE-1", "call names are NFKC-normalized before lookup: a full-width name runs the tool")
class NormalizedNames(Registry):
    """Model output is "cleaned up" before lookup: ``unicodedata.normalize("NFKC", name)``
    folds full-width and compatibility characters, so ``ｂａｓｈ`` (what a tokenizer glitch or
    a hostile document can produce) runs ``bash``. Names are identifiers, compared exactly:
    a name the model was never shown must be unknown (DEF-5, SCOPE-1)."""

    def _resolve(self, name: str, scope: str | None, parent: ExecutionToken | None) -> Any:
        return super()._resolve(unicodedata.normalize("NFKC", name), scope, parent)  # the bug


@mutant("SCOPE-1", "a hidden tool says so: 'not available to this agent' instead of unknown")
class HiddenToolAnnounced(Registry):
    """A friendlier error that leaks what the filter hides, and invites the model to retry."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        run = await super().prepare(call)
        hidden = any(call.name in layer for layer in self._scoped.values())
        if run.outcome == "unknown-tool" and hidden:
            message = f"tool `{call.name}` is not available to agent {call.agent!r}"  # the bug
            run.result = _code_failure(ErrorCode.UNKNOWN_TOOL, message)
        return run


@mutant("SCOPE-1", "execution looks tools up in every agent's layer: a hidden tool runs")
class LookupIgnoresScope(Registry):
    """``schemas`` filters by scope, but the lookup behind ``execute`` searches every layer:
    a model that guesses another agent's tool name runs it."""

    def _resolve(self, name: str, scope: str | None, parent: ExecutionToken | None) -> Any:
        tool = super()._resolve(name, scope, parent)
        if tool is not None or self.mode == "code":
            return tool
        for layer in self._scoped.values():  # the bug
            if name in layer:
                return layer[name]
        return None


@mutant("SCOPE-2", "schemas() lists every registered tool, whatever the scope")
class SchemasIgnoreScope(Registry):
    """Two resolution paths that drift: the model is shown tools its scope cannot run."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        if self.mode == "code":
            return super().schemas(scope)
        tools = dict(self._global)
        for layer in self._scoped.values():  # the bug
            tools.update(layer)
        transport = [regmod._schema(self._transport())] if self.mode == "both" else []
        return [regmod._schema(t) for t in tools.values()] + transport


@mutant("SCOPE-2", "schemas(scope) lists the global layer only, not the agent's own tools")
class SchemasShowGlobalOnly(Registry):
    """The schema list is built once for everybody: an agent's own registrations run when
    called but are never shown to its model (and a shadowed global shows the wrong tool)."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        return super().schemas(None)  # the bug: the scope is ignored


@mutant("SCOPE-1", "an unknown tool is reported with an error code of the registry's own")
class UnknownToolOwnCode(Registry):
    """A ``NOT_FOUND`` borrowed from HTTP instead of the spec's ``UNKNOWN_TOOL``: every
    consumer that routes on the code (the loop, Code Mode programs) misses it."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        run = await super().prepare(call)
        if run.outcome == "unknown-tool" and isinstance(run.result, ToolFailure):
            run.result = failure(run.result.message, "NOT_FOUND", name="NotFound")  # the bug
        return run
