"""Failures a tool reports to the model (a tool output), as opposed to failures of the run."""

from __future__ import annotations


class ToolFailure(Exception):
    """A tool call failed; the message becomes the tool output the model reads."""


__all__ = ["ToolFailure"]
