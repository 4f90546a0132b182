"""The attack surface of a tool registry, as data: which writes can be attempted where.

``fixtures/schema/attack-surface.json`` lists the objects a stage's callable can be
handed (which ones each stage is handed is the stage table's ``handed`` column,
:mod:`conformance.scenario.stages`) and every write a buggy or hostile callback can
attempt on each, with the rules of SPEC.md each write threatens. A *cell* is one
(stage, object, write); its id is stable (``pre-execute/execution.arguments/assign``)
so that strategies can aim at it and a report can count it. :func:`cells` lists
the cells an adapter's capabilities allow, each with the ``mutate`` step that
attempts it; :func:`gaps` lists the stages where nothing can be attempted yet.

Coverage is read from traces, never from scenarios: a cell counts as *attempted*
when a trace holds the delivered ``mutate`` event of its write in its stage (whatever
scenario put it there: a fixture, a generated scenario, the sweep of
:func:`probe_scenario`). :func:`attempted` counts one trace; :func:`coverage`
turns the counts of a run into the report's matrix, naming every cell never
attempted and every cell the adapter's capabilities exclude.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from conformance.scenario import stages
from conformance.scenario.steps import MUTATION_OPS, MUTATION_TARGETS, STAGES

__all__ = [
    "SURFACE_PATH",
    "Cell",
    "Gap",
    "Surface",
    "attempted",
    "cell",
    "cells",
    "coverage",
    "gaps",
    "load_surface",
    "probe_scenario",
]

SURFACE_PATH: Final = (
    Path(__file__).resolve().parents[1] / "fixtures" / "schema" / "attack-surface.json"
)
#: The table's write ``replace`` is the mutate step's ``signal`` target with the default op.
_STEP_OP: Final[Mapping[str, str]] = {"replace": "assign"}


@dataclass(frozen=True)
class Cell:
    """One write one stage's callable can attempt on one object it is handed."""

    stage: str
    object: str
    write: str
    #: The ``mutate`` step's argument that attempts it.
    step: Mapping[str, Any]
    #: The rules of SPEC.md this write threatens in this stage.
    rules: tuple[str, ...]
    #: The adapter capabilities a scenario attempting it needs.
    capabilities: frozenset[str]
    #: The stage that must first return the value under the name ``step["path"][0]``
    #: (a kept value), and the steps it then runs; None when nothing must be kept.
    keeper: str | None = None
    keep: tuple[Mapping[str, Any], ...] = ()
    #: Steps the writing callable runs right after the write (the table's ``then``).
    then: tuple[Mapping[str, Any], ...] = ()
    #: The ``mutate`` steps of every write of its object, in table order, when one probe per
    #: stage attempts them all (the table's ``together``); empty otherwise.
    group: tuple[Mapping[str, Any], ...] = ()

    @property
    def leads(self) -> bool:
        """Does this cell's probe attempt its write (alone, or first of its group)?"""
        return not self.group or self.group[0] == self.step

    @property
    def id(self) -> str:
        return f"{self.stage}/{self.object}/{self.write}"

    @property
    def event_key(self) -> tuple[str, str, str]:
        """(stage, ``mutate`` text, op) of the trace event that attempts this cell."""
        return (self.stage, mutation_text(self.step), str(self.step.get("op", "assign")))

    def keeper_steps(self) -> list[dict[str, Any]]:
        """The keeper stage's script: keep under the cell's name, then its own steps."""
        if self.keeper is None:
            return []
        return [{"keep": self.step["path"][0]}, *(dict(s) for s in self.keep)]


@dataclass(frozen=True)
class Gap:
    """A stage or callback where no write can be attempted yet, and why."""

    stage: str
    callable: str
    reason: str


@dataclass(frozen=True)
class Surface:
    """The loaded table."""

    probe_arguments: Mapping[str, Any]
    cells: tuple[Cell, ...]
    gaps: tuple[Gap, ...]


def load_surface(path: Path = SURFACE_PATH) -> Surface:
    """Every cell and gap of a table, checked against the step language it relies on.

    The stages, what each is handed and the capabilities it needs are the stage table's
    (:mod:`conformance.scenario.stages`); this table says what each object is and which
    writes can be attempted on it.
    """
    document = json.loads(path.read_text(encoding="utf-8"))
    objects: Mapping[str, Any] = document["objects"]
    table = {row.stage: row for row in stages.rows()}
    out: list[Cell] = []
    found: list[Gap] = []
    for stage, row in table.items():
        if row.handed is None:
            continue  # a stage the attack surface does not model
        if not row.handed:
            found.append(Gap(stage, row.callable, row.gap or ""))
            continue
        if row.scriptable and stage not in STAGES:
            raise ValueError(f"{path}: {stage!r} is not a stage of the step language")
        for name in row.handed:
            if name not in objects:
                raise ValueError(f"{path}: stage {stage!r} is handed {name!r}, not in objects")
            keeper = objects[name].get("keeper")
            needs = row.needs | (table[keeper].needs if keeper in table else frozenset())
            out.extend(_cells(path, stage, needs, name, objects[name]))
    return Surface(document["probeArguments"], tuple(out), tuple(found))


def _cells(
    path: Path, stage: str, needs: Iterable[str], name: str, obj: Mapping[str, Any]
) -> Iterable[Cell]:
    if obj["target"] not in MUTATION_TARGETS:
        raise ValueError(f"{path}: {name}: unknown mutate target {obj['target']!r}")
    rules = obj["threatens"].get(stage, obj["threatens"]["default"])
    steps: list[tuple[str, dict[str, Any]]] = []
    for write, how in obj["writes"].items():
        op = _STEP_OP.get(write, write)
        if op not in MUTATION_OPS:
            raise ValueError(f"{path}: {name}: unknown write {write!r}")
        step: dict[str, Any] = {"target": obj["target"], "path": list(how["path"])}
        if op != "assign":
            step["op"] = op
        if "value" in how:
            step["value"] = how["value"]
        steps.append((write, step))
    group = tuple(step for _, step in steps) if obj.get("together") else ()
    for write, step in steps:
        yield Cell(
            stage=stage,
            object=name,
            write=write,
            step=step,
            rules=tuple(rules),
            capabilities=frozenset(needs),
            keeper=obj.get("keeper"),
            keep=tuple(obj.get("keep", ())),
            then=tuple(obj.get("then", ())),
            group=group,
        )


@cache
def _default() -> Surface:
    return load_surface()


def mutation_text(step: Mapping[str, Any]) -> str:
    """How a trace names the object a ``mutate`` step wrote (its event's ``mutate``)."""
    return str(step["target"]) + "".join(f"[{p!r}]" for p in step["path"])


@cache
def _by_event() -> Mapping[tuple[str, str, str], str]:
    return {cell.event_key: cell.id for cell in _default().cells}


def attempted(trace: Mapping[str, Any] | None) -> Counter[str]:
    """How often a trace attempts each cell (an event per attempt, whether it raised).

    Only confirmed attempts count: a write the adapter never delivered (``delivered:
    false``) is no attempt, and no refusal either."""
    found: Counter[str] = Counter()
    if not isinstance(trace, Mapping) or not isinstance(trace.get("events"), list):
        return found
    index = _by_event()
    for event in trace["events"]:
        if not isinstance(event, Mapping) or "mutate" not in event:
            continue
        if event.get("delivered") is False:  # never routed by the adapter: not attempted
            continue
        key = (str(event.get("stage")), str(event["mutate"]), str(event.get("op", "assign")))
        cell = index.get(key)
        if cell is not None:
            found[cell] += 1
    return found


def coverage(
    counts: Mapping[str, int],
    capabilities: Iterable[str],
    rules: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The report's coverage section: attempts per cell, by stage and object.

    ``matrix[stage][object][write]`` is the count of every cell the capabilities
    allow and whose threatened rules the run selected (``rules``; None: all);
    ``notAttempted`` names those with no attempt. ``excluded`` names each cell the
    capabilities exclude with the capabilities it needs; ``notSelected`` counts the
    cells that threaten no selected rule; ``gaps`` are the stages where nothing can
    be attempted yet, with the reason.
    """
    allowed = frozenset(capabilities)
    selected = None if rules is None else frozenset(rules)
    matrix: dict[str, dict[str, dict[str, int]]] = {}
    excluded: dict[str, list[str]] = {}
    ids: list[str] = []
    not_selected = 0
    for cell in _default().cells:
        if not cell.capabilities <= allowed:
            excluded[cell.id] = sorted(cell.capabilities - allowed)
            continue
        if selected is not None and not selected & set(cell.rules):
            not_selected += 1
            continue
        row = matrix.setdefault(cell.stage, {}).setdefault(cell.object, {})
        row[cell.write] = int(counts.get(cell.id, 0))
        ids.append(cell.id)
    never = [i for i in ids if not counts.get(i)]
    return {
        "cells": len(ids),
        "attemptedCells": len(ids) - len(never),
        "attempts": sum(int(counts.get(i, 0)) for i in ids),
        "matrix": matrix,
        "notAttempted": never,
        "excluded": excluded,
        "notSelected": not_selected,
        "gaps": [{"stage": g.stage, "callable": g.callable, "reason": g.reason} for g in gaps()],
    }


def cells(capabilities: Iterable[str] | None = None) -> list[Cell]:
    """The cells an adapter with these capabilities can attempt (None: every cell)."""
    everything = _default().cells
    if capabilities is None:
        return list(everything)
    allowed = frozenset(capabilities)
    return [cell for cell in everything if cell.capabilities <= allowed]


def cell(cell_id: str) -> Cell:
    """The cell named ``stage/object/write`` (KeyError if the table has none)."""
    for found in _default().cells:
        if found.id == cell_id:
            return found
    raise KeyError(f"no attack-surface cell {cell_id!r}")


def gaps() -> list[Gap]:
    """The stages and callbacks where no write can be attempted yet, with the reason."""
    return list(_default().gaps)


_ASK: Final = {"return": {"kind": "ask", "reason": "probe"}}


def probe_scenario(cell: Cell, call_id: str = "c0") -> dict[str, Any] | None:
    """A scenario attempting one cell, observed in every later stage and a later call (None
    for a cell the probe of its group's first write attempts, see ``Cell.group``).

    One tool ``probe`` called twice (``call_id``, then ``call_id + "-later"``) with the
    table's probe arguments by agent ``main``; every scripted stage observes the
    arguments and the execution (and the result where it has one); the cell's stage
    attempts its write, after its keeper stage kept the value it needs. A
    code-dispatch-log cell is attempted by a ``run_code`` program calling ``probe``
    (see :func:`_code_probe`). None for a cell no scenario can attempt yet.
    """
    if not cell.leads:
        return None  # attempted by the probe of the first write of its object in this stage
    if cell.stage == "code-dispatch-log":
        return _code_probe(cell, call_id)
    writes = cell.group or (cell.step,)
    mutate = [*({"mutate": dict(step)} for step in writes), *(dict(step) for step in cell.then)]
    caller = [dict(step) for step in writes] if cell.stage == "caller" else []

    def at(stage: str, *, result: bool = False) -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = [{"observe": "arguments"}, {"observe": "execution"}]
        if cell.then:
            seen.append({"observe": "signal"})
        if result:
            seen.append({"observe": "result"})
        return seen + (mutate if cell.stage == stage else [])

    def ending(stage: str, default: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return cell.keeper_steps() if cell.keeper == stage else default

    tool: dict[str, Any] = {
        "name": "probe",
        "description": "A tool every stage looks at.",
        "parameters": {"type": "object"},
        "output": {"schema": {}, "render": "json"},
        "execute": at("body") + ending("body", [{"return": {"k": "a", "v": [1]}}]),
        "finalizeContent": at("finalize", result=True) + ending("finalize", [{"return": None}]),
    }
    pre = ending("pre-execute", [_ASK] if cell.stage == "approval" else [{"delegate": True}])
    out: dict[str, Any] = {
        "id": f"surface/{cell.id}",
        "rules": sorted(set(cell.rules)),
        "description": f"Attack-surface cell {cell.id}: {cell.stage} attempts {cell.write} on "
        f"{cell.object}{' (and every other write of it, in order)' if cell.group else ''}; "
        "every later stage, observer and a later call observe.",
        "tools": [tool],
        "preExecute": [{"id": "policy", "steps": at("pre-execute") + pre}],
        "guards": [{"id": "guard", "steps": [*at("guard"), {"return": None}]}],
        "wrappers": [
            {"id": "wrap", "steps": at("wrapper") + ending("wrapper", [{"delegate": True}])}
        ],
        "postExecute": [
            {
                "id": "post",
                "steps": at("post-execute", result=True)
                + ending("post-execute", [{"delegate": True}]),
            }
        ],
        "observers": [
            {"id": "first", "steps": at("result", result=True)},
            {"id": "later", "steps": [{"observe": "execution"}, {"observe": "result"}]},
        ],
        "actions": [
            {
                "call": {
                    "callId": c,
                    "name": "probe",
                    "arguments": copy.deepcopy(_default().probe_arguments),
                    "agent": "main",
                }
            }
            for c in (call_id, f"{call_id}-later")
        ],
    }
    if cell.stage == "approval":
        out["approval"] = {"steps": [*mutate, {"return": "allowed-once"}]}
    if caller:  # the caller writes right after invoking execute, before awaiting it
        out["actions"][0]["call"]["afterInvoke"] = caller
    return out


def _code_probe(cell: Cell, call_id: str) -> dict[str, Any]:
    """A code-mode scenario: two ``run_code`` calls, each calling ``probe`` from its
    program; the code-dispatch-log listener observes its record, attempts the cell's
    write and delegates; a second listener and the result observers look after it."""
    program = {
        "steps": [
            {"call": "probe", "arguments": copy.deepcopy(_default().probe_arguments)},
            {"call": "probe", "arguments": {"again": True}},
        ]
    }
    seen: list[dict[str, Any]] = [{"observe": "execution"}]
    return {
        "id": f"surface/{cell.id}",
        "rules": sorted(set(cell.rules)),
        "description": f"Attack-surface cell {cell.id}: a code-dispatch-log listener attempts "
        f"{cell.write} on {cell.object}; a later listener, the observers and a later "
        "run_code call observe.",
        "registry": {"mode": "code"},
        "tools": [
            {
                "name": "probe",
                "description": "A tool a program calls.",
                "parameters": {"type": "object"},
                "output": {"schema": {}, "render": "json"},
                "execute": [{"observe": "arguments"}, {"return": {"k": "a", "v": [1]}}],
            }
        ],
        "codeDispatchLog": [
            {
                "id": "first",
                "steps": [
                    *seen,
                    {"mutate": dict(cell.step)},
                    *(dict(step) for step in cell.then),
                    {"delegate": True},
                ],
            },
            {"id": "later", "steps": [*seen, {"delegate": True}]},
        ],
        "observers": [{"id": "log", "steps": [{"observe": "execution"}, {"observe": "result"}]}],
        "actions": [
            {
                "call": {
                    "callId": c,
                    "name": "run_code",
                    "arguments": {"code": json.dumps(program), "description": "a probe"},
                    "agent": "main",
                }
            }
            for c in (call_id, f"{call_id}-later")
        ],
    }
