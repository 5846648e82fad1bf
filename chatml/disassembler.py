"""A readable listing of ChatML bytecode (clox style), for ``chatml dis``.

One section per code object, each printed once (a closure refers to its code
object by name: ``MAKE_CLOSURE 3 helper``); one line per instruction: offset,
source line (``|`` when unchanged), the opcode indented by block depth (up to
:data:`MAX_INDENT_LEVELS`; deeper blocks say ``[depth N]`` instead), its
operands and what they denote (the constant clipped to
:data:`CONSTANT_CHARS` characters, the global's name, the code object's name),
so the listing is linear in the size of the code::

    == fib  (code 1: 1 param, 1 local, 0 captures, self loop) ==
    0000     1  LOAD_LOCAL       0
    0001     |  CONST            0   2
    0002     |  LT
    0003     |  IF

The disassembler only reads a :class:`~chatml.bytecode.code.CompiledModule`;
it shares nothing with the compiler or the VM. :func:`python_listing` lays
out the Python the VM generates for a module (``chatml dis --python``; the
source and its line map come from :func:`chatml.vm.loader.translation_for`),
each line followed by the instruction it was generated for::

    def _c1(v1_0):                      # 1:0000 LOAD_LOCAL
        try: _tick()                    # 1:0000 LOAD_LOCAL
        if (v1_0 < 2):                  # 1:0003 IF
"""

from __future__ import annotations

from collections.abc import Sequence

from chatml.bytecode.code import FREE, CodeObject, CompiledModule, op_name
from chatml.bytecode.opcodes import OPERANDS, Op

_OPENS = {Op.IF, Op.MATCH_ARM, Op.LOOP}
_CLOSES = {Op.END, Op.END_LOOP}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _describe(module: CompiledModule, op: Op, a: int, b: int) -> str:
    operands = OPERANDS.get(op, ())
    if not operands:
        return ""
    values = (a, b)[: len(operands)]
    shown = " ".join(f"{v:>4}" for v in values)
    note = ""
    if "k" in operands and 0 <= a < len(module.consts):
        note = _constant(module.consts[a])
    elif op in (Op.LOAD_GLOBAL, Op.STORE_GLOBAL) and 0 <= a < len(module.global_names):
        note = module.global_names[a]
    elif op is Op.MAKE_CLOSURE and 0 <= a < len(module.codes):
        note = module.codes[a].name
    return f"{shown}   {note}" if note else shown


#: A constant is shown in at most this many characters.
CONSTANT_CHARS = 60
#: Block nesting shown as indentation up to this depth; deeper blocks show their depth as a
#: number (``[depth 250]``) at this indentation, so every line stays short.
MAX_INDENT_LEVELS = 24


def _constant(value: object) -> str:
    """``repr(value)`` clipped to :data:`CONSTANT_CHARS`, built only that far (a tuple constant
    nested thousands deep is neither recursed into nor rendered whole)."""
    out: list[str] = []
    size = 0
    pending: list[object] = [value]
    while pending and size <= CONSTANT_CHARS:
        item = pending.pop()
        if isinstance(item, _Text):
            text = item.text
        elif isinstance(item, tuple):
            text = "("
            closing = ",)" if len(item) == 1 else ")"
            pending.append(_Text(closing))
            for index in range(len(item) - 1, -1, -1):
                pending.append(item[index])
                if index:
                    pending.append(_Text(", "))
        else:  # a long string is cut before repr copies it whole
            text = repr(item[:CONSTANT_CHARS + 1] if isinstance(item, str) else item)
        out.append(text)
        size += len(text)
    text = "".join(out)
    return text if len(text) <= CONSTANT_CHARS and not pending else \
        text[:CONSTANT_CHARS - 3] + "..."


class _Text:
    """Punctuation pushed between the items of a tuple being shown."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _indent(depth: int) -> str:
    if depth <= MAX_INDENT_LEVELS:
        return "  " * depth
    return "  " * MAX_INDENT_LEVELS + f"[depth {depth}] "


def _header(index: int, code: CodeObject) -> str:
    flags = []
    if code.self_loop:
        flags.append("self loop")
    if code.may_bounce:
        flags.append("may bounce")
    captures = ", ".join(("free " if kind == FREE else "local ") + str(source)
                         for kind, source in code.captures)
    details = [f"code {index}", _plural(code.arity, "param"), _plural(code.n_locals, "local"),
               _plural(len(code.captures), "capture") + (f" [{captures}]" if captures else "")]
    return f"== {code.name}  ({': '.join(details[:1])}: {', '.join(details[1:] + flags)}) =="


def disassemble_code(module: CompiledModule, index: int) -> str:
    code = module.codes[index]
    lines = [_header(index, code)]
    depth = 0
    previous_line = -1
    for offset, ((opcode, a, b), position) in enumerate(
            zip(code.instructions, code.positions, strict=True)):
        try:
            op = Op(opcode)
        except ValueError:
            lines.append(f"{offset:04d}        {op_name(opcode)}")
            continue
        if op in _CLOSES or op is Op.ELSE:
            depth = max(0, depth - 1)
        line = position[0]
        where = f"{line:>5}" if line != previous_line else "    |"
        previous_line = line
        text = f"{_indent(depth)}{op.name:<16}"
        described = _describe(module, op, a, b)
        lines.append(f"{offset:04d} {where}  {text} {described}".rstrip())
        if op in _OPENS or op is Op.ELSE:
            depth += 1
    return "\n".join(lines)


def _head(module: CompiledModule) -> str:
    return (f"; {module.source_name}  surface {module.surface}  format v{module.version}  "
            f"{len(module.codes)} code objects, {len(module.consts)} constants, "
            f"{module.instruction_count()} instructions")


def disassemble(module: CompiledModule, code: int | None = None) -> str:
    """The listing of every code object of ``module``, top level first (only code object
    ``code`` when given)."""
    indexes = range(len(module.codes)) if code is None else [code]
    parts = [_head(module)] + [disassemble_code(module, i) for i in indexes]
    return "\n\n".join(parts) + "\n"


#: The column where a generated line's instruction comment starts (when the line is shorter).
COMMENT_COLUMN = 48


def python_listing(module: CompiledModule, source: str, line_map: Sequence[tuple[int, int]],
                   code: int | None = None) -> str:
    """The generated Python ``source`` of ``module``, each line followed by ``# C:PPPP OP``
    (code object, instruction, opcode); only the lines of code object ``code`` when given
    (its nested functions are listed under their own index)."""
    lines = [f"{_head(module)}  (generated Python)"]
    for text, (index, pc) in zip(source.splitlines(), line_map, strict=True):
        if code is not None and index != code:
            continue
        instructions = module.codes[index].instructions
        name = op_name(instructions[pc][0]) if pc < len(instructions) else "?"
        lines.append(f"{text.ljust(COMMENT_COLUMN)}  # {index}:{pc:04d} {name}")
    return "\n".join(lines) + "\n"
