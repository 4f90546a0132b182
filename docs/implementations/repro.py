"""Run every published finding's standalone reproduction; fail when one no longer reproduces.

    python docs/implementations/repro.py                 # every published directory here
    python docs/implementations/repro.py DIR... [--timeout SECONDS]

A published directory (one holding a ``report.json``, as ``toolreg-conformance publish``
writes it) proves each of its findings -- every rule whose status there is ``fail``,
``expected-fail`` or ``difference`` -- *without the kit*: ``DIR/repro/<RULE>.py`` or
``DIR/repro/<RULE>.mjs`` uses only the implementation's public API (20-60 lines) and
exits 0 if and only if the behaviour the finding describes is still there.

This script runs each one and fails (exit 1), naming the finding, when a reproduction

* exits non-zero (the behaviour is gone, or the script broke),
* does not exit within ``--timeout`` seconds (default 60),
* imports the kit (``conformance``, ``reference``, ``tests``; ``@toolreg/*`` or a file
  outside its own directory and its harness, for a ``.mjs``),

and when a published finding has no reproduction -- for now only in a directory that
holds a ``contract.json`` (the implementation's contract): the others predate the
convention and get a note listing what is missing (the lead makes the check strict for
every directory once each has a contract). A reproduction of no published finding is a
note.

How a reproduction runs:

* ``.py``: with this Python (CI's venv, where the pinned ``[frameworks]`` extra is
  installed), from an empty temporary directory, without ``PYTHONPATH``.
* ``.mjs``: with ``node``. ``DIR/repro/HARNESS`` names, in one line, the npm harness
  whose pinned packages it imports, as a directory relative to the repository root
  (``harnesses/vercel-ai``, ``harnesses/dsh``, or for an earlier dsh-tools release
  ``harnesses/dsh/versions/<release>``); its ``node_modules`` must be installed
  (``npm ci --prefix DIR``). A module resolve hook (``repro-hooks.mjs``, loaded with
  ``node --import``) resolves the reproduction's bare imports (``ai``,
  ``@deepseek-ai/dsh-tools``) from that directory, and refuses any resolution from the
  reproduction or from a harness package that lands outside the reproduction's directory
  and the harness directory (so no package of another release, and no file of the kit,
  can stand in) -- as ``harnesses/dsh/pin-upstream.mjs`` does for the dsh harness.

Exit codes: 0 every reproduction reproduces (and none is missing where required), 1 one
does not (or is missing), 2 usage errors (a named directory without report.json).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HOOKS = HERE / "repro-hooks.mjs"
#: The statuses of report.json that publish a finding.
PUBLISHED = ("fail", "expected-fail", "difference")
RULE_ID = re.compile(r"[A-Z]+-[0-9]+")
#: Imports of the kit a reproduction must not make.
_PY_KIT = re.compile(r"^\s*(?:from|import)\s+(conformance|reference|tests)\b", re.MULTILINE)
_MJS_KIT = re.compile(r"""(?:from|import)\s*\(?\s*['"](@toolreg/[^'"]*)['"]""")


@dataclass
class Outcome:
    """What checking one published directory found."""

    directory: Path
    ran: int = 0
    ok: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def published(directory: Path) -> dict[str, str]:
    """Rule ID -> status of every published finding of ``directory``'s report.json."""
    document = json.loads((directory / "report.json").read_text(encoding="utf-8"))
    return {
        str(rule["id"]): str(rule["status"])
        for rule in document.get("rules", [])
        if rule.get("status") in PUBLISHED
    }


def _tail(text: str, lines: int = 12) -> list[str]:
    return [f"    | {line}" for line in text.rstrip().splitlines()[-lines:]]


def _harness(repro_dir: Path, root: Path) -> tuple[Path | None, str | None]:
    """(the harness directory of ``repro_dir``'s .mjs reproductions, or why there is none)."""
    marker = repro_dir / "HARNESS"
    if not marker.is_file():
        return None, f"{marker} is missing: name the npm harness (e.g. harnesses/vercel-ai)"
    lines = [
        line.strip()
        for line in marker.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    if len(lines) != 1:
        return None, f"{marker} must hold one line: a directory relative to the repository root"
    harness = (root / lines[0]).resolve()
    if not (harness / "package.json").is_file():
        return None, f"{marker} names {lines[0]}, which holds no package.json"
    if not (harness / "node_modules").is_dir():
        return None, f"{lines[0]} has no node_modules: npm ci --prefix {lines[0]}"
    return harness, None


def command_of(script: Path, root: Path) -> tuple[list[str] | None, dict[str, str], str | None]:
    """(argv, environment, or why the script cannot run) for one reproduction."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    text = script.read_text(encoding="utf-8")
    if script.suffix == ".py":
        kit = _PY_KIT.search(text)
        if kit:
            return None, env, f"imports the kit ({kit.group(1)}): only the public API may be used"
        return [sys.executable, str(script.resolve())], env, None
    kit = _MJS_KIT.search(text)
    if kit:
        return None, env, f"imports the kit ({kit.group(1)}): only the public API may be used"
    harness, why = _harness(script.parent, root)
    if harness is None:
        return None, env, why
    env["TOOLREG_REPRO_HARNESS"] = str(harness)
    env["TOOLREG_REPRO_DIR"] = str(script.parent.resolve())
    # absolute: the script runs from an empty scratch directory, not from where DIR was named
    return ["node", "--import", HOOKS.as_uri(), str(script.resolve())], env, None


def run_one(script: Path, root: Path, timeout: float) -> tuple[bool, str, list[str]]:
    """(reproduces, one line, detail lines) for one reproduction."""
    argv, env, why = command_of(script, root)
    if argv is None:
        return False, f"cannot run: {why}", []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="repro-") as cwd:
        try:
            done = subprocess.run(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as e:
            said = [
                *_tail(e.stdout if isinstance(e.stdout, str) else ""),
                *_tail(e.stderr if isinstance(e.stderr, str) else ""),
            ]
            return False, f"TIMEOUT: no exit within {timeout:g} s", said
        except OSError as e:
            return False, f"cannot run {argv[0]}: {e.strerror or e}", []
    took = time.monotonic() - started
    if done.returncode != 0:
        said = [*_tail(done.stdout), *_tail(done.stderr)]
        return (
            False,
            f"exited {done.returncode} after {took:.1f} s: the finding no longer reproduces "
            "(or the script broke)",
            said,
        )
    return True, f"reproduces ({took:.1f} s)", []


Ran = tuple[bool, str, list[str]]


def scripts_of(directory: Path) -> list[Path]:
    """``directory``'s reproductions (repro/*.py and repro/*.mjs), in order."""
    repro_dir = directory / "repro"
    if not repro_dir.is_dir():
        return []
    return sorted([*repro_dir.glob("*.py"), *repro_dir.glob("*.mjs")])


def run_all(scripts: Sequence[Path], root: Path, timeout: float, jobs: int) -> dict[Path, Ran]:
    """Every script run (``jobs`` at a time: each is its own process) -> what it did."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = pool.map(lambda script: run_one(script, root, timeout), scripts)
        return dict(zip(scripts, done, strict=True))


def check(directory: Path, out: TextIO, ran: Mapping[Path, Ran]) -> Outcome:
    """Check that ``directory``'s reproductions reproduced (each script's run is in ``ran``:
    :func:`run_all` of :func:`scripts_of`), and that every finding has one."""
    outcome = Outcome(directory)
    findings = published(directory)
    strict = (directory / "contract.json").is_file()
    scripts: dict[str, list[Path]] = {}
    for script in scripts_of(directory):
        scripts.setdefault(script.stem, []).append(script)
    rule = "every finding needs a reproduction" if strict else "missing ones not enforced yet"
    print(f"== {directory} ({'contract.json' if strict else 'no contract.json'}: {rule})", file=out)
    for rule_id, found in scripts.items():
        name = f"{directory.name} {rule_id}"
        shown = ", ".join(str(s.relative_to(directory)) for s in found)
        if not RULE_ID.fullmatch(rule_id):
            outcome.failed.append(f"{name}: {shown} is not named after a rule ID (repro/RULE.py)")
            print(f"FAILED   {rule_id}  {shown}: not named after a rule ID", file=out)
            continue
        if len(found) > 1:
            outcome.failed.append(f"{name}: two reproductions ({shown}); keep one")
            print(f"FAILED   {rule_id}  two reproductions: {shown}", file=out)
            continue
        script = found[0]
        outcome.ran += 1
        reproduces, line, detail = ran[script]
        what = findings.get(rule_id)
        label = f"the published {what}" if what else "no published finding"
        if reproduces:
            outcome.ok.append(name)
            print(f"ok       {rule_id}  {shown}: {line}", file=out)
        else:
            outcome.failed.append(f"{name} ({label}): {shown} {line}")
            print(f"FAILED   {rule_id}  {shown} ({label}): {line}", file=out)
            for text in detail:
                print(text, file=out)
        if what is None:
            outcome.notes.append(
                f"{name}: {shown} reproduces no published finding ({rule_id} is not "
                "fail, expected-fail or difference in report.json)"
            )
    missing = [rid for rid in findings if rid not in scripts]
    for rule_id in missing:
        finding = f"{directory.name} {rule_id} (the published {findings[rule_id]})"
        if strict:
            outcome.failed.append(f"{finding}: no reproduction (repro/{rule_id}.py or .mjs)")
            print(
                f"MISSING  {rule_id}  the published {findings[rule_id]}: no reproduction "
                f"(repro/{rule_id}.py or repro/{rule_id}.mjs)",
                file=out,
            )
    if missing and not strict:
        outcome.notes.append(
            f"{directory}: {len(missing)} published finding(s) without a reproduction, not "
            f"enforced until the directory has a contract.json: {', '.join(missing)}"
        )
    for note in outcome.notes:
        print(f"note: {note}", file=out)
    return outcome


def discover(base: Path) -> list[Path]:
    """Every published directory under ``base`` (one holding a report.json), in order."""
    return sorted(
        path.parent
        for path in base.rglob("report.json")
        if not {"cases", "repro", "node_modules"} & set(path.relative_to(base).parts)
    )


def _shown(path: Path) -> Path:
    """``path`` relative to the current directory when it lies below it."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(
        prog="repro.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument(
        "dirs", nargs="*", metavar="DIR", help="published directories (default: every one here)"
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds per reproduction (default: 60)"
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the repository root HARNESS paths are relative to (default: this checkout)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="reproductions run at a time, each its own process (default: 1)",
    )
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    dirs = [Path(d) for d in args.dirs] or [_shown(d) for d in discover(HERE)]
    for directory in dirs:
        if not (directory / "report.json").is_file():
            print(
                f"error: {directory} holds no report.json (not a published directory)",
                file=sys.stderr,
            )
            return 2
    every = [script for directory in dirs for script in scripts_of(directory)]
    results = run_all(every, args.root, args.timeout, args.jobs)
    outcomes = [check(directory, out, results) for directory in dirs]
    failed = [f for o in outcomes for f in o.failed]
    ran = sum(o.ran for o in outcomes)
    print(file=out)
    if failed:
        print(f"{len(failed)} finding(s) not proven without the kit:", file=out)
        for failure in failed:
            print(f"  - {failure}", file=out)
        return 1
    print(f"every reproduction reproduces ({ran} run, in {len(dirs)} directories)", file=out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
