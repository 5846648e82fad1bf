"""A readable listing of ChatML bytecode (clox style), for ``chatml dis``.

One section per code object; one line per instruction: offset, source line
(``|`` when unchanged), the opcode indented by block depth, its operands and
what they denote (the constant, the global's name, the code object's name)::

    == fib  (code 1: 1 param, 1 local, 0 captures, self loop) ==
    0000     1  LOAD_LOCAL       0
    0001     |  CONST            0   2
    0002     |  LT
    0003     |  IF

The disassembler only reads a :class:`~chatml.bytecode.code.CompiledModule`;
it shares nothing with the compiler or the VM.
"""

from __future__ import annotations

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


def _constant(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
        text = f"{'  ' * depth}{op.name:<16}"
        described = _describe(module, op, a, b)
        lines.append(f"{offset:04d} {where}  {text} {described}".rstrip())
        if op in _OPENS or op is Op.ELSE:
            depth += 1
    return "\n".join(lines)


def disassemble(module: CompiledModule) -> str:
    """The listing of every code object of ``module``, top level first."""
    head = (f"; {module.source_name}  surface {module.surface}  format v{module.version}  "
            f"{len(module.codes)} code objects, {len(module.consts)} constants, "
            f"{module.instruction_count()} instructions")
    parts = [head] + [disassemble_code(module, i) for i in range(len(module.codes))]
    return "\n\n".join(parts) + "\n"
