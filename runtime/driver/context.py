"""The settings a run shares with its tools and nested agents (one object, passed down).

A :class:`DriverContext` holds the model client and its settings, the ``--model``
override, the workspace, network and approval settings, the event log and display,
the inline agent cache and the stack of agents being run (for the depth limit and
cycle detection, spec 8.10). :meth:`DriverContext.nested` is the context of a nested
agent: same client and settings, quiet display, one more agent on the stack.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from chatmd.request_context import AgentCache
from runtime.driver.client import ClientSettings
from runtime.driver.display import Display, QuietDisplay
from runtime.driver.events import EventLog

MAX_AGENT_DEPTH = 8


@attrs.define
class DriverContext:
    client: Any
    client_settings: ClientSettings
    workspace: Path
    events: EventLog = attrs.field(factory=EventLog)
    display: Display = attrs.field(factory=QuietDisplay)
    model: str | None = None
    allow_network: bool = False
    approvals: str = "ask"
    stream: bool = True
    agent_cache: AgentCache = attrs.field(factory=AgentCache)
    agent_stack: tuple[str, ...] = ()
    agent_turn_limit: int | None = 64
    """Model requests a nested agent may make (a runaway sub-agent stops with an error)."""

    def nested(self, identity: str) -> DriverContext:
        return attrs.evolve(self, display=QuietDisplay(),
                            agent_stack=(*self.agent_stack, identity))


__all__ = ["MAX_AGENT_DEPTH", "DriverContext"]
