"""ChatMD prompts checked with both languages: ChatMD's own checks plus the ChatML script check.

:mod:`chatmd.frontend` loads and checks a prompt with ChatMD's checks only
(:func:`chatmd.frontend.chatmd_checks`): ``chatmd`` never imports ``chatml``. The
``chatmdc`` command and hosts that want every diagnostic a prompt can have use the
functions here, which add :func:`runtime.script_check.check_prompt_scripts` (it
imports ChatML only when the prompt has a ChatML script). Same signatures and
results as their :mod:`chatmd.frontend` namesakes.
"""

from __future__ import annotations

import os

from chatmd.frontend import CheckResult, PromptCheck, chatmd_checks
from chatmd.frontend import check_prompt as _check_prompt
from chatmd.frontend import check_prompt_text as _check_prompt_text
from chatmd.frontend import load_prompt as _load_prompt
from chatmd.frontend import load_prompt_text as _load_prompt_text
from chatmd.ir import Prompt
from runtime.script_check import check_prompt_scripts

__all__ = ["check_prompt", "check_prompt_text", "load_prompt", "load_prompt_text",
           "prompt_checks"]


def prompt_checks() -> list[PromptCheck]:
    """Every check of a prompt: ChatMD's (tools, shell), then the ChatML scripts."""
    return [*chatmd_checks(), check_prompt_scripts]


def check_prompt(path: str | os.PathLike[str], *, confine: bool = False) -> CheckResult:
    """:func:`chatmd.frontend.check_prompt` with :func:`prompt_checks`; never raises."""
    return _check_prompt(path, confine=confine, checks=prompt_checks())


def check_prompt_text(text: str, *, name: str = "<prompt>", prompt_dir: str = ".",
                      confine: bool = False) -> CheckResult:
    """:func:`chatmd.frontend.check_prompt_text` with :func:`prompt_checks`; never raises."""
    return _check_prompt_text(text, name=name, prompt_dir=prompt_dir, confine=confine,
                              checks=prompt_checks())


def load_prompt(path: str | os.PathLike[str], *, confine: bool = False) -> Prompt:
    """:func:`chatmd.frontend.load_prompt` with :func:`prompt_checks` (raises on any error)."""
    return _load_prompt(path, confine=confine, checks=prompt_checks())


def load_prompt_text(text: str, *, name: str = "<prompt>", prompt_dir: str = ".",
                     confine: bool = False) -> Prompt:
    """:func:`chatmd.frontend.load_prompt_text` with :func:`prompt_checks` (raises on errors)."""
    return _load_prompt_text(text, name=name, prompt_dir=prompt_dir, confine=confine,
                             checks=prompt_checks())
