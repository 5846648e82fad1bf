"""Tool execution for a session: declared definitions, host runners, bounded parallelism
(moderator-runtime spec 3, 8.3 in part).

A :class:`ToolBox` pairs the request's tool definitions (declared in the
prompt, plus :class:`HostTool` s a host adds) with runners by name. A runner
takes the payload text (a function call's JSON arguments, a custom call's
raw input) and returns the output: a string, or a list of content parts.
Calls run on a pool of at most :data:`MAX_PARALLEL_TOOLS` threads (or inline
when parallel calls are off); outputs are always collected in call order.
A call of an undeclared tool, or of a tool without a runner, raises
:class:`~runtime.errors.UnknownToolError`; a runner's exception propagates
(both are fatal for the run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import attrs

from runtime.errors import UnknownToolError

MAX_PARALLEL_TOOLS = 8

ToolOutput = str | list[Any]
Runner = Callable[[str], ToolOutput]


@attrs.frozen
class HostTool:
    """A tool the host offers beyond the prompt's declarations."""

    name: str
    runner: Runner
    description: str = ""
    parameters: Mapping[str, Any] = attrs.field(factory=lambda: {"type": "object",
                                                                  "properties": {}})
    custom: bool = False

    def definition(self) -> dict[str, Any]:
        if self.custom:
            return {"type": "custom", "name": self.name, "description": self.description,
                    "format": {"type": "text"}}
        return {"type": "function", "name": self.name, "description": self.description,
                "parameters": dict(self.parameters), "strict": False}


class ToolBox:
    """Definitions and runners of a session's tools."""

    def __init__(self, definitions: Sequence[Mapping[str, Any]],
                 runners: Mapping[str, Runner] | None = None,
                 host_tools: Sequence[HostTool] = (), *, parallel: bool = True) -> None:
        self.definitions: list[dict[str, Any]] = [dict(d) for d in definitions]
        self.definitions += [tool.definition() for tool in host_tools]
        self.runners: dict[str, Runner] = dict(runners or {})
        self.runners.update({tool.name: tool.runner for tool in host_tools})
        self.parallel = parallel
        self._pool: ThreadPoolExecutor | None = None

    def declared(self, name: str) -> bool:
        return any(d.get("name") == name for d in self.definitions)

    def check_declared(self, name: str) -> None:
        if not self.declared(name):
            raise UnknownToolError(f"the model called the tool '{name}', which the prompt does "
                                   "not declare")

    def runner(self, name: str) -> Runner:
        self.check_declared(name)
        runner = self.runners.get(name)
        if runner is None:
            raise UnknownToolError(f"the tool '{name}' is declared but the host gave no runner "
                                   "for it")
        return runner

    def start(self, name: str, payload: str) -> Future[ToolOutput]:
        """Run the tool ``name`` (in the pool when parallel); the future of its output."""
        runner = self.runner(name)
        if not self.parallel:
            future: Future[ToolOutput] = Future()
            try:
                future.set_result(runner(payload))
            except BaseException as error:  # surfaced when the output is collected
                future.set_exception(error)
            return future
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=MAX_PARALLEL_TOOLS,
                                            thread_name_prefix="tool")
        return self._pool.submit(runner, payload)

    def close(self, *, wait: bool = True) -> None:
        """Stop the pool; ``wait=False`` (a cancelled run) abandons the calls still running
        and cancels the queued ones."""
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=not wait)
            self._pool = None


def done(output: ToolOutput) -> Future[ToolOutput]:
    """A completed future (a synthetic output)."""
    future: Future[ToolOutput] = Future()
    future.set_result(output)
    return future


__all__ = ["MAX_PARALLEL_TOOLS", "HostTool", "Runner", "ToolBox", "ToolOutput", "done"]
