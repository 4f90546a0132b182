"""``toolreg-conformance serve`` and ``fuzz-protocol``: the HTTP binding on the command line.

    toolreg-conformance serve --adapter reference --port 0          # prints the bound URL
    toolreg-conformance fuzz-protocol --adapter http://127.0.0.1:8765 --report out/
    toolreg-conformance fuzz-protocol --app reference               # in process, no socket

Kept apart from ``cli.py`` so the transport's commands stay in one place;
``cli.py`` registers them and maps their errors to exit codes.
"""

from __future__ import annotations

import argparse
import json
import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from conformance.cli.common import UsageError, close_adapter, load, progress_printer
from conformance.seam.adapter import Adapter, AdapterError

__all__ = ["COMMANDS", "add_commands", "main", "protocol_only_markdown", "write_protocol_report"]

COMMANDS = ("serve", "fuzz-protocol")
DEFAULT_PORT = 8765


def add_commands(sub: Any, transport_options: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register ``serve`` and ``fuzz-protocol`` on the main parser's subparsers."""
    serve = sub.add_parser("serve", help="expose an adapter over HTTP (the harness protocol)")
    serve.add_argument(
        "--adapter",
        default="reference",
        help="reference | python:MODULE:FACTORY | 'stdio:COMMAND ARGS...' (default: reference)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1 (loopback)")
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"default: {DEFAULT_PORT}; 0: any free port"
    )
    serve.add_argument(
        "--allow-public",
        action="store_true",
        help="allow binding a non-loopback address (anyone who reaches it can run scenarios)",
    )
    serve.add_argument(
        "--log",
        action="store_true",
        help="log every request, and the implementation's warnings, on stderr",
    )
    transport_options(serve)

    fuzz = sub.add_parser(
        "fuzz-protocol",
        help="the protocol-robustness tier: schemathesis against the HTTP binding",
    )
    target = fuzz.add_mutually_exclusive_group(required=True)
    target.add_argument("--adapter", help="the service to fuzz: http://HOST:PORT")
    target.add_argument(
        "--app",
        metavar="ADAPTER",
        help="fuzz the in-process HTTP application of this adapter (reference, python:..., "
        "stdio:...), no socket",
    )
    fuzz.add_argument(
        "--max-examples",
        type=int,
        default=25,
        metavar="N",
        help="generated requests per operation and mode (default: 25)",
    )
    fuzz.add_argument(
        "--seed", type=int, help="random generation with this seed (default: derandomized)"
    )
    fuzz.add_argument(
        "--deadline",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="per-request deadline (default: 20)",
    )
    fuzz.add_argument(
        "--report",
        metavar="DIR",
        help="merge a 'protocolConformance' section into DIR/report.json and DIR/report.md "
        "(written fresh when there is no report.json)",
    )
    fuzz.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.command == "serve":
        return _serve(args, out, err)
    return _fuzz(args, out, err)


def _usage(message: str) -> Exception:
    return UsageError(message)


# ---------------------------------------------------------------------- serve


def _served_adapter(spec: str, args: argparse.Namespace) -> Adapter:
    return load(args, spec)


def _serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from conformance.processes import become_subreaper
    from conformance.running.interrupt import interruptible
    from conformance.transport.server import check_bind, make_app, make_protocol_server

    become_subreaper()

    try:
        check_bind(args.host, allow_public=args.allow_public)
    except ValueError as e:
        raise _usage(str(e)) from None
    if not 0 <= args.port <= 65535:
        raise _usage(f"--port {args.port} is not a port number")
    if not logging.getLogger().handlers:  # the implementation's logs: only with --log
        logging.basicConfig(stream=err, level=logging.WARNING if args.log else logging.CRITICAL + 1)
    adapter = _served_adapter(args.adapter, args)
    try:
        try:
            server = make_protocol_server(
                make_app(adapter),
                args.host,
                args.port,
                allow_public=args.allow_public,
                quiet=not args.log,
            )
        except OSError as e:
            raise _usage(f"cannot bind {args.host}:{args.port}: {e.strerror or e}") from None
        info = adapter.describe()
        print(server.url, file=out, flush=True)  # the one stdout line: scripts read the URL
        print(
            f"serving {info.name} {info.version} ({info.language}) at {server.url} "
            "(GET /health, POST /start /run /stop); Ctrl-C to stop",
            file=err,
            flush=True,
        )
        # SIGTERM ends serve like Ctrl-C; a request stuck in the implementation cannot keep
        # it: past the grace the watchdog ends the process (conformance.running.interrupt)
        with interruptible():
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                pass
            finally:
                server.server_close()
    finally:
        close_adapter(adapter)
    return 0


# -------------------------------------------------------------- fuzz-protocol


def _fuzz(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from conformance.transport.fuzz import FuzzUnavailable, fuzz_protocol, summary_lines
    from conformance.transport.server import make_app

    if args.max_examples < 1:
        raise _usage("--max-examples must be at least 1")

    progress = progress_printer(args.quiet, err)
    if not logging.getLogger().handlers:
        logging.getLogger().addHandler(logging.NullHandler())  # the implementation's log noise
    implementation: dict[str, Any] | None = None
    adapter: Adapter | None = None
    try:
        if args.adapter is not None:
            url = str(args.adapter)
            if not url.startswith(("http://", "https://")):
                raise _usage(f"--adapter must be an http:// URL, got {url!r} (or use --app)")
            implementation = _describe_service(url, args.deadline)
            options: dict[str, Any] = {"url": url.rstrip("/"), "target": url.rstrip("/")}
        else:
            adapter = _served_adapter(args.app, args)
            implementation = adapter.describe().to_json()
            options = {"app": make_app(adapter), "target": f"in-process app of {args.app}"}
        try:
            section = fuzz_protocol(
                **options,
                max_examples=args.max_examples,
                seed=args.seed,
                deadline_s=args.deadline,
                progress=progress,
            )
        except FuzzUnavailable as e:
            raise _usage(str(e)) from None
    finally:
        if adapter is not None:
            close_adapter(adapter)
    if implementation is not None:
        section["implementation"] = implementation
    for line in summary_lines(section):
        print(line, file=out)
    if args.report:
        for path in write_protocol_report(section, Path(args.report)):
            print(f"report: {path}", file=err)
    return 0 if section["passed"] else 1


def _describe_service(url: str, deadline_s: float) -> dict[str, Any] | None:
    """The service's ``started`` answer, for the report; AdapterError if it is unreachable."""
    from conformance.transport.http import HttpAdapter

    service = HttpAdapter(url, deadline_s=deadline_s, start_deadline_s=deadline_s)
    try:
        socket.create_connection((service.host, service.port), timeout=deadline_s).close()
    except OSError as e:
        raise AdapterError(f"cannot reach {url}: {e.strerror or e}; is the service running?") from e
    try:
        return service.describe().to_json()
    except AdapterError:
        return None  # a broken handshake is the fuzzer's to report, not a reason to stop
    finally:
        service.close()


def write_protocol_report(section: dict[str, Any], directory: Path) -> list[Path]:
    """Merge ``section`` into DIR/report.json and DIR/report.md, or write them fresh."""
    from conformance.reporting.report import report_markdown, result_from_json
    from conformance.scenario.schema import load_json, validate

    directory.mkdir(parents=True, exist_ok=True)
    json_path, md_path = directory / "report.json", directory / "report.md"
    if json_path.exists():
        document = load_json(json_path, "report")
        document["protocolConformance"] = section
    else:
        from conformance._version import __version__

        document = {
            "kit": {"name": "toolreg-conformance", "version": __version__},
            "protocolConformance": section,
        }
    validate(document, "report", str(json_path))
    json_path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    if "rules" in document:
        markdown = report_markdown(result_from_json(document), document.get("expectFile"))
    else:
        markdown = protocol_only_markdown(section)
    md_path.write_text(markdown, encoding="utf-8")
    return [json_path, md_path]


def protocol_only_markdown(section: dict[str, Any]) -> str:
    """report.md of a fuzz-protocol run with no kit run beside it."""
    from conformance.transport.fuzz import protocol_markdown

    title = f"# Protocol conformance report: {section['target']}"
    return "\n".join([title, "", *protocol_markdown(section)])
