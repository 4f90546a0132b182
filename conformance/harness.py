"""``python -m conformance.harness``: serve an in-process adapter over stdio.

The harness lives in :mod:`conformance.transport.harness`; this module keeps the
documented command working.
"""

from conformance.transport.harness import main

if __name__ == "__main__":
    raise SystemExit(main())
