#!/bin/sh
# The mutation gate (CI: .ci/run, step "the mutation gate").
#
# A seeded sample of about 100 cosmic-ray mutants of reference/ (seed 26, core operators
# and the toolreg deletion operators; the worked example reference/example.py excluded:
# nothing of the kit runs it), each killed by the kit's quick run replayed from one corpus
# with --fail-fast. It fails (exit 1) when the NON-EQUIVALENT kill rate -- killed / (run -
# survivors triaged equivalent in mutation/triage.json) -- falls below the file's floor
# (the rate recorded in benchmarks/mutation.md less a margin of two mutants), and lists
# every survivor that file does not triage as equivalent or defensive. The sample is drawn
# from the commit measured: a change to reference/ may draw other mutants; a new survivor
# is then either a blind spot to close or a mutant to triage (benchmarks/mutation.md and
# mutation/triage.json). Extra arguments go to measure.py (e.g. --rev, --work).
#
# Time: two cosmic-ray HTTP workers (one a core); a mutant's timeout is twice the baseline
# (the unmutated kit's full quick run, on as many processes as workers; a surviving mutant's
# replay, on one, takes about as long), at least 20 s (which governs on this machine: the
# baseline is about 5 s), so a hang is cut early and a loaded machine stretches both alike. See
# benchmarks/mutation.md ("The mutation gate in CI") for the wall time measured here.
set -eu
cd "$(dirname "$0")/.."
exec nice -n 19 python mutation/measure.py --sample 100 --min-per-file 3 --seed 26 \
    --exclude reference/example.py --triage mutation/triage.json \
    --workers "${MUTATION_GATE_WORKERS:-2}" --timeout-factor 2 --min-timeout 20 \
    --work "${TMPDIR:-/tmp}/toolreg-mutation-gate" "$@"
