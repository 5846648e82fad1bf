"""A fast path for the simple command lines of ``chatmdc check`` and ``chatml check``.

Importing :mod:`argparse` (with :mod:`gettext` and :mod:`locale`) and building a
command's parsers is about a tenth of a ``chatmdc check`` run. Most command
lines are simple: the subcommand, options spelled out in full
(``--format json``, ``--format=json``, ``--confine``) and the paths.
:func:`quick_parse` reads exactly those and returns the values argparse would
give; for anything else -- ``--help``, an abbreviated or unknown option, a
value outside the choices, a word starting with ``-`` where a path is expected,
``--``, positionals split by options, a missing argument -- it returns None and
the caller runs argparse, which then reports or accepts as it always did. So
the fast path never changes what a command line means, only how quickly a
plain one is read (``tests/common/test_quick_args.py`` compares the two on
generated command lines).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

__all__ = ["CommandSpec", "ParsedArgs", "quick_parse"]


class CommandSpec:
    """The shape of one subcommand, as its argparse declaration has it.

    ``options`` maps each long option to its choices (None for a ``store_true``
    flag); ``positional`` is the destination of the positional argument, which
    takes one word, or one or more when ``many``; ``defaults`` are the values of
    the attributes the command line does not set (``set_defaults`` included).
    The destination of ``--allow-network`` is ``allow_network``.
    """

    __slots__ = ("name", "options", "positional", "many", "defaults")

    def __init__(self, name: str, options: Mapping[str, tuple[str, ...] | None],
                 positional: str, *, many: bool, defaults: Mapping[str, Any]) -> None:
        self.name = name
        self.options = dict(options)
        self.positional = positional
        self.many = many
        self.defaults = dict(defaults)


class ParsedArgs:
    """The parsed values as attributes, like :class:`argparse.Namespace`."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    if TYPE_CHECKING:  # the attributes are the spec's destinations, as on a Namespace
        def __getattr__(self, name: str) -> Any: ...

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"ParsedArgs({shown})"


def _destination(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def quick_parse(words: Sequence[str], spec: CommandSpec,
                command_dest: str = "command") -> ParsedArgs | None:
    """The values of ``words`` (``sys.argv[1:]``) for ``spec``, or None: use argparse.

    ``command_dest`` is the attribute that holds the subcommand's name.
    """
    if not words or words[0] != spec.name:
        return None
    values: dict[str, Any] = {command_dest: spec.name, **spec.defaults}
    positionals: list[str] = []
    run_ended = False  # argparse takes one run of positionals; a second one is an error
    index = 1
    count = len(words)
    while index < count:
        word = words[index]
        if word.startswith("-"):
            run_ended = bool(positionals)
            name, equals, inline = word.partition("=")
            if name not in spec.options:
                return None
            choices = spec.options[name]
            if choices is None:
                if equals:
                    return None
                values[_destination(name)] = True
            else:
                if equals:
                    value = inline
                else:
                    index += 1
                    if index == count:
                        return None
                    value = words[index]
                if value not in choices:
                    return None
                values[_destination(name)] = value
        else:
            if run_ended or (positionals and not spec.many):
                return None
            positionals.append(word)
        index += 1
    if not positionals:
        return None
    values[spec.positional] = positionals if spec.many else positionals[0]
    return ParsedArgs(**values)
