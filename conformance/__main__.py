"""``python -m conformance``: the same as the ``toolreg-conformance`` command."""

from conformance.cli.main import main

raise SystemExit(main())
