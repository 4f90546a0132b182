"""``python -m conformance``: the same as the ``toolreg-conformance`` command."""

from .cli import main

raise SystemExit(main())
