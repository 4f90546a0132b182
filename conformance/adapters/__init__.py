"""Adapters: how the kit reaches an implementation.

This package holds the in-process Python adapters (``reference``: the bundled
reference registry and its catalogue of known-bad variants). Out-of-process
implementations are reached through :mod:`conformance.transport` (``stdio:`` a
harness process in any language, ``http://`` a served harness); their harnesses
live in the repository's top-level ``harnesses/`` folder.

:func:`load_adapter` turns an ``--adapter`` spec into an adapter.
"""

from __future__ import annotations

import importlib
import shlex
from typing import Any

from conformance.seam.adapter import Adapter, AdapterError

__all__ = ["load_adapter"]


def load_adapter(
    spec: str, *, validate_protocol: bool = False, deadline_s: float | None = None
) -> Adapter:
    """``reference`` | ``python:module:factory`` | ``stdio:COMMAND...`` | ``http://...``.

    ``validate_protocol`` and ``deadline_s`` apply to the out-of-process transports.
    """
    if spec == "reference":
        from conformance.adapters.reference import ReferenceAdapter

        return ReferenceAdapter()
    if spec.startswith("python:"):
        try:
            _, module_name, factory_name = spec.split(":", 2)
        except ValueError:
            raise AdapterError(f"{spec!r}: expected python:MODULE:FACTORY") from None
        try:
            factory = getattr(importlib.import_module(module_name), factory_name)
        except Exception as e:  # ImportError, AttributeError, or the module itself raising
            raise AdapterError(f"cannot load adapter {spec!r}: {type(e).__name__}: {e}") from e
        try:
            adapter = factory()
        except Exception as e:
            raise AdapterError(f"adapter factory {spec!r} raised {type(e).__name__}: {e}") from e
        if not isinstance(adapter, Adapter):
            raise AdapterError(f"{spec!r} did not return an Adapter (describe() and run())")
        return adapter
    options: dict[str, Any] = {"validate_protocol": validate_protocol}
    if deadline_s is not None:
        options["deadline_s"] = deadline_s
    if spec.startswith("stdio:"):
        from conformance.transport.stdio import StdioAdapter

        command = shlex.split(spec[len("stdio:") :])
        if not command:
            raise AdapterError("stdio: needs a command, e.g. stdio:python -m conformance.harness")
        return StdioAdapter(command, **options)
    if spec.startswith(("http://", "https://")):
        from conformance.transport.http import HttpAdapter

        return HttpAdapter(spec, **options)
    raise AdapterError(
        f"unknown adapter {spec!r}; expected reference, python:module:factory, stdio:..., http://..."
    )
