"""Structure-aware hypothesis strategies for ChatML source text.

Three families, combined in :data:`sources`:

- printed syntax trees of :mod:`tests.chatml.ast_strategies` (every statement
  and expression form) and its operator soups;
- templates written here for the constructs a program nests and repeats:
  nested expressions (``if``, ``let``, ``fun``, lists, tuples, records,
  variants, parentheses), ``match`` with many arms and deep constant patterns,
  nested modules, records and variant type declarations, ``let rec ... and``
  chains, ``;`` sequences, loops, strings with escapes (good and bad) and
  comments (nested, unterminated), at depths up to
  :data:`~tests.fuzzing.budget.MAX_DEPTH` and repetitions up to
  :data:`~tests.fuzzing.budget.MAX_REPEAT`;
- realistic whole programs of :func:`tests.chatml.program_gen.realistic_program`.
"""

from __future__ import annotations

from hypothesis import strategies as st

from chatml import ast
from chatml.syntax.printer import PrinterError, print_program
from tests.chatml.ast_strategies import operator_soups, programs
from tests.chatml.program_gen import realistic_program
from tests.fuzzing.budget import MAX_DEPTH, MAX_REPEAT, PENDING_SHAPES

S = st.SearchStrategy

depths = st.integers(1, MAX_DEPTH)
counts = st.integers(1, MAX_REPEAT)

string_literals = st.one_of(
    st.sampled_from([r'"a\nb"', r'"\t\\\""', r'"\u{1F600}"', r'"\x41"', r'"\q"', r'"\u{110000}"',
                     r'"\u{D800}"', '"unterminated', '"\0"', '"line\nbreak"', r'"\u{}"', '""']),
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=12).map(
        lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'),
)
comments = st.sampled_from(["(* c *)", "(* (* nested *) *)", "(* unterminated", "*)",
                            '(* "string *) in comment" *)', "(**)", "(* \0 *)"])
atoms = st.one_of(
    st.sampled_from(["x", "1", "0", "-1", "2.5", "true", "()", "`A", "[]", "{ a = 1 }",
                     "4611686018427387903", "4611686018427387904", "99999999999999999999999",
                     "1e309", "0x7fffffffffffffff", "print", "ref(0)", "String.length"]),
    string_literals,
)

_WRAPPERS = [
    ("(", ")"), ("[", "]"), ("[1, ", "]"), ("(1, ", ")"), ("`A(", ")"), ("{ a = ", " }"),
    ("if true then ", " else 0"), ("let y = 1 in ", ""), ("fun z -> ", ""), ("f(", ")"),
    ("while false do ", " done"), ("match x with | _ -> ", ""), ("-", ""), ("!", ""),
    ("(match 1 with | 1 -> ", " | _ -> 0)"), ("begin ", " end"), ("ref(", ")"),
]

nested_expressions = st.builds(
    lambda wrap, depth, core: wrap[0] * depth + core + wrap[1] * depth,
    st.sampled_from(_WRAPPERS), depths, atoms).map(lambda e: f"let x = 1\nlet f a = a\n"
                                                             f"let r = {e}")

constant_patterns = st.builds(
    lambda depth, tag: (f"let g x = match x with | {f'`{tag}(' * depth}y{')' * depth} -> 1"
                        f" | _ -> 2"),
    # compiled, cached and run to 5,000 levels (crashers/deep_constant_pattern_201_read_back.json)
    st.integers(1, MAX_DEPTH if PENDING_SHAPES else min(MAX_DEPTH, 200)),
    st.sampled_from(["A", "Some", "B"]))

many_arms = st.builds(
    lambda n, kind: "let h x = match x with\n" + "\n".join(
        {"int": f"  | {i} -> {i}", "str": f'  | "s{i}" -> {i}', "tag": f"  | `T{i} -> {i}"}[kind]
        for i in range(n)) + "\n  | _ -> 0",
    counts, st.sampled_from(["int", "str", "tag"]))

rec_chains = st.builds(
    lambda n: "let rec f0 x = x\n" + "".join(f"and f{i} x = f{i - 1}(x)\n" for i in range(1, n)),
    counts)

nested_modules = st.builds(
    lambda depth, body: "module M = struct\n" * depth + body + "\nend" * depth,
    depths, st.sampled_from(["let x = 1", "type t = int", "", "open M", "let x ="]))

records = st.builds(
    lambda n, nested: ("let r = " + "{ a = " * nested + "{ " + "; ".join(
        f"l{i} = {i}" for i in range(n)) + " }" + " }" * nested + "\nlet v = r.l0"),
    counts, st.integers(0, 20))

variant_types = st.builds(
    lambda n: "type t = " + " | ".join(f"`C{i}(int)" for i in range(n))
    + "\nlet k (x : t) = match x with | `C0(n) -> n | _ -> 0",
    counts)

sequences = st.builds(lambda n, stmt: "let s () =\n  " + ";\n  ".join([stmt] * n) + ";\n  ()",
                      counts, st.sampled_from(["print(1)", "ignore(1)", "()", "let a = 1 in a"]))

else_if_chains = st.builds(
    lambda n: "let c x =\n  " + " else ".join(f"if x == {i} then {i}" for i in range(n))
    + " else 0", counts)

repeated = st.builds(lambda piece, n, sep: sep.join([piece] * n),
                     st.one_of(comments, string_literals, atoms, st.sampled_from(
                         ["let x = 1", "in", "(", "end", "|", "->", ";;", "`A"])),
                     counts, st.sampled_from(["", "\n", " "]))



def _printed(program: ast.Program) -> str | None:
    """The program's text; None for a tree no text parses back to (the printer says so)."""
    try:
        return print_program(program)
    except PrinterError:
        return None


printed_programs: S[str] = programs.map(_printed).filter(lambda text: text is not None)  # type: ignore[arg-type,assignment]
realistic = st.builds(realistic_program, st.integers(1, 60), st.integers(0, 1000))

structured: S[str] = st.one_of(
    nested_expressions, constant_patterns, many_arms, rec_chains, nested_modules, records,
    variant_types, sequences, else_if_chains, repeated)

sources: S[str] = st.one_of(
    printed_programs, operator_soups, structured,
    st.lists(st.one_of(structured, printed_programs, comments), min_size=1, max_size=3)
    .map("\n".join),
)
