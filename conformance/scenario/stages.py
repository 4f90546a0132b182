"""The stage table, as data: ``fixtures/schema/stages.json`` (format ``stages.schema.json``).

One row per stage a tool call passes (and per callback a scenario can reach): its
capability, where a scenario scripts it, the objects it is handed (each write of each
one an attack-surface cell, :mod:`conformance.scenario.surface`), its trim rule (the
onlooking scripts an implementation without it may drop, ``seam.adapter.trim``) and
the rules that are about it (:func:`stages_of`). Everything else reads the table: a new
stage capability is one row plus its interpreter hook.

:func:`rows` is read at call time, never copied into a constant, so that a test can put
a fake row in (see ``tests/kit/test_stage_table.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from conformance.scenario.schema import load_json

__all__ = [
    "STAGE_TABLE_PATH",
    "StageRow",
    "capabilities",
    "load_stage_table",
    "pipeline_capabilities",
    "rows",
    "stages_of",
]

STAGE_TABLE_PATH: Final = (
    Path(__file__).resolve().parents[1] / "fixtures" / "schema" / "stages.json"
)


@dataclass(frozen=True)
class StageRow:
    """One row of the stage table (stages.json's description says what each field means)."""

    stage: str
    capability: str | None
    description: str
    also: tuple[str, ...]
    pipeline: bool
    callable: str
    scriptable: bool
    #: (``scenario`` or ``tool``, key) where a scenario scripts this stage; None: nowhere.
    scripted: tuple[str, str] | None
    #: The objects its callable is handed; None: the attack surface does not model it.
    handed: tuple[str, ...] | None
    gap: str | None
    #: Whether scripts that only look on may be dropped, the step that ends them (None:
    #: nothing ends them) and the ``expect`` keys that counted them.
    trimmed: bool
    ending: Mapping[str, Any] | None
    expect: tuple[str, ...]
    rules: tuple[str, ...]

    @property
    def needs(self) -> frozenset[str]:
        """The capabilities a scenario reaching this stage needs."""
        own = () if self.capability is None else (self.capability,)
        return frozenset((*own, *self.also))

    def about(self, rule_id: str) -> bool:
        """Is ``rule_id`` (by its ID or its group) one of the rules about this stage?"""
        return rule_id in self.rules or rule_id.split("-")[0] in self.rules


def load_stage_table(path: Path = STAGE_TABLE_PATH) -> tuple[StageRow, ...]:
    """The rows of a stage table, validated (FixtureError names the file and JSON path)."""
    document = load_json(path, "stages")
    out = []
    for row in document["stages"]:
        trim = row.get("trim")
        scripted = row.get("scripted")
        out.append(
            StageRow(
                stage=row["stage"],
                capability=row["capability"],
                description=row.get("description", ""),
                also=tuple(row.get("with", ())),
                pipeline=row["pipeline"],
                callable=row["callable"],
                scriptable=row["scriptable"],
                scripted=None if scripted is None else (scripted["at"], scripted["key"]),
                handed=None if "handed" not in row else tuple(row["handed"]),
                gap=row.get("gap"),
                trimmed=trim is not None,
                ending=None if trim is None else trim["ending"],
                expect=() if trim is None else tuple(trim.get("expect", ())),
                rules=tuple(row["rules"]),
            )
        )
    names = [r.stage for r in out]
    if len(names) != len(set(names)):
        raise ValueError(f"{path}: a stage is listed twice: {names}")
    return tuple(out)


@cache
def rows() -> tuple[StageRow, ...]:
    """The rows of the kit's stage table (loaded once)."""
    return load_stage_table()


def capabilities() -> frozenset[str]:
    """The capabilities that are stages (an implementation has the stage or not)."""
    return frozenset(r.capability for r in rows() if r.capability is not None)


def pipeline_capabilities() -> frozenset[str]:
    """The capabilities of the five-stage pipeline itself (every registry of the spec)."""
    return frozenset(r.capability for r in rows() if r.pipeline and r.capability is not None)


def stages_of(rule_id: str) -> frozenset[str]:
    """The stage capabilities rule ``rule_id`` is about: an adapter without one of them is
    never judged on it (not-applicable, with its reason), however many of its premises a
    stage-less scenario happens to meet."""
    return frozenset(r.capability for r in rows() if r.capability is not None and r.about(rule_id))
