"""The conservative shell command-chain grammar (spec §8.2).

Used at compile time to check compact fixed commands (``command="rg --json"``
must be exactly one simple command, spec §5.3) and by chain-mode execution.
The tokenizer works on UTF-8 bytes, so error offsets are byte offsets::

    chain    := pipeline ((';' | '&&' | '||') pipeline)*
    pipeline := command ('|' command)*
    command  := word+

Quotes: ``'...'`` is literal; ``"..."`` honours backslash escapes and rejects
command substitution. ``$VAR``, globs and ``~`` are plain text. Redirection,
background jobs, grouping and command substitution are errors.
"""

from __future__ import annotations

from chatcommon.records import SharedMethods, frozen_record

_SPACE = frozenset(b" \t\r\n")
_GROUPING = frozenset(b"(){}")


class ChainError(ValueError):
    """A chain that does not parse; ``offset`` is a byte offset into the UTF-8 text."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(f"{message} (at byte {offset})")
        self.offset = offset
        self.message = message


@frozen_record
class Pipeline(SharedMethods):
    """Commands joined by ``|``; each command is its list of words."""

    commands: tuple[tuple[str, ...], ...]


@frozen_record
class Chain(SharedMethods):
    """Pipelines joined by operators: ``operators[i]`` joins pipelines ``i`` and ``i+1``."""

    pipelines: tuple[Pipeline, ...]
    operators: tuple[str, ...]

    @property
    def single_command(self) -> tuple[str, ...] | None:
        """The words of the chain when it is exactly one simple command."""
        if len(self.pipelines) == 1 and len(self.pipelines[0].commands) == 1:
            return self.pipelines[0].commands[0]
        return None


def _tokens(data: bytes) -> list[tuple[str, bytes | str, int]]:
    """``("word", bytes, offset)`` and ``("op", operator, offset)`` tokens."""
    tokens: list[tuple[str, bytes | str, int]] = []
    word = bytearray()
    word_start = -1
    i, n = 0, len(data)

    def end_word() -> None:
        nonlocal word_start
        if word_start >= 0:
            tokens.append(("word", bytes(word), word_start))
            word.clear()
            word_start = -1

    while i < n:
        c = data[i]
        if c in _SPACE:
            end_word()
            i += 1
            continue
        if c in b";|&":
            end_word()
            if c == ord(";"):
                tokens.append(("op", ";", i))
                i += 1
            elif c == ord("|"):
                double = i + 1 < n and data[i + 1] == ord("|")
                tokens.append(("op", "||" if double else "|", i))
                i += 2 if double else 1
            elif i + 1 < n and data[i + 1] == ord("&"):
                tokens.append(("op", "&&", i))
                i += 2
            else:
                raise ChainError(i, "background execution is not supported")
            continue
        if c in b"<>":
            raise ChainError(i, "redirection is not supported")
        if c == ord("`") or (c == ord("$") and i + 1 < n and data[i + 1] == ord("(")):
            raise ChainError(i, "command substitution is not supported")
        if c in _GROUPING:
            raise ChainError(i, "grouping is not supported")
        if word_start < 0:
            word_start = i
        if c == ord("'"):
            close = data.find(b"'", i + 1)
            if close < 0:
                raise ChainError(i, "unterminated single quote")
            word += data[i + 1:close]
            i = close + 1
        elif c == ord('"'):
            j = i + 1
            while True:
                if j >= n:
                    raise ChainError(i, "unterminated double quote")
                d = data[j]
                if d == ord('"'):
                    break
                if d == ord("\\"):
                    if j + 1 >= n:
                        raise ChainError(j, "trailing backslash")
                    word.append(data[j + 1])
                    j += 2
                    continue
                if d == ord("`") or (d == ord("$") and j + 1 < n and data[j + 1] == ord("(")):
                    raise ChainError(j, "command substitution is not supported")
                word.append(d)
                j += 1
            i = j + 1
        elif c == ord("\\"):
            if i + 1 >= n:
                raise ChainError(i, "trailing backslash")
            word.append(data[i + 1])
            i += 2
        else:
            word.append(c)
            i += 1
    end_word()
    return tokens


def parse_chain(text: str) -> Chain:
    """Parse ``text``; raise :class:`ChainError` (with a byte offset) when it is not a chain."""
    tokens = _tokens(text.encode("utf-8"))
    if not tokens:
        raise ChainError(0, "empty command")
    pipelines: list[Pipeline] = []
    operators: list[str] = []
    commands: list[tuple[str, ...]] = []
    words: list[str] = []
    pipeline_start = 0
    for kind, value, offset in tokens:
        if kind == "word":
            assert isinstance(value, bytes)
            words.append(value.decode("utf-8", "surrogateescape"))
            continue
        if not words:
            raise ChainError(pipeline_start, "expected a command")
        commands.append(tuple(words))
        words = []
        if value != "|":
            pipelines.append(Pipeline(tuple(commands)))
            commands = []
            operators.append(str(value))
            pipeline_start = offset + len(str(value))
    if not words:
        raise ChainError(pipeline_start, "expected a command")
    commands.append(tuple(words))
    pipelines.append(Pipeline(tuple(commands)))
    return Chain(tuple(pipelines), tuple(operators))
