"""cosmic-ray's test command: the kit's quick run against the (mutated) reference.

Run from the root of a scratch copy of the repository (the driver, measure.py,
makes one: cosmic-ray mutates files in place, never in the shared tree). It runs

    python -m conformance run --profile quick -q -j 1 --report <tmp>

or, when the driver wrote a corpus (``$TOOLREG_MUTATION_CORPUS``), the same run replayed
from it with ``--fail-fast`` (``run --corpus FILE --fail-fast``),

with that copy first on ``PYTHONPATH`` and a fresh kit cache, prints the kit's
output (stdout and stderr: cosmic-ray keeps only stdout, so an import error of a
mutant would otherwise be invisible) and ends with one line

    verdict: survived
    verdict: killed-by-rules PRE-3=fail,FIN-2=error
    verdict: killed-by-error <the kit's first error line>

and the kit's exit code: 0 (conformant) means the mutant survived, anything else
kills it. A mutant that makes the kit hang is ended by cosmic-ray's timeout
(the whole process group) and recorded with the output ``timeout``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

QUIET = {"pass", "untested", "skipped", "not-applicable", "not-exercised"}
#: The corpus the driver wrote from the unmutated reference (see measure.py): when set, the
#: kit replays it with --fail-fast instead of drawing anew (a killed mutant costs the time
#: to its first failure); unset, the kit's quick profile runs in full.
CORPUS_VARIABLE = "TOOLREG_MUTATION_CORPUS"
TAIL_LINES = 40  # of the kit's output, kept in the session


def verdict(code: int, output: str, report: Path) -> str:
    """The one-line verdict of a run of the kit that ended with ``code``."""
    if code == 0:
        return "survived"
    failing: list[str] = []
    if report.is_file():
        document = json.loads(report.read_text(encoding="utf-8"))
        failing = [
            f"{r['id']}={r['status']}" for r in document["rules"] if r["status"] not in QUIET
        ]
        if document.get("kitErrors"):
            failing.append("kit-error")
    if failing:
        return "killed-by-rules " + ",".join(failing)
    lines = [line for line in output.splitlines() if line.strip()]
    first = next((line for line in lines if "rror" in line), lines[-1] if lines else "")
    return f"killed-by-error exit {code}: {first.strip()[:300]}"


def main() -> int:
    root = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="toolreg-kill-") as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
            "TOOLREG_CONFORMANCE_CACHE": str(Path(tmp) / "cache"),
            # the copy's bytecode was compiled by the driver, checked by hash (measure.py's
            # make_tree); bytecode written here would be checked by time and size only, and a
            # restored file could be taken for the mutant compiled in the same second
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        command = [sys.executable, "-m", "conformance", "run", "--profile", "quick"]
        corpus = os.environ.get(CORPUS_VARIABLE)
        if corpus:  # the driver's frozen corpus: replayed, stopping at the first failure
            command = [sys.executable, "-m", "conformance", "run", "--corpus", corpus]
            command += ["--fail-fast"]
        command += ["-q", "-j", "1", "--report", str(Path(tmp) / "report")]
        done = subprocess.run(
            command,
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )
        print("\n".join(done.stdout.splitlines()[-TAIL_LINES:]))
        print("verdict:", verdict(done.returncode, done.stdout, Path(tmp) / "report/report.json"))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
