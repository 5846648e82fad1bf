"""Execution backends and OS resource limits (shell spec §8.10).

* :class:`DirectBackend` (``direct-unsafe``): the target argv as is.
* :class:`ExternalBackend` (its id, or ``external:PATH``): a declared wrapper
  followed by its expanded argv template; confining unless
  ``confinement="none"``, and eligible for ``required`` only when
  ``declared`` and the runtime sets ``accept_declared_confinement``;
* :class:`BubblewrapBackend` (``linux-bubblewrap``): ``bwrap`` with every
  namespace unshared (network shared only when the runtime grants it), the
  system folders and read roots bound read-only, write roots read-write, a
  private ``/tmp``; the ``bwrap`` executable is fingerprinted at
  instantiation and re-verified before each spawn like the target.

:func:`select_backend` applies the sandbox mode: ``required`` takes the first
available confining backend and never falls back to direct; ``preferred``
falls back to direct; ``direct_unsafe`` takes a direct one.
:func:`resource_limits` maps ``cpu_time``/``memory``/``file_size``/``open_files``
to ``setrlimit`` values applied in the child before ``exec``.
"""

from __future__ import annotations

import math
import os
import resource
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runtime.shell.errors import InstantiationError, ShellError
from runtime.shell.resolve import Executable, fingerprint

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc")
SEATBELT_HINT = ("seatbelt (macOS sandbox-exec) is not implemented; declare a <bubblewrap> "
                 "backend (Linux) or an <external_backend> wrapper that confines")
BWRAP_HINT = ("install the bubblewrap package (Debian/Ubuntu: apt-get install bubblewrap; "
              "Fedora: dnf install bubblewrap), or declare a runtime that allows direct "
              "execution (sandbox=\"preferred\" with a <direct/> backend)")


@dataclass(frozen=True)
class Confinement:
    """What a confining backend needs to know of a command."""

    cwd: str
    read_roots: tuple[str, ...]
    write_roots: tuple[str, ...]
    network: bool
    limits: tuple[tuple[str, int], ...] = ()
    """The OS resource limits that are set, as ``(--flag, value)`` for wrapper templates."""


class Backend:
    name = "backend"
    confining = False
    direct = False
    wrapper: Executable | None = None

    def eligible(self, accept_declared: bool) -> bool:
        """Whether the backend may serve ``sandbox="required"``."""
        return self.confining

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> tuple[str, ...]:
        raise NotImplementedError


class DirectBackend(Backend):
    name = "direct-unsafe"
    direct = True

    def __init__(self, backend_id: str | None) -> None:
        self.id = backend_id

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> tuple[str, ...]:
        return tuple(argv)


class BubblewrapBackend(Backend):
    name = "linux-bubblewrap"
    confining = True

    def __init__(self, backend_id: str | None, wrapper: Executable, options: Mapping[str, Any]
                 ) -> None:
        self.id = backend_id
        self.wrapper = wrapper
        self.options = options

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> tuple[str, ...]:
        assert self.wrapper is not None
        args = [self.wrapper.canonical, "--die-with-parent", "--new-session", "--unshare-all"]
        if confinement.network:
            args.append("--share-net")
        binds = _root_binds(confinement)
        # a root of "/" goes first: later mounts (proc, dev, tmp, deeper roots) stay visible
        args += [part for bind in binds if bind[1] == "/" for part in bind]
        if self.options.get("proc", True):
            args += ["--proc", "/proc"]
        args += ["--dev", "/dev"]
        if self.options.get("private_tmp", True):
            args += ["--tmpfs", "/tmp"]
        whole = any(bind[1] == "/" for bind in binds)
        for folder in () if whole else SYSTEM_DIRS:
            if os.path.islink(folder):
                args += ["--symlink", os.readlink(folder), folder]
            elif os.path.isdir(folder):
                args += ["--ro-bind", folder, folder]
        args += [part for bind in binds if bind[1] != "/" for part in bind]
        args += ["--chdir", confinement.cwd, "--", *argv]
        return tuple(args)


def _root_binds(confinement: Confinement) -> list[tuple[str, str, str]]:
    """``(--ro-bind|--bind, root, root)`` for the existing roots, outermost first."""
    binds = [("--ro-bind", root, root) for root in confinement.read_roots
             if root not in confinement.write_roots]
    binds += [("--bind", root, root) for root in confinement.write_roots]
    return sorted((b for b in binds if os.path.exists(b[1])), key=lambda b: b[1].count("/")
                  if b[1] != "/" else 0)


class ExternalBackend(Backend):
    """A declared wrapper (``<external_backend>``): its canonical path, then the template.

    Atoms never interpolate strings: each becomes whole argv elements."""

    def __init__(self, record: Mapping[str, Any], wrapper: Executable) -> None:
        self.id = record.get("id")
        self.name = str(self.id or f"external:{wrapper.canonical}")
        self.wrapper = wrapper
        self.confinement = str(record.get("confinement") or "none")
        self.confining = self.confinement != "none"
        self.direct = not self.confining
        self.template = list(record.get("template") or ())

    def eligible(self, accept_declared: bool) -> bool:
        return self.confinement == "verified" or (self.confinement == "declared"
                                                  and accept_declared)

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> tuple[str, ...]:
        assert self.wrapper is not None
        args = [self.wrapper.canonical]
        for atom in self.template:
            kind, value = atom.get("kind"), atom.get("value")
            if kind == "arg":
                args.append(str(value))
            elif kind == "cwd_value":
                args.append(confinement.cwd)
            elif kind == "target_executable":
                args.append(argv[0])
            elif kind == "command_argv":
                args += list(argv)
            elif kind in ("read_roots", "write_roots"):
                roots = confinement.read_roots if kind == "read_roots" else \
                    confinement.write_roots
                for root in roots:
                    args += [str(value), root]
            elif kind == "network_flag" and confinement.network:
                args.append(str(value))
            elif kind == "resource_limit_args":
                for flag, amount in confinement.limits:
                    args += [flag, str(amount)]
        return tuple(args)


def _external(record: Mapping[str, Any], resolve_path: Any) -> ExternalBackend:
    path = resolve_path(record["executable"])
    try:
        wrapper = Executable(path, path, False, fingerprint(path, path))
    except ShellError as error:
        raise InstantiationError("shell.external_backend_unavailable", error.message) from None
    pinned = record.get("sha256")
    if pinned and str(pinned).lower() != wrapper.sha256:
        raise InstantiationError("shell.external_backend_digest_mismatch",
                                 f"external backend {path} does not match its pinned sha256")
    return ExternalBackend(record, wrapper)


def instantiate_backends(section: Mapping[str, Any], platform: str,
                         resolve_path: Any) -> list[Backend]:
    """The platform-matching declared backends that are available on this host."""
    available: list[Backend] = []
    for record in section.get("backends") or ():
        if record.get("when") not in ("any", platform):
            continue
        kind = record.get("kind")
        if kind == "direct":
            available.append(DirectBackend(record.get("id")))
        elif kind == "bubblewrap":
            declared = record.get("executable")
            path = resolve_path(declared) if declared else shutil.which("bwrap")
            if not path:
                continue
            try:
                wrapper = Executable("bwrap", path, True, fingerprint(path, "bwrap"))
            except ShellError:
                continue
            available.append(BubblewrapBackend(record.get("id"), wrapper,
                                               dict(record.get("options") or ())))
        elif kind == "external_backend":
            available.append(_external(record, resolve_path))
    return available


def unsupported_backends(section: Mapping[str, Any], platform: str) -> list[str]:
    """Platform-matching declared backends this implementation never runs (seatbelt)."""
    return [str(record.get("id") or record.get("kind"))
            for record in section.get("backends") or ()
            if record.get("kind") == "seatbelt" and record.get("when") in ("any", platform)]


def check_available(backends: Sequence[Backend], sandbox: str, accept_declared: bool,
                    runtime_id: str, unsupported: Sequence[str] = ()) -> None:
    """Instantiation-time check: some backend can serve the sandbox mode.

    ``unsupported`` names declared backends that are never available here (seatbelt):
    they are reported, never replaced by a direct backend."""
    try:
        select_backend(backends, sandbox, accept_declared)
    except ShellError as error:
        code = "sandbox_unavailable" if sandbox == "required" else "shell.backend_unavailable"
        message = f"runtime {runtime_id}: {error.message}"
        hint = BWRAP_HINT
        if unsupported:
            message += (f"; the seatbelt backend(s) {', '.join(unsupported)} are not "
                        "executed by this implementation")
            hint = SEATBELT_HINT
        raise InstantiationError(code, message, hint) from None


def select_backend(backends: Sequence[Backend], sandbox: str,
                   accept_declared: bool = False) -> Backend:
    confining = [b for b in backends if b.eligible(accept_declared)]
    direct = [b for b in backends if b.direct]
    if sandbox == "required":
        if confining:
            return confining[0]
        raise ShellError("sandbox_unavailable",
                         "sandbox=\"required\" but no confining backend (bwrap) is available")
    if sandbox == "preferred":
        if confining or direct:
            return (confining or direct)[0]
        raise ShellError("sandbox_unavailable", "no backend is available")
    if direct:
        return direct[0]
    raise ShellError("sandbox_unavailable", "sandbox=\"direct_unsafe\" but no direct backend "
                     "is available")


def limit_arguments(limits: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """``--cpu N --memory N --file-size N --open-files N`` pairs for the limits that are set."""
    flags = (("cpu_time", "--cpu"), ("memory", "--memory"), ("file_size", "--file-size"),
             ("open_files", "--open-files"))
    return tuple((flag, math.ceil(float(limits[name])) if name == "cpu_time"
                  else int(limits[name]))
                 for name, flag in flags if limits.get(name) is not None)


def resource_limits(limits: Mapping[str, Any]) -> tuple[tuple[int, int], ...]:
    """``setrlimit`` pairs for the OS resource limits that are set."""
    pairs: list[tuple[int, int]] = []
    if limits.get("cpu_time") is not None:
        pairs.append((resource.RLIMIT_CPU, max(1, math.ceil(float(limits["cpu_time"])))))
    if limits.get("memory") is not None:
        pairs.append((resource.RLIMIT_AS, int(limits["memory"])))
    if limits.get("file_size") is not None:
        pairs.append((resource.RLIMIT_FSIZE, int(limits["file_size"])))
    if limits.get("open_files") is not None:
        pairs.append((resource.RLIMIT_NOFILE, int(limits["open_files"])))
    return tuple(pairs)
