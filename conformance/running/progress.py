"""How far a run is: the counts told after every finished unit (the live progress line)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conformance.running.plan import Unit

__all__ = [
    "Tick",
    "Ticks",
]


@dataclass(frozen=True)
class Tick:
    """How far a run is: told once as it starts (nothing done) and after every finished unit.

    A rule is done once every unit holding one of its sources has finished (a
    rule no unit holds, e.g. one without a predicate, is done from the start).
    """

    units_done: int
    units_total: int
    rules_done: int
    rules_total: int
    scenarios: int  # run so far
    elapsed_s: float
    unit: str | None = None  # the label of the unit that just finished (None: the run starts)


class Ticks:
    """Counts a run's finished units and tells ``tick`` a :class:`Tick` each time."""

    def __init__(
        self,
        units: Sequence[Unit],
        rule_ids: Sequence[str],
        tick: Callable[[Tick], None] | None,
        started: float | None = None,
    ) -> None:
        self.units = list(units)
        self.tick = tick
        self.started = time.monotonic() if started is None else started
        selected = set(rule_ids)
        self.rules_total = len(selected)
        self.waiting: Counter[str] = Counter()  # rule -> its units not finished yet
        for unit in self.units:
            self.waiting.update(unit.targets & selected)
        self.rules_done = self.rules_total - len(self.waiting)
        self.units_done = 0
        self.scenarios = 0

    def start(self) -> None:
        """Tell the opening tick: nothing done yet."""
        self._tell(None)

    def done(self, index: int, scenarios: int) -> None:
        """Unit ``index`` has finished; ``scenarios`` ran so far in the whole run."""
        unit = self.units[index]
        self.units_done += 1
        self.scenarios = scenarios
        for rid in unit.targets:
            if rid in self.waiting:
                self.waiting[rid] -= 1
                if not self.waiting[rid]:
                    del self.waiting[rid]
                    self.rules_done += 1
        self._tell(unit.label)

    def _tell(self, label: str | None) -> None:
        if self.tick is None:
            return
        elapsed = time.monotonic() - self.started
        self.tick(
            Tick(
                self.units_done,
                len(self.units),
                self.rules_done,
                self.rules_total,
                self.scenarios,
                elapsed,
                label,
            )
        )
