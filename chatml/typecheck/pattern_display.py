"""How patterns, floats and strings appear in match diagnostics (spec 4.12, 5.10).

``show_pattern`` gives the reference's display: ``_``, a variable's name,
``()``, a decimal int, ``true``/``false``, a float as the runtime prints it,
a string in double quotes with OCaml escaping, ``` `Tag ``` or ``` `Tag(...) ```,
and ``{...}`` for records.
"""

from __future__ import annotations

import math

from chatml import ast


def format_float(value: float) -> str:
    """Floats as the runtime prints them (spec 5.10): ``7.``, ``0.1``, ``1e+20``, ``nan``."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.15g}"
    if float(text) != value:
        text = f"{value:.17g}"
    if all(ch in "0123456789-" for ch in text):
        text += "."
    return text


def ocaml_escape(text: str) -> str:
    """OCaml's ``String.escaped`` of the UTF-8 bytes of ``text``."""
    out = []
    for byte in text.encode("utf-8"):
        if byte == 0x22:
            out.append('\\"')
        elif byte == 0x5C:
            out.append("\\\\")
        elif byte == 0x0A:
            out.append("\\n")
        elif byte == 0x09:
            out.append("\\t")
        elif byte == 0x0D:
            out.append("\\r")
        elif byte == 0x08:
            out.append("\\b")
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03d}")
    return "".join(out)


def show_pattern(pattern: ast.Pattern) -> str:
    """A pattern as messages show it (spec 4.12)."""
    if isinstance(pattern, ast.PWildcard):
        return "_"
    if isinstance(pattern, ast.PVar):
        return pattern.name
    if isinstance(pattern, ast.PUnit):
        return "()"
    if isinstance(pattern, ast.PInt):
        return str(pattern.value)
    if isinstance(pattern, ast.PBool):
        return "true" if pattern.value else "false"
    if isinstance(pattern, ast.PFloat):
        return format_float(pattern.value)
    if isinstance(pattern, ast.PString):
        return '"' + ocaml_escape(pattern.value) + '"'
    if isinstance(pattern, ast.PVariant):
        return "`" + pattern.tag + ("(...)" if pattern.args else "")
    return "{...}"
