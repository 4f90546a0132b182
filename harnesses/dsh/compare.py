"""Run the same scenarios through two stdio harnesses and diff their traces.

    /work/venv/bin/python harnesses/dsh/compare.py                 # every fixture
    /work/venv/bin/python harnesses/dsh/compare.py PRE-6 CODE-     # fixture ids containing these
    /work/venv/bin/python harnesses/dsh/compare.py --show PRE-6    # print the full diffs

By default the left harness is the bundled reference (``python -m
conformance.harness``) and the right one is this directory's dsh-tools harness.
A difference is either a harness bug (fix it) or a genuine difference in
behaviour between the reference and dsh-tools (note it); this script only
shows where the two traces part.
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
REFERENCE = [sys.executable, "-m", "conformance.harness"]
DSH = ["node", str(HERE / "harness.mjs")]


class Harness:
    def __init__(self, command: Sequence[str]) -> None:
        self.proc = subprocess.Popen(
            list(command),
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        self.seq = 0
        started = self.ask(
            {"type": "start", "protocol": 1, "kit": {"name": "compare", "version": "0"}}
        )
        assert started["type"] == "started", started

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.proc.args!r} closed its output")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def run(self, scenario: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        return self.ask({"type": "run", "seq": self.seq, "scenario": scenario})

    def close(self) -> None:
        try:
            self.ask({"type": "stop"})
        finally:
            self.proc.wait(timeout=10)


def scenarios(filters: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    paths = sorted((ROOT / "fixtures" / "rules").glob("*/*.json"))
    paths += sorted((ROOT / "fixtures" / "examples").glob("*.json"))
    paths += sorted((ROOT / "fixtures" / "regressions").glob("*.json"))
    for path in paths:
        scenario = json.loads(path.read_text(encoding="utf-8"))
        ident = scenario.get("id", path.stem)
        if not filters or any(f in ident for f in filters):
            yield ident, scenario


def loosen(value: Any) -> Any:
    """Hide what the spec leaves to the implementation: failure wording, error class names."""
    if isinstance(value, list):
        return [loosen(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: loosen(v) for k, v in value.items()}
    if value.get("isError") is True and isinstance(value.get("error"), dict):
        out["error"] = dict(out["error"], message="<message>")
        if isinstance(out["error"].get("info"), dict):
            out["error"]["info"] = dict(out["error"]["info"], name="<name>")
        out["content"] = [
            dict(b, text="Error: <message>")
            if b.get("type") == "text" and str(b.get("text", "")).startswith("Error: ")
            else b
            for b in out.get("content", [])
        ]
    if value.get("ok") is False and "error" in value:
        out["error"] = "<error>"
    if "raised" in value and isinstance(value["raised"], str):
        out["raised"] = value["raised"].split(":")[0]
    return out


def lines(answer: dict[str, Any], loose: bool = False) -> list[str]:
    """One line per comparable fact of an answer (actions, registrations, events, log)."""
    if loose:
        answer = loosen(answer)
    if answer.get("type") != "trace":
        return [json.dumps(answer, sort_keys=True)]
    trace = answer["trace"]
    out = [f"registration {json.dumps(r, sort_keys=True)}" for r in trace["registrations"]]
    out += [f"action[{i}] {json.dumps(a, sort_keys=True)}" for i, a in enumerate(trace["actions"])]
    out += [f"event {json.dumps(e, sort_keys=True)}" for e in trace["events"]]
    out += [f"log {json.dumps(e, sort_keys=True)}" for e in trace.get("log", [])]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("filters", nargs="*", help="substrings of scenario ids")
    parser.add_argument("--show", action="store_true", help="print the diff of each difference")
    parser.add_argument(
        "--loose", action="store_true", help="ignore failure wording and error class names"
    )
    parser.add_argument("--left", default=None, help="left harness command (default: reference)")
    parser.add_argument("--right", default=None, help="right harness command (default: dsh)")
    args = parser.parse_args(argv)
    left = Harness(args.left.split() if args.left else REFERENCE)
    right = Harness(args.right.split() if args.right else DSH)
    same = differ = 0
    try:
        for ident, scenario in scenarios(args.filters):
            a = lines(left.run(scenario), args.loose)
            b = lines(right.run(scenario), args.loose)
            if a == b:
                same += 1
                continue
            differ += 1
            changed = sum(1 for x in difflib.ndiff(a, b) if x[:1] in "+-")
            print(f"DIFF {ident} ({changed} lines)")
            if args.show:
                for line in difflib.unified_diff(a, b, "reference", "dsh", lineterm="", n=1):
                    print("   ", line[:400])
    finally:
        left.close()
        right.close()
    print(f"{same} identical, {differ} different")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
