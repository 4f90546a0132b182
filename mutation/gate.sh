#!/bin/sh
# The mutation gate (a design: NOT wired into .ci/run; the lead decides).
#
# A seeded sample of 30 mutants of reference/ -- the worked example reference/example.py
# excluded: nothing of the kit runs it -- killed by the kit's quick profile; fails (exit 1)
# when the kill rate falls below the rate recorded in benchmarks/mutation.md.
# The sample is drawn from HEAD: a change to reference/ draws other mutants, so the
# recorded rate keeps a margin of one mutant. Extra arguments go to measure.py
# (e.g. --rev, --work). Cost: see benchmarks/mutation.md ("A CI gate").
set -eu
cd "$(dirname "$0")/.."
RATE="${MUTATION_GATE_RATE:-0.80}"
exec nice -n 19 python mutation/measure.py --sample 30 --min-per-file 1 --seed 11 \
    --exclude reference/example.py --gate "$RATE" \
    --work "${TMPDIR:-/tmp}/toolreg-mutation-gate" "$@"
