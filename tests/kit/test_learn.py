"""docs/learn.md runs as written: every command in it, and its output holds the excerpt.

The document's convention: each ```sh block holds one command, run from the checkout's
root; the fenced ```text block right after it is an excerpt of what it prints -- chunks
separated by lines ``...``, each chunk a run of whole lines that must appear in the
output in that order. ``toolreg-conformance`` and ``python`` run from this interpreter
(the kit of this checkout). Every link of the document must reach a file.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEARN = ROOT / "docs" / "learn.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)


@dataclass(frozen=True)
class Step:
    command: str
    excerpt: str
    line: int  # where the command is, for the message


def steps(text: str) -> list[Step]:
    """Each ```sh command with the ```text excerpt that follows it (ValueError: a command
    without one, or a block holding more than one command)."""
    blocks = [
        (m.group(1), m.group(2), text.count("\n", 0, m.start()) + 2) for m in FENCE.finditer(text)
    ]
    out = []
    for i, (kind, body, line) in enumerate(blocks):
        if kind != "sh":
            continue
        commands = [c for c in body.splitlines() if c.strip()]
        if len(commands) != 1:
            raise ValueError(f"learn.md:{line}: a sh block holds one command, not {commands}")
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        if after is None or after[0] != "text":
            raise ValueError(f"learn.md:{line}: {commands[0]!r} has no ```text excerpt after it")
        out.append(Step(commands[0], after[1], line))
    return out


def argv(command: str) -> list[str]:
    words = shlex.split(command)
    if words[0] == "toolreg-conformance":
        return [sys.executable, "-m", "conformance", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise ValueError(f"{command!r}: learn.md runs toolreg-conformance and python only")


def missing(excerpt: str, output: str) -> list[str]:
    """The chunks of ``excerpt`` that ``output`` does not hold, in order (empty: all)."""
    lines = [line.rstrip() for line in output.splitlines()]
    chunks: list[list[str]] = [[]]
    for line in excerpt.splitlines():
        if line.strip() == "...":
            chunks.append([])
        else:
            chunks[-1].append(line.rstrip())
    at, out = 0, []
    for chunk in (c for c in chunks if c):
        found = next(
            (
                i
                for i in range(at, len(lines) - len(chunk) + 1)
                if lines[i : i + len(chunk)] == chunk
            ),
            None,
        )
        if found is None:
            out.append("\n".join(chunk))
        else:
            at = found + len(chunk)
    return out


def run(step: Step) -> list[str]:
    done = subprocess.run(
        argv(step.command), cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0:
        return [f"exit {done.returncode}: {done.stderr.strip()[-2000:]}"]
    return missing(step.excerpt, done.stdout)


STEPS = steps(LEARN.read_text(encoding="utf-8"))


@pytest.mark.parametrize("step", STEPS, ids=[s.command for s in STEPS])
def test_every_command_of_learn_md_prints_its_excerpt(step: Step) -> None:
    problems = run(step)
    assert not problems, (
        f"docs/learn.md:{step.line}: `{step.command}` no longer prints:\n\n"
        + "\n---\n".join(problems)
        + "\n\n(update the excerpt from the command's output)"
    )


def test_learn_md_walks_the_seed_order_and_runs_an_explain_per_stop() -> None:
    text = LEARN.read_text(encoding="utf-8")
    stops = re.findall(r"^## (\d+)\. (.+)$", text, re.M)
    titles = [t for _, t in stops]
    assert titles[0].startswith("The worked example, steps 8 to 10")
    assert [t.split(":")[0] for t in titles[1:4]] == ["Step 8", "Step 9", "Step 10"]
    assert titles[4:] == [
        "The five stages",
        "Fail-closed approval",
        "Concurrency",
        "Cancellation",
        "Code Mode",
    ]
    assert STEPS[0].command == "python -m reference.example"
    explained = [s.command for s in STEPS[1:]]
    assert len(explained) == len(stops) - 1
    assert all(c.startswith("toolreg-conformance explain ") for c in explained)
    sections = re.split(r"^## ", text, flags=re.M)[2:]  # each stop after the example
    for section, command in zip(sections, explained, strict=False):
        rule = command.split()[-1]
        assert f"(spec/{rule}.html)" in section, f"the stop running {command} links its page"


def test_every_link_of_learn_md_reaches_a_file() -> None:
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", LEARN.read_text(encoding="utf-8")):
        assert (LEARN.parent / target).exists(), target


def test_the_checker_fails_on_a_stale_excerpt_a_failing_command_and_a_bare_command() -> None:
    output = "a\nb\nc\nd\n"
    assert missing("a\nb\n...\nd\n", output) == []
    assert missing("b\na\n", output) == ["b\na"]  # the lines in another order
    assert missing("c\n...\na\n", output) == ["a"]  # the chunks in another order
    assert missing("a\nx\n", output) == ["a\nx"]
    failing = Step("toolreg-conformance explain NOPE-1", "NOPE-1\n", 1)
    assert run(failing)[0].startswith("exit 2: error: explain: 'NOPE-1' is not a rule ID")
    with pytest.raises(ValueError, match="no ```text excerpt"):
        steps("```sh\ntoolreg-conformance explain PRE-3\n```\n\nprose\n")
    with pytest.raises(ValueError, match="holds one command"):
        steps("```sh\npython a.py\npython b.py\n```\n```text\nx\n```\n")
    with pytest.raises(ValueError, match="runs toolreg-conformance and python only"):
        argv("rm -rf /")
