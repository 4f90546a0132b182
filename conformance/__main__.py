"""``python -m conformance``: the same as the ``toolreg-conformance`` command."""

from conformance.cli.main import command

raise SystemExit(command())
