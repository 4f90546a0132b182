"""Every process the kit starts ends with it: the subreaper, the harness tag, the sweep.

Rules of this file:

* **The kit is a child subreaper** (Linux ``PR_SET_CHILD_SUBREAPER``, :func:`become_subreaper`,
  called once per kit process: the CLI, each ``-j`` worker, ``serve``). A harness's
  descendant that double-forks or leaves its session (``setsid``) and then loses its
  parent is re-parented to the kit, not to init, so the kit can still end it and reap it.
* **Every harness carries a tag.** :func:`tagged` adds ``TOOLREG_HARNESS=<unique id>`` to
  the environment a harness is started with; its descendants inherit it. Ending a harness
  (:func:`end_tagged`) ends every process that carries its tag, wherever it went, and
  reaps those that were re-parented to the kit. A descendant that clears its environment
  is still ended by the process-group kill the transport sends first, unless it also left
  the group; that one case is out of reach without a cgroup.
* **On a hard exit, everything goes.** :func:`end_descendants` SIGKILLs every descendant of
  the kit (by the process tree in ``/proc``) and every process carrying one of the tags
  this process handed out. The interrupt watchdog calls it before ``os._exit``.

Off Linux (no ``/proc``, no ``prctl``) each function does what it can and never raises.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

__all__ = [
    "TAG_VARIABLE",
    "become_subreaper",
    "descendants",
    "end_descendants",
    "end_tagged",
    "is_subreaper",
    "tagged",
    "with_tag",
]

#: The environment variable every harness (and so each of its descendants) carries.
TAG_VARIABLE: Final = "TOOLREG_HARNESS"

_PR_SET_CHILD_SUBREAPER: Final = 36
_PR_GET_CHILD_SUBREAPER: Final = 37
_PROC: Final = Path("/proc")

#: The tags this process handed out (the harnesses it started), for the hard-exit sweep.
_ISSUED: set[str] = set()


def _prctl(option: int, arg: int | ctypes.c_int | ctypes._Pointer[ctypes.c_int]) -> int:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, arg, 0, 0, 0))
    except (OSError, AttributeError):
        return -1


def become_subreaper() -> bool:
    """Make this process the child subreaper of its descendants; False where impossible."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1) == 0


def is_subreaper() -> bool:
    """Is this process a child subreaper (Linux only)?"""
    flag = ctypes.c_int(0)
    return _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.pointer(flag)) == 0 and flag.value == 1


def tagged(env: Mapping[str, str] | None) -> tuple[dict[str, str], str]:
    """``env`` (None: this process's environment) with a fresh harness tag, and the tag."""
    tag = f"{os.getpid()}-{uuid.uuid4().hex}"
    _ISSUED.add(tag)
    return {**(os.environ if env is None else env), TAG_VARIABLE: tag}, tag


def _processes() -> Iterator[tuple[int, int]]:
    """(pid, parent pid) of every process this one can see."""
    with contextlib.suppress(OSError):
        for entry in _PROC.iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                # the command name is in parentheses and may hold spaces: split after it
                yield int(entry.name), int(stat[stat.rindex(")") + 2 :].split()[1])


def descendants(pid: int | None = None) -> list[int]:
    """Every live descendant of ``pid`` (default: this process), by the process tree."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    for child, parent in _processes():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    stack = list(children.get(root, []))
    while stack:
        child = stack.pop()
        out.append(child)
        stack.extend(children.get(child, []))
    return out


def with_tag(tags: set[str]) -> list[int]:
    """Every process (but this one) whose environment carries one of ``tags``."""
    if not tags:
        return []
    wanted = {f"{TAG_VARIABLE}={tag}".encode() for tag in tags}
    out = []
    for pid, _ in _processes():
        if pid == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if wanted & set((_PROC / str(pid) / "environ").read_bytes().split(b"\0")):
                out.append(pid)
    return out


def _kill_and_reap(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:  # those re-parented to this process (the subreaper) are its to reap
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)


def end_tagged(tag: str) -> None:
    """End every process carrying harness tag ``tag`` (SIGKILL) and reap the kit's own."""
    _kill_and_reap(with_tag({tag}))
    _ISSUED.discard(tag)


def end_descendants() -> None:
    """SIGKILL every descendant of this process and every process with a tag it issued."""
    pids = set(descendants()) | set(with_tag(_ISSUED))
    pids.discard(os.getpid())
    _kill_and_reap(sorted(pids))
