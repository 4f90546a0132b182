"""Progress of ``run`` and ``publish``: the completion counts (``Tick``) and how they are shown.

A terminal gets one live status line (rules, units, scenarios, elapsed, ETA and the
current unit), ended with a newline however the run ends; anything else (CI logs,
pipes) gets nothing unless ``--progress`` asks for plain lines; ``-q`` silences all.
"""

from __future__ import annotations

import io
import json
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from conformance.adapters import load_adapter
from conformance.adapters.reference import ReferenceAdapter
from conformance.cli.common import RunProgress, status_text
from conformance.cli.main import main
from conformance.reporting.publish import publish
from conformance.running.progress import Tick
from conformance.running.runner import run_suite
from tests.kit.support import quiet

ROOT = Path(__file__).resolve().parents[2]
PRE3 = ["--profile", "quick", "--rules", "PRE-3", "-j", "1"]


class FakeTTY(io.StringIO):
    """A terminal, as far as the printer can tell."""

    def isatty(self) -> bool:
        return True


def _tick(done: int, total: int = 140, *, unit: str | None = "property PRE-3") -> Tick:
    return Tick(done, total, 12, 57, 812, 14.0, unit)


# ------------------------------------------------------------------- the counts


def test_a_sequential_run_ticks_once_at_the_start_and_after_every_unit() -> None:
    ticks: list[Tick] = []
    with quiet():
        result = run_suite(ReferenceAdapter(), profile="quick", rules="PRE-3", tick=ticks.append)
    first, last = ticks[0], ticks[-1]
    assert (first.units_done, first.scenarios, first.unit) == (0, 0, None)
    assert last.units_done == last.units_total == len(ticks) - 1 > 1
    assert last.rules_done == last.rules_total == 1
    assert last.scenarios == result.scenarios > 0
    assert last.unit == "property PRE-3"
    assert [t.units_done for t in ticks] == list(range(len(ticks)))
    assert all(a.scenarios <= b.scenarios for a, b in pairwise(ticks))
    assert all(a.elapsed_s <= b.elapsed_s for a, b in pairwise(ticks))
    # PRE-3 is done only once its property (the last unit) has finished
    assert all(t.rules_done == 0 for t in ticks[:-1])


def test_publish_hands_the_counts_to_its_tick(tmp_path: Path) -> None:
    """How ``publish`` feeds the live line: it passes ``tick`` on to the run."""
    seen: list[Tick] = []
    labels: list[str] = []
    with quiet():
        publish(
            ReferenceAdapter(),
            tmp_path / "published",
            profile="quick",
            rules="PRE-3",
            progress=labels.append,
            tick=seen.append,
        )
    assert seen[-1].units_done == seen[-1].units_total == len(labels)


def test_a_parallel_run_ticks_as_units_finish() -> None:
    ticks: list[Tick] = []
    with quiet():
        result = run_suite(
            ReferenceAdapter(),
            profile="quick",
            rules="PRE-3",
            jobs=2,
            adapter_spec="reference",
            load=load_adapter,
            tick=ticks.append,
        )
    assert result.jobs == 2
    last = ticks[-1]
    assert last.units_done == last.units_total == len(ticks) - 1
    assert last.rules_done == last.rules_total == 1
    assert last.scenarios == result.scenarios > 0


# ------------------------------------------------------------------ the printer


def test_the_status_text_has_the_counts_and_an_eta_once_a_unit_finished() -> None:
    assert status_text(_tick(30)) == (
        "rules 12/57 · units 30/140 · 812 scenarios · 0:14 elapsed · ETA ~0:51"
    )  # 14 s / 30 units * 110 left
    assert "ETA" not in status_text(_tick(0, unit=None))
    assert "1:01:40 elapsed" in status_text(Tick(1, 2, 0, 1, 3, 3700.0))


def _feed(printer: RunProgress) -> None:
    """A run of two units as run_suite tells it, between two notes of the command."""
    with printer:
        printer.note("reference 0.1.0 (python), profile quick")
        printer.tick(_tick(0, 2, unit=None))
        printer("fixture fixtures/examples/a.json")
        printer.tick(_tick(1, 2, unit="fixture fixtures/examples/a.json"))
        printer("property PRE-3")
        printer.tick(_tick(2, 2, unit="property PRE-3"))
    printer.note("35 scenarios in 0.5 s")


def test_nothing_is_printed_off_a_terminal_unless_asked() -> None:
    err = io.StringIO()
    _feed(RunProgress(err))
    assert err.getvalue() == ""


def test_progress_asks_for_one_plain_line_per_finished_unit() -> None:
    err = io.StringIO()
    _feed(RunProgress(err, lines=True))
    lines = err.getvalue().splitlines()
    assert "\r" not in err.getvalue()
    assert lines[0] == "  .. reference 0.1.0 (python), profile quick"
    assert lines[-1] == "  .. 35 scenarios in 0.5 s"
    units = lines[1:-1]
    assert len(units) == 2
    assert "units 1/2" in units[0] and units[0].endswith("fixture fixtures/examples/a.json")
    assert "units 2/2" in units[1] and "ETA ~0:00" in units[1]
    assert units[1].endswith("property PRE-3")


def test_a_terminal_gets_one_live_line_ended_with_a_newline() -> None:
    err = FakeTTY()
    _feed(RunProgress(err, width=90))
    text = err.getvalue()
    assert text.startswith("  .. reference 0.1.0 (python), profile quick\n")
    assert text.endswith("\n  .. 35 scenarios in 0.5 s\n")
    live = text.split("\n")[1]  # every redraw of the status line, on one line
    redraws = live.split("\r\x1b[K")[1:]
    assert len(redraws) == 5 and "ETA ~" in redraws[-1] and "units 2/2" in redraws[-1]
    assert max(len(r) for r in redraws) == 89  # cut to the width: never wraps
    assert redraws[0] == status_text(_tick(0, 2, unit=None))


def test_a_note_mid_run_goes_above_the_live_line() -> None:
    err = FakeTTY()
    printer = RunProgress(err, width=200)
    printer("property PRE-3")
    printer.note("something to say")
    printer.close()
    assert err.getvalue() == (
        "\r\x1b[Kproperty PRE-3\r\x1b[K  .. something to say\n\r\x1b[Kproperty PRE-3\n"
    )


@pytest.mark.parametrize("stream", [io.StringIO, FakeTTY])
def test_quiet_silences_everything(stream: type[io.StringIO]) -> None:
    err = stream()
    _feed(RunProgress(err, quiet=True, lines=True))
    assert err.getvalue() == ""


# ---------------------------------------------------------------- the commands


def test_run_is_quiet_in_a_log_and_prints_lines_with_progress(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", *PRE3]) == 0
    assert "  .. " not in capsys.readouterr().err
    assert main(["run", *PRE3, "--progress"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    last = [line for line in err.splitlines() if "units " in line][-1]
    assert "rules 1/1" in last and "ETA ~" in last and last.endswith("property PRE-3")


def test_run_on_a_terminal_keeps_a_live_line_and_q_silences_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    err = FakeTTY()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["run", *PRE3]) == 0
    text = err.getvalue()
    assert "\r\x1b[K" in text and "ETA ~" in text and "property PRE-3" in text
    assert text.endswith(" s\n")  # the live line ended, then the summary

    quiet_err = FakeTTY()
    monkeypatch.setattr(sys, "stderr", quiet_err)
    assert main(["run", *PRE3, "-q"]) == 0
    assert "\r" not in quiet_err.getvalue() and "  .. " not in quiet_err.getvalue()


def test_an_interrupted_run_ends_the_live_line_and_says_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adapter of tests/kit/interrupting.py sends SIGINT at its 3rd scenario."""
    err = FakeTTY()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.chdir(ROOT)
    report = tmp_path / "out"
    adapter = "python:tests.kit.interrupting:make_swallowing"
    argv = ["run", "-j", "1", "--profile", "quick", "--adapter", adapter, "--report", str(report)]
    assert main(argv) == 130
    text = err.getvalue()
    live_end = text.rindex("\r\x1b[K")
    assert "units 2/" in text[live_end:]  # the last redraw: two units done, the third cut short
    assert text.index("\n", live_end) < text.index("interrupted:")  # ended before the rest
    document = json.loads((report / "report.json").read_text(encoding="utf-8"))
    assert document["incomplete"] is True and document["notRun"]
