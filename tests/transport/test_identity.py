"""The kit's results against the reference are the same in process, over stdio and over HTTP.

Same rules, same statuses, same number of checks (the profile is
derandomized): a transport may add failures of its own, never change what the
implementation is judged to do.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

# Imported up front, not lazily by load_adapter between two runs: hypothesis draws constants
# from the modules loaded, so a module imported between runs would change the generated
# scenarios (and the number of checks) -- an artefact of the test, not of the transport.
import conformance.transport.http
import conformance.transport.stdio  # noqa: F401
from conformance.adapters import load_adapter
from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.rule_sets import SMOKE
from conformance.judging.rules import RULES
from conformance.running.outcomes import RunResult
from conformance.running.runner import run_suite
from conformance.seam.adapter import Adapter
from conformance.transport.server import make_app, make_protocol_server

# A rule or two per group, the optional capabilities among them.
SUBSET = "smoke"


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    server = make_protocol_server(make_app(ReferenceAdapter()))
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server.url
    server.shutdown()
    server.server_close()


def outcomes(result: RunResult) -> dict[str, tuple[str, int]]:
    return {o.id: (o.status, o.checks) for o in result.rules}


def run(adapter: Adapter, rules: str | None) -> RunResult:
    try:
        return run_suite(adapter, profile="quick", rules=rules)
    finally:
        close: Any = getattr(adapter, "close", None)
        if callable(close):
            close()


@pytest.mark.long(10)
def test_three_transports_agree_on_a_subset(http_url: str) -> None:
    in_process = run(ReferenceAdapter(), SUBSET)
    stdio = run(load_adapter(f"stdio:{sys.executable} -m conformance.harness"), SUBSET)
    http = run(load_adapter(http_url, validate_protocol=True), SUBSET)
    expected = outcomes(in_process)
    assert set(expected) == set(SMOKE)
    assert outcomes(stdio) == expected
    assert outcomes(http) == expected
    for result in (stdio, http):
        assert result.transport is not None and result.transport["failures"] == {}
        assert result.transport["starts"] == 1


@pytest.mark.long(14)
def test_every_rule_over_http_as_in_process(http_url: str) -> None:
    """The whole quick profile over HTTP; in process it is tests/kit/test_reference_passes."""
    http = run(load_adapter(http_url), None)
    in_process = {rid: "untested" if rule.check is None else "pass" for rid, rule in RULES.items()}
    assert {o.id: o.status for o in http.rules} == in_process
    assert not http.kit_errors and http.scenarios > 0
    assert http.transport is not None and http.transport["failures"] == {}
