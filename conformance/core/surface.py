"""The attack surface of a tool registry, as data: which writes can be attempted where.

``fixtures/schema/attack-surface.json`` lists, for every stage and callback, the
objects its callable is handed and every write a buggy or hostile callback can
attempt on each, with the rules of SPEC.md each write threatens. A *cell* is one
(stage, object, write); its id is stable (``pre-execute/execution.arguments/assign``)
so that strategies can aim at it and a report can count it. :func:`cells` lists
the cells an adapter's capabilities allow, each with the ``mutate`` step that
attempts it; :func:`gaps` lists the stages where nothing can be attempted yet.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from conformance.core.steps import MUTATION_OPS, MUTATION_TARGETS, STAGES

__all__ = [
    "SURFACE_PATH",
    "Cell",
    "Gap",
    "Surface",
    "cells",
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

    @property
    def id(self) -> str:
        return f"{self.stage}/{self.object}/{self.write}"

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
    """Every cell and gap of a table, checked against the step language it relies on."""
    document = json.loads(path.read_text(encoding="utf-8"))
    objects: Mapping[str, Any] = document["objects"]
    out: list[Cell] = []
    found: list[Gap] = []
    for stage, entry in document["stages"].items():
        if not entry["handed"]:
            found.append(Gap(stage, entry["callable"], entry["gap"]))
            continue
        if entry["scriptable"] and stage not in STAGES:
            raise ValueError(f"{path}: {stage!r} is not a stage of the step language")
        for name in entry["handed"]:
            out.extend(_cells(path, stage, entry, name, objects[name]))
    return Surface(document["probeArguments"], tuple(out), tuple(found))


def _cells(
    path: Path, stage: str, entry: Mapping[str, Any], name: str, obj: Mapping[str, Any]
) -> Iterable[Cell]:
    if obj["target"] not in MUTATION_TARGETS:
        raise ValueError(f"{path}: {name}: unknown mutate target {obj['target']!r}")
    rules = obj["threatens"].get(stage, obj["threatens"]["default"])
    for write, how in obj["writes"].items():
        op = _STEP_OP.get(write, write)
        if op not in MUTATION_OPS:
            raise ValueError(f"{path}: {name}: unknown write {write!r}")
        step: dict[str, Any] = {"target": obj["target"], "path": list(how["path"])}
        if op != "assign":
            step["op"] = op
        if "value" in how:
            step["value"] = how["value"]
        yield Cell(
            stage=stage,
            object=name,
            write=write,
            step=step,
            rules=tuple(rules),
            capabilities=frozenset(entry["capabilities"]),
            keeper=obj.get("keeper"),
            keep=tuple(obj.get("keep", ())),
        )


@cache
def _default() -> Surface:
    return load_surface()


def cells(capabilities: Iterable[str] | None = None) -> list[Cell]:
    """The cells an adapter with these capabilities can attempt (None: every cell)."""
    everything = _default().cells
    if capabilities is None:
        return list(everything)
    allowed = frozenset(capabilities)
    return [cell for cell in everything if cell.capabilities <= allowed]


def gaps() -> list[Gap]:
    """The stages and callbacks where no write can be attempted yet, with the reason."""
    return list(_default().gaps)


_ASK: Final = {"return": {"kind": "ask", "reason": "probe"}}


def probe_scenario(cell: Cell, call_id: str = "c0") -> dict[str, Any] | None:
    """A scenario attempting one cell, observed in every later stage and a later call.

    One tool ``probe`` called twice (``call_id``, then ``call_id + "-later"``) with the
    table's probe arguments by agent ``main``; every scripted stage observes the
    arguments and the execution (and the result where it has one); the cell's stage
    attempts its write, after its keeper stage kept the value it needs. None for a cell
    whose stage needs a code-mode program (its scenario is the strategies' business).
    """
    if "code-mode" in cell.capabilities:
        return None
    mutate = [{"mutate": dict(cell.step)}]

    def at(stage: str, *, result: bool = False) -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = [{"observe": "arguments"}, {"observe": "execution"}]
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
        f"{cell.object}; every later stage, observer and a later call observe.",
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
    return out
