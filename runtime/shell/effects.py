"""Built-in effect analysis and the capability check (shell spec §8.5).

:func:`builtin_effects` infers the effects of one command from the lower-cased
basename of its requested program and its arguments (paths made absolute
against cwd); :func:`check_capabilities` fails with ``capability_violation``
at the first effect the runtime's capabilities do not grant. Containment
compares canonical paths (symlinks and ``..`` resolved), so a symlink
escaping a root is outside it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from runtime.shell.errors import ShellError
from runtime.shell.paths import canonical, inside

KINDS = ("read_path", "write_path", "network", "child_processes", "arbitrary_code",
         "privilege_change", "unknown")


@dataclass(frozen=True)
class Effect:
    kind: str
    path: str | None = None
    reason: str = ""

    def label(self) -> str:
        if self.kind == "read_path":
            return f"read:{self.path}"
        if self.kind == "write_path":
            return f"write:{self.path}"
        return self.kind


@dataclass(frozen=True)
class Capabilities:
    sandbox: str
    network: bool
    child_processes: bool
    arbitrary_code: bool
    privilege_change: bool
    read_roots: tuple[str, ...]
    write_roots: tuple[str, ...]


_INTERPRETERS = frozenset(["sh", "bash", "zsh", "fish", "python", "python3", "ruby", "perl", "node", "env", "xargs"])
_PRIVILEGE = frozenset(["sudo", "su", "doas", "chown", "chmod", "mount", "umount"])
_NETWORK = frozenset(["curl", "wget", "ssh", "scp", "nc", "ncat", "telnet"])
_PURE = frozenset(["pwd", "echo", "printf", "true", "false"])
_READERS = frozenset(["cat", "head", "tail", "wc"])
_WRITERS = frozenset(["rm", "rmdir", "touch", "mkdir"])
_BUILDERS = frozenset(["git", "cargo", "make", "dune", "npm", "pnpm", "opam"])


def _positional(args: Sequence[str]) -> list[str]:
    result: list[str] = []
    rest = False
    for arg in args:
        if rest:
            result.append(arg)
        elif arg == "--":
            rest = True
        elif not arg.startswith("-"):
            result.append(arg)
    return result


def _code() -> list[Effect]:
    return [Effect("arbitrary_code"), Effect("child_processes")]


def builtin_effects(argv: Sequence[str], cwd: str, raw_shell: bool = False) -> list[Effect]:
    """The built-in effects of one command (spec §8.5 table)."""
    if raw_shell:
        return [*_code(), Effect("unknown", reason="raw shell source")]
    name = os.path.basename(argv[0]).lower()
    args = list(argv[1:])

    def path(p: str) -> str:
        return os.path.normpath(os.path.join(cwd, p))

    def reads(ps: Sequence[str]) -> list[Effect]:
        return [Effect("read_path", path(p)) for p in ps]

    positional = _positional(args)
    if name in _INTERPRETERS:
        return _code()
    if name in _PRIVILEGE:
        return [Effect("privilege_change"), Effect("write_path", cwd), Effect("child_processes")]
    if name in _NETWORK:
        return [Effect("network"), Effect("write_path", cwd), Effect("unknown", reason=name)]
    if name in _PURE:
        return []
    if name in _READERS:
        return reads(positional)
    if name == "ls":
        return reads(positional) or [Effect("read_path", cwd)]
    if name == "grep":
        return reads(positional[1:])
    if name == "rg":
        if any(a == "--pre" or a.startswith("--pre=") for a in args):
            return _code()
        return reads(positional[1:]) or [Effect("read_path", cwd)]
    if name in _WRITERS:
        return [Effect("write_path", path(p)) for p in positional]
    if name in ("cp", "mv"):
        if not positional:
            return [Effect("unknown", reason=f"{name} without operands")]
        return [*reads(positional[:-1]), Effect("write_path", path(positional[-1]))]
    if name == "find":
        if any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in args):
            return [Effect("read_path", cwd), *_code()]
        if "-delete" in args:
            return [Effect("read_path", cwd), Effect("write_path", cwd)]
        return [Effect("read_path", cwd)]
    if name in _BUILDERS:
        return [Effect("read_path", cwd), Effect("write_path", cwd), *_code(),
                Effect("unknown", reason=name)]
    return [*_code(), Effect("unknown", reason=f"no built-in analysis for {name}")]


def check_capabilities(effects: Sequence[Effect], caps: Capabilities) -> None:
    """Raise ``capability_violation`` at the first effect ``caps`` do not grant."""
    readable = caps.read_roots + caps.write_roots
    for effect in effects:
        if effect.kind == "read_path":
            target = canonical(effect.path or "/")
            if not inside(target, readable):
                raise ShellError("capability_violation",
                                 f"reading {effect.path} is outside the read and write roots")
        elif effect.kind == "write_path":
            target = canonical(effect.path or "/")
            if not inside(target, caps.write_roots):
                raise ShellError("capability_violation",
                                 f"writing {effect.path} is outside the write roots")
        elif effect.kind == "unknown":
            if not caps.arbitrary_code:
                raise ShellError("capability_violation",
                                 "the command has unknown effects"
                                 + (f" ({effect.reason})" if effect.reason else "")
                                 + " and the runtime does not grant arbitrary_code")
        elif not getattr(caps, effect.kind):
            raise ShellError("capability_violation",
                             f"the command needs {effect.kind}, which the runtime does not grant")
