"""Deletion operators for cosmic-ray: a statement, a ``return``, an ``await``.

cosmic-ray 8 replaces operators, constants, keywords and loop iterables, but never
deletes anything, so a guard that nobody checks (a ``raise`` no rule needs, an
early ``return`` that skips a stage, an ``await`` that yields control at the one
point where ordering matters) survives unnoticed. These three operators fill
that gap; cosmic-ray finds them through the ``cosmic_ray.operator_providers``
entry point as ``toolreg/DeleteStatement``, ``toolreg/DeleteReturn`` and
``toolreg/DeleteAwait``.

- ``DeleteStatement`` replaces one simple statement (an assignment, a call, a
  ``raise``, ``del`` or ``assert``) by ``pass``. Docstrings, ``pass``,
  ``...``, imports, ``global``/``nonlocal``, ``break``/``continue`` (cosmic-ray's
  own keyword operators) and ``return`` (``DeleteReturn``) are left alone: deleting
  an import or a docstring says nothing about the checks of a test suite.
- ``DeleteReturn`` replaces a ``return`` (with or without a value) by ``pass``: an
  early return falls through, a final one returns ``None``.
- ``DeleteAwait`` removes the ``await`` keyword from an expression: the coroutine
  is created and never run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from cosmic_ray.operators.operator import (  # type: ignore[import-untyped]
    Example,
    Operator,
)
from parso.python.tree import Keyword
from parso.tree import BaseNode, NodeOrLeaf

Position = tuple[tuple[int, int], tuple[int, int]]

# statements inside a ``simple_stmt`` that DeleteStatement leaves alone
_KEPT_TYPES = frozenset(
    {
        "newline",
        "operator",  # ';' and '...'
        "keyword",  # pass, break, continue, bare return
        "string",  # docstrings and bare string statements
        "strings",
        "fstring",
        "return_stmt",
        "import_name",
        "import_from",
        "global_stmt",
        "nonlocal_stmt",
    }
)


def _pass_like(node: NodeOrLeaf) -> Keyword:
    """A ``pass`` that takes ``node``'s place, with its indentation and comments."""
    first = node.get_first_leaf()  # type: ignore[no-untyped-call]
    return Keyword("pass", node.start_pos, prefix=first.prefix)


def _is_statement(node: NodeOrLeaf) -> bool:
    return node.parent is not None and node.parent.type == "simple_stmt"


class _ToPass(Operator):  # type: ignore[misc]
    """Replace each statement ``deletes`` accepts by ``pass``."""

    @staticmethod
    def deletes(node: NodeOrLeaf) -> bool:
        raise NotImplementedError

    def mutation_positions(self, node: NodeOrLeaf) -> Iterator[Position]:
        if _is_statement(node) and self.deletes(node):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node: NodeOrLeaf, index: int) -> NodeOrLeaf:
        assert index == 0
        return _pass_like(node)


class DeleteStatement(_ToPass):
    """Replace one simple statement by ``pass``."""

    @staticmethod
    def deletes(node: NodeOrLeaf) -> bool:
        return node.type not in _KEPT_TYPES

    @classmethod
    def examples(cls) -> Sequence[Example]:
        return (
            Example("def f():\n    x = 1\n    g(x)\n", "def f():\n    pass\n    g(x)\n"),
            Example("def f():\n    x = 1\n    g(x)\n", "def f():\n    x = 1\n    pass\n", 1),
            Example("if a:\n    raise E\n", "if a:\n    pass\n"),
            Example("a = 1; del b\n", "a = 1; pass\n", 1),
            Example('def f():\n    "doc"\n    x += 1\n', 'def f():\n    "doc"\n    pass\n'),
            Example("import a\nreturn_value = a\n", "import a\npass\n"),
        )


class DeleteReturn(_ToPass):
    """Replace a ``return`` statement by ``pass``."""

    @staticmethod
    def deletes(node: NodeOrLeaf) -> bool:
        bare = isinstance(node, Keyword) and node.value == "return"
        return node.type == "return_stmt" or bare

    @classmethod
    def examples(cls) -> Sequence[Example]:
        return (
            Example(
                "def f():\n    if a: return 1\n    return 2\n",
                "def f():\n    if a: pass\n    return 2\n",
            ),
            Example("def f():\n    return\n", "def f():\n    pass\n"),
            Example("def f():\n    x = 1\n    return x\n", "def f():\n    x = 1\n    pass\n"),
        )


class DeleteAwait(Operator):  # type: ignore[misc]
    """Remove the ``await`` keyword from an awaited expression."""

    def mutation_positions(self, node: NodeOrLeaf) -> Iterator[Position]:
        if _awaits(node):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node: NodeOrLeaf, index: int) -> NodeOrLeaf:
        assert index == 0 and isinstance(node, BaseNode) and _awaits(node)
        keyword, first, *rest = node.children
        first.get_first_leaf().prefix = keyword.prefix
        node.children = [first, *rest]
        return node

    @classmethod
    def examples(cls) -> Sequence[Example]:
        return (
            Example("async def f():\n    await g()\n", "async def f():\n    g()\n"),
            Example("async def f():\n    x = await g(1)\n", "async def f():\n    x = g(1)\n"),
            Example(
                "async def f():\n    return (await a) + await b\n",
                "async def f():\n    return (await a) + b\n",
                1,
            ),
        )


def _awaits(node: NodeOrLeaf) -> bool:
    if not isinstance(node, BaseNode) or node.type != "atom_expr":
        return False
    first = node.children[0]
    return isinstance(first, Keyword) and first.value == "await"


OPERATORS: dict[str, type[Operator]] = {
    op.__name__: op for op in (DeleteStatement, DeleteReturn, DeleteAwait)
}


class OperatorProvider:
    """The ``toolreg`` provider of the ``cosmic_ray.operator_providers`` entry point."""

    def __iter__(self) -> Iterator[str]:
        return iter(OPERATORS)

    def __getitem__(self, name: str) -> type[Operator]:
        return OPERATORS[name]
