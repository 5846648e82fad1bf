"""Shell execution errors: the ``shell.*`` / executor codes of shell spec §7.

:class:`ShellError` is raised inside the executor for every problem the model
can cause or meet (invalid input, denial, timeouts...) and turned into the
model-visible JSON error object at the tool boundary (:mod:`runtime.shell.results`);
it never reaches the host. :class:`InstantiationError` is a phase-4 failure
(spec §6.10): the runtime is not published at all.
"""

from __future__ import annotations


class ShellError(Exception):
    """A structured tool error: ``code`` (stable) and a safe ``message`` (no secrets)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class InstantiationError(Exception):
    """A runtime or tool cannot be instantiated (spec §6.10); ``hint`` says how to fix it."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.hint = hint

    def render(self) -> str:
        text = f"error[{self.code}]: {self.message}"
        return text + (f"\n  hint: {self.hint}" if self.hint else "")
