"""The immutable environment of a runtime (shell spec §8.8).

:func:`build_environment` starts from the inherit mode, applies the declared
operations in order, then always sanitises: loader and interpreter variables
are dropped, ``PATH`` is cleaned (absolute, unique entries, first occurrence
kept) and pagers/colours are forced off. Values of ``<pass secret="true">``
are returned for redaction.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from runtime.shell.errors import InstantiationError
from runtime.shell.paths import HostDirs, resolve_path_expr

DEFAULT_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
_UNSAFE_PREFIXES = ("DYLD_", "LD_", "PYTHON", "RUBY", "PERL", "GIT_", "BASH_", "ZDOTDIR")
_UNSAFE_NAMES = frozenset({"ENV", "BASH_ENV", "SHELLOPTS", "CDPATH", "IFS"})
_ALWAYS_DROPPED = frozenset({"BASH_ENV", "ENV", "IFS", "PYTHONHOME", "PYTHONPATH", "RUBYLIB",
                             "PERL5LIB", "NODE_OPTIONS", "GIT_EXEC_PATH", "GIT_CONFIG",
                             "GIT_CONFIG_COUNT"})
_FORCED = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "NO_COLOR": "1"}


def _start(inherit: str, host: Mapping[str, str]) -> dict[str, str]:
    if inherit in ("none", "selected"):
        return {}
    if inherit == "raw":
        return dict(host)
    return {name: value for name, value in host.items()
            if name not in _UNSAFE_NAMES and not name.startswith(_UNSAFE_PREFIXES)}


def _edit_path(env: dict[str, str], entry: str, prepend: bool) -> None:
    current = env.get("PATH", "")
    if not current:
        env["PATH"] = entry
    else:
        env["PATH"] = f"{entry}:{current}" if prepend else f"{current}:{entry}"


def _apply(env: dict[str, str], op: Mapping[str, Any], host: Mapping[str, str],
           dirs: HostDirs, source_dir: str | None, secrets: list[str]) -> None:
    kind = op.get("type")
    name = str(op.get("name") or "")
    if kind == "set":
        value = str(op.get("value") or "")
        if "\0" in value:
            raise InstantiationError("shell.environment_nul", f"the value of {name} contains NUL")
        env[name] = value
    elif kind == "pass":
        if name in host:
            env[name] = host[name]
            if op.get("secret"):
                secrets.append(host[name])
        elif op.get("required"):
            raise InstantiationError("shell.environment_missing",
                                     f"required environment variable {name} is not set")
    elif kind == "unset":
        env.pop(name, None)
    elif kind == "unset_prefix":
        prefix = str(op.get("value") or "")
        for key in [key for key in env if key.startswith(prefix)]:
            del env[key]
    elif kind == "path":
        target = op.get("prepend") or op.get("append")
        if isinstance(target, Mapping):
            _edit_path(env, resolve_path_expr(target, dirs, source_dir), bool(op.get("prepend")))
    elif kind == "path_env":
        found = host.get(name)
        if found is None:
            if op.get("required"):
                raise InstantiationError("shell.environment_missing",
                                         f"required environment variable {name} is not set")
            return
        suffix = op.get("suffix")
        entry = os.path.join(found, str(suffix)) if suffix else found
        _edit_path(env, entry, op.get("position") == "prepend")


def clean_path(value: str) -> str:
    entries: list[str] = []
    for entry in value.split(":"):
        if entry.startswith("/") and entry not in entries:
            entries.append(entry)
    return ":".join(entries) or DEFAULT_PATH


def sanitise(env: Mapping[str, str]) -> dict[str, str]:
    """The final sanitisation applied to every environment, even ``raw``."""
    result = {name: value for name, value in env.items()
              if name not in _ALWAYS_DROPPED and not name.startswith(("DYLD_", "LD_"))}
    result["PATH"] = clean_path(result.get("PATH", ""))
    result.update(_FORCED)
    return result


def build_environment(section: Mapping[str, Any], host: Mapping[str, str], dirs: HostDirs,
                      source_dir: str | None) -> tuple[dict[str, str], list[str]]:
    """(environment, secret values) of a runtime's ``environment`` manifest section."""
    env = _start(str(section.get("inherit") or "safe"), host)
    secrets: list[str] = []
    operations: Sequence[Mapping[str, Any]] = section.get("operations") or ()
    for op in operations:
        _apply(env, op, host, dirs, source_dir, secrets)
    return sanitise(env), secrets
