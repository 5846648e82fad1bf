"""What a host lets moderators do: the capability callbacks and model recipes
(moderator-runtime spec 5.4, 9; stdlib spec 7, 9.9).

Every callback is optional; an unset one makes its operation fail the task
with ``<Op> is not configured`` (``Log.*`` go to :mod:`logging` by default).
Model recipes are host-defined names (never raw model ids) mapped to a
:class:`ModelRecipe`; :meth:`runtime.executor.ModelExecutor.recipe` builds
one whose ``spawn`` runs jobs in the background.

Values crossing here are host JSON (``dict``/``list``/``str``/numbers) except
``Schedule.after_ms``'s payload, which is the raw ChatML value to re-inject.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from chatml.values import Value

LOGGER = logging.getLogger("runtime.moderator")


@attrs.frozen
class ModelOk:
    """A recipe's successful result (host JSON)."""

    result: Any


@attrs.frozen
class ModelRefused:
    message: str


@attrs.frozen
class ModelError:
    message: str


ModelResult = ModelOk | ModelRefused | ModelError


@attrs.frozen
class ModelRecipe:
    """A host-registered model recipe: ``call(payload) -> ModelResult``; ``spawn(payload) ->
    job id`` (None: the recipe cannot be spawned)."""

    name: str
    call: Callable[[Any], ModelResult]
    spawn: Callable[[Any], str] | None = None


@attrs.frozen
class ToolOk:
    """``Tool.call`` result: host JSON given to the script as ```Ok(json)``."""

    result: Any


@attrs.frozen
class ToolError:
    """``Tool.call`` result given to the script as ```Error(message)``."""

    message: str


def log_to_logging(level: str, message: str) -> None:
    LOGGER.log(getattr(logging, level.upper(), logging.INFO), "%s", message)


@attrs.frozen
class Capabilities:
    """The host's side of the capability modules."""

    on_log: Callable[[str, str], None] = log_to_logging
    """``(level, message)``; levels ``debug``, ``info``, ``warn``, ``error``."""
    on_tool_call: Callable[[str, Any], ToolOk | ToolError] | None = None
    on_tool_spawn: Callable[[str, Any], str] | None = None
    model_recipes: Mapping[str, ModelRecipe] = attrs.field(factory=dict)
    on_schedule_after_ms: Callable[[int, Value], str] | None = None
    on_schedule_cancel: Callable[[str], None] | None = None
    on_process_run: Callable[[str, list[str]], str] | None = None
    on_print: Callable[[str], None] | None = None
    """Where the script's ``print`` output goes (None: discarded)."""

    def with_recipes(self, *recipes: ModelRecipe) -> Capabilities:
        """A copy with ``recipes`` registered (by name; later ones win)."""
        merged = dict(self.model_recipes)
        merged.update({recipe.name: recipe for recipe in recipes})
        return attrs.evolve(self, model_recipes=merged)


__all__ = ["Capabilities", "ModelError", "ModelOk", "ModelRecipe", "ModelRefused",
           "ModelResult", "ToolError", "ToolOk", "log_to_logging"]
