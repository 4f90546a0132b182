"""Each deletion operator turns its examples into exactly the code it promises."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cosmic_ray.mutating import mutate_code  # type: ignore[import-untyped]
from cosmic_ray.operators.operator import Example, Operator  # type: ignore[import-untyped]

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from toolreg_mutation_operators import OPERATORS, OperatorProvider

CASES = [(op, ex) for op in OPERATORS.values() for ex in op.examples()]


@pytest.mark.parametrize(("operator", "example"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_example(operator: type[Operator], example: Example) -> None:
    mutated = mutate_code(example.pre_mutation_code, operator(), example.occurrence)
    assert mutated == example.post_mutation_code


@pytest.mark.parametrize(
    ("operator", "code"),
    [
        (OPERATORS["DeleteStatement"], 'def f():\n    "doc"\n    pass\n    ...\n    return 1\n'),
        (OPERATORS["DeleteStatement"], "import a\nfrom b import c\nglobal d\n"),
        (OPERATORS["DeleteReturn"], "def f():\n    x = 1\n    yield x\n"),
        (OPERATORS["DeleteAwait"], "async def f():\n    async with a:\n        g()\n"),
    ],
)
def test_leaves_alone(operator: type[Operator], code: str) -> None:
    assert mutate_code(code, operator(), 0) is None


def test_provider_names_every_operator() -> None:
    provider = OperatorProvider()
    assert sorted(provider) == ["DeleteAwait", "DeleteReturn", "DeleteStatement"]
    assert all(provider[name] is OPERATORS[name] for name in provider)
