"""The kit as a pytest plugin: one test per rule, ``pytest --pyargs conformance``.

Registered through the ``pytest11`` entry point, so it is loaded by every
pytest run in an environment where the kit is installed. It therefore only
adds options, the ``rule`` marker and fixtures, and imports nothing heavy
until a test asks for the adapter: the project's own test runs are unaffected.

    pytest --pyargs conformance --toolreg-adapter=python:mypkg.adapter:make -k PRE-3
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conformance.seam.adapter import Adapter

__all__ = ["RuleRun", "toolreg_adapter", "toolreg_profile", "toolreg_report_dir", "toolreg_rule"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolreg", "toolreg-conformance")
    group.addoption(
        "--toolreg-adapter",
        default="reference",
        help="adapter to check: reference | python:MODULE:FACTORY | 'stdio:COMMAND ARGS...' "
        "| http://HOST:PORT (default: reference)",
    )
    group.addoption(
        "--toolreg-validate-protocol",
        action="store_true",
        default=False,
        help="validate every harness message against the protocol schema (stdio/HTTP)",
    )
    group.addoption(
        "--toolreg-deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="per-answer deadline of a stdio/HTTP harness (default: 5)",
    )
    group.addoption(
        "--toolreg-profile",
        default="ci",
        choices=("quick", "ci", "thorough"),
        help="hypothesis profile of each rule's property (default: ci)",
    )
    group.addoption(
        "--toolreg-report",
        default=None,
        metavar="DIR",
        help="where counterexamples are saved (default: a temporary directory)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rule(id): the conformance rule (SPEC.md ID, e.g. 'PRE-3') a test checks"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Make ``-k PRE_3`` select the rule PRE-3's test as ``-k PRE-3`` does."""
    for item in items:
        for marker in item.iter_markers("rule"):
            if marker.args:
                rule_id = str(marker.args[0])
                item.extra_keyword_matches.update({rule_id, rule_id.replace("-", "_")})


@pytest.fixture(scope="session")
def toolreg_adapter(pytestconfig: pytest.Config) -> Iterator[Adapter]:
    """The adapter named by ``--toolreg-adapter``, loaded once per session (per xdist worker)."""
    from conformance.adapters import load_adapter
    from conformance.seam.adapter import AdapterError

    spec = str(pytestconfig.getoption("--toolreg-adapter", default="reference"))
    try:
        adapter = load_adapter(
            spec,
            validate_protocol=bool(pytestconfig.getoption("--toolreg-validate-protocol")),
            deadline_s=pytestconfig.getoption("--toolreg-deadline"),
        )
        adapter.describe()
    except AdapterError as e:
        pytest.fail(f"--toolreg-adapter: {e}", pytrace=False)
    except Exception as e:
        pytest.fail(f"--toolreg-adapter {spec!r} failed to start: {e}", pytrace=False)
    yield adapter
    close = getattr(adapter, "close", None)
    if callable(close):
        close()


@pytest.fixture(scope="session")
def toolreg_profile(pytestconfig: pytest.Config) -> str:
    return str(pytestconfig.getoption("--toolreg-profile", default="ci"))


@pytest.fixture(scope="session")
def toolreg_report_dir(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    chosen = pytestconfig.getoption("--toolreg-report", default=None)
    if chosen:
        path = Path(str(chosen))
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("toolreg")


class RuleRun:
    """Run one rule with the session's adapter and turn its outcome into pass / fail / skip."""

    def __init__(self, adapter: Adapter, profile: str, report_dir: Path) -> None:
        self.adapter = adapter
        self.profile = profile
        self.report_dir = report_dir

    def __call__(self, rule_id: str) -> None:
        from conformance.running.runner import run_suite
        from conformance.vocab import NOT_RUN, Status

        result = run_suite(
            self.adapter, profile=self.profile, rules=rule_id, report_dir=self.report_dir
        )
        outcome = next(o for o in result.rules if o.id == rule_id)
        if not result.conformant:
            lines = [f"{rule_id} ({outcome.title}): {outcome.status}"]
            for kind, bucket in outcome.buckets():
                for failure in bucket:
                    lines.append(f"  {kind} on {failure.scenario_id}: {failure.message}")
                    case = result.case_file(failure)
                    if case is not None:
                        lines.append(f"    counterexample: {case}")
                        lines.append(
                            f"    replay: toolreg-conformance replay {case} --adapter ADAPTER"
                        )
            if outcome.status == Status.NOT_EXERCISED:
                lines.append(f"  {outcome.reason}")
            lines += [f"  kit error: {e}" for e in result.kit_errors]
            pytest.fail("\n".join(lines), pytrace=False)
        if outcome.status in NOT_RUN:
            pytest.skip(f"{rule_id} {outcome.status}: {outcome.reason}")


@pytest.fixture
def toolreg_rule(
    toolreg_adapter: Adapter, toolreg_profile: str, toolreg_report_dir: Path
) -> Iterator[RuleRun]:
    """A callable checking one rule ID against the session's adapter."""
    yield RuleRun(toolreg_adapter, toolreg_profile, toolreg_report_dir)
