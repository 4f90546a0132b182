"""The step table: the one definition of the scenario step language, loaded and checked.

What each step kind is (its argument, sync or async, whether it ends a script,
the stages it may run in, what it records) is data, ``fixtures/schema/steps.json``
(its format is ``steps.schema.json``). This module loads it once and checks it
for internal consistency; :mod:`conformance.interpreter.session` supplies one
handler per step kind and re-exports these names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "MUTATE_OPS",
    "MUTATION_OPS",
    "MUTATION_TARGETS",
    "NEXT_STAGES",
    "STAGES",
    "STEPS",
    "STEP_STAGES",
    "STEP_TABLE_PATH",
    "MutateOp",
    "ScriptError",
    "StageKind",
    "StepKind",
    "checked",
    "load_step_table",
]

#: The step table: the one definition of the step language (steps.schema.json is its format).
STEP_TABLE_PATH: Final = Path(__file__).resolve().parents[1] / "fixtures" / "schema" / "steps.json"


class ScriptError(Exception):
    """A script is malformed for the stage it runs in (a kit or scenario bug)."""


@dataclass(frozen=True)
class StepKind:
    """One step kind of the step table (see steps.json's description for each field)."""

    name: str
    argument: Mapping[str, Any]
    sync: bool
    suspends: bool
    ends: bool
    stages: frozenset[str]
    safe: bool
    safe_in_sync: bool
    records: Mapping[str, Any] | None


@dataclass(frozen=True)
class MutateOp:
    """One write a ``mutate`` step can attempt (the table's ``mutateOps``)."""

    name: str
    #: ``key``: the path's last element is a key of the container the rest names;
    #: ``container``: the whole path names the container whose own mutator runs.
    shape: str
    #: The container it applies to: ``sequence``, ``mapping`` or ``any``.
    kind: str
    #: ``none`` (no value), ``any`` or ``list`` (a list of items).
    value: str


@dataclass(frozen=True)
class StageKind:
    """One stage a script runs in."""

    name: str
    sync: bool
    next: bool


def load_step_table(
    path: Path = STEP_TABLE_PATH,
) -> tuple[Mapping[str, StageKind], Mapping[str, StepKind]]:
    """The stages and step kinds of a step table, checked for internal consistency."""
    document = json.loads(path.read_text(encoding="utf-8"))
    stages = {
        name: StageKind(name, bool(entry["sync"]), bool(entry["next"]))
        for name, entry in document["stages"].items()
    }
    steps: dict[str, StepKind] = {}
    for name, entry in document["steps"].items():
        step = StepKind(
            name=name,
            argument=entry["argument"],
            sync=bool(entry["sync"]),
            suspends=bool(entry["suspends"]),
            ends=bool(entry["ends"]),
            stages=frozenset(entry["stages"]),
            safe=bool(entry["safe"]),
            safe_in_sync=bool(entry["safeInSync"]),
            records=entry.get("records"),
        )
        if not step.stages <= set(stages):
            raise ValueError(f"{path}: step {name!r} names unknown stages")
        if step.suspends and step.sync:
            raise ValueError(f"{path}: step {name!r} suspends, so it cannot be sync")
        if step.safe_in_sync and not step.sync:
            raise ValueError(f"{path}: step {name!r} is safeInSync but not sync")
        if (step.safe or step.safe_in_sync) and step.ends:
            raise ValueError(f"{path}: step {name!r} ends a script, so it is not safe")
        steps[name] = step
    if "return" not in steps or not steps["return"].ends:
        raise ValueError(f"{path}: the table lacks the ending step 'return'")
    return stages, steps


_TABLE: Final = load_step_table()
STAGES: Final[Mapping[str, StageKind]] = _TABLE[0]
STEPS: Final[Mapping[str, StepKind]] = _TABLE[1]

NEXT_STAGES: Final = frozenset(name for name, stage in STAGES.items() if stage.next)
#: The step kinds allowed in only some stages, with those stages.
STEP_STAGES: Final[Mapping[str, frozenset[str]]] = {
    name: step.stages for name, step in STEPS.items() if step.stages != set(STAGES)
}
_MUTATE: Final[Mapping[str, Any]] = STEPS["mutate"].argument["properties"]
#: What a ``mutate`` step can aim at, and the writes it can attempt (from the table).
MUTATION_TARGETS: Final[tuple[str, ...]] = tuple(_MUTATE["target"]["enum"])
MUTATION_OPS: Final[tuple[str, ...]] = tuple(_MUTATE.get("op", {"enum": ["assign"]})["enum"])


def _mutate_ops(path: Path = STEP_TABLE_PATH) -> Mapping[str, MutateOp]:
    document = json.loads(path.read_text(encoding="utf-8"))
    table = {
        name: MutateOp(name, entry["shape"], entry.get("kind", "any"), entry["value"])
        for name, entry in document["mutateOps"].items()
    }
    if tuple(table) != MUTATION_OPS:
        raise ValueError(f"{path}: mutateOps and the mutate step's op enum disagree")
    valueless = set(STEPS["mutate"].argument["if"]["properties"]["op"]["enum"])
    if valueless != {name for name, op in table.items() if op.value == "none"}:
        raise ValueError(f"{path}: the ops that need no value disagree with mutateOps")
    return table


#: Every write a ``mutate`` step can attempt, by its ``op`` (the table's ``mutateOps``).
MUTATE_OPS: Final[Mapping[str, MutateOp]] = _mutate_ops()


def checked(step: Mapping[str, Any], stage: str, *, sync: bool) -> tuple[str, Any]:
    """A step's kind and argument, when the table allows it in this stage (else ScriptError)."""
    if len(step) != 1:
        raise ScriptError(f"a step has exactly one key, got {sorted(step)}")
    ((kind, arg),) = step.items()
    entry = STEPS.get(kind)
    if entry is None:
        raise ScriptError(f"unknown step {kind!r}")
    if stage not in entry.stages:
        raise ScriptError(f"step {kind!r} cannot run in stage {stage}")
    if sync and not entry.sync:
        raise ScriptError(f"{kind} cannot run in the synchronous {stage} stage")
    return kind, arg
