"""The builtin surface table (chatml.surfaces) against the stdlib spec's inventory (sections 2, 11)."""

from __future__ import annotations

import pytest

from chatml.surfaces import (
    PERFORM,
    SPAWN,
    SURFACE_NAMES,
    SchemeSyntaxError,
    alias_type,
    all_exports,
    get_surface,
    module_type,
    scheme_of,
)
from chatml.surfaces.model import AliasSpec, Export, ModuleSpec, Surface, merge
from chatml.surfaces.schemes import AliasLookup, parse_scheme
from chatml.typecheck.types import (
    GENERIC,
    TFun,
    TMu,
    TRecord,
    TVar,
    contains_generic,
    flatten_row,
    resolve,
    show_signature,
    show_type,
)

#: Stdlib spec section 11: exports per group.
INVENTORY = {
    "globals": 11, "String": 14, "Array": 22, "Json": 16, "Task": 5, "Option": 5, "Hashtbl": 5,
    "Log": 4, "Item": 18, "Tool_call": 6, "Context": 12, "Turn": 10, "Tool": 6, "Model": 5,
    "Process": 1, "Schedule": 2, "Runtime": 4, "Ui": 1, "Approval": 2, "Shell": 17, "Match": 2,
    "Review": 5, "Intercept": 4, "Result": 3, "Effect": 8, "Audit": 3,
}

CORE_MODULES = ("String", "Array", "Json", "Task", "Option", "Hashtbl")
MODERATOR_MODULES = CORE_MODULES + ("Log", "Item", "Tool_call", "Context", "Turn", "Tool",
                                    "Model", "Schedule", "Runtime", "Process")


def test_the_inventory_has_191_exports_in_the_documented_groups() -> None:
    exports = all_exports()
    assert len(exports) == 191 == sum(INVENTORY.values())
    counts: dict[str, int] = {}
    for qualified in exports:
        group = qualified.split(".")[0] if "." in qualified else "globals"
        counts[group] = counts.get(group, 0) + 1
    assert counts == INVENTORY


def test_surfaces_list_their_globals_modules_and_aliases() -> None:
    core = get_surface("core")
    assert core.global_names == ("print", "to_string", "length", "string_length",
                                 "string_is_empty", "array_copy", "record_keys", "variant_tag",
                                 "swap_ref", "fail", "hash_md5")
    assert core.module_names == CORE_MODULES
    assert core.alias_names == ("json",)
    moderator = get_surface("moderator")
    assert moderator.module_names == MODERATOR_MODULES
    assert moderator.alias_names == ("json", "item", "tool_desc", "tool_call", "tool_result",
                                     "context")
    assert get_surface("ui_moderator").module_names == MODERATOR_MODULES + ("Ui", "Approval")


@pytest.mark.parametrize(("name", "extra", "aliases"), [
    ("shell_matcher", ("Shell", "Match"), ("json", "shell_context", "shell_policy")),
    ("shell_reviewer", ("Shell", "Review"), ("json", "shell_context", "shell_policy")),
    ("shell_before_interceptor", ("Shell", "Intercept"),
     ("json", "shell_context", "shell_policy")),
    ("shell_effect_analyzer", ("Shell", "Effect"), ("json", "shell_context", "shell_policy")),
    ("shell_after_interceptor", ("Result",), ("json", "shell_result")),
    ("shell_audit_filter", ("Audit",), ("json", "shell_audit")),
])
def test_shell_surfaces_drop_print_and_add_their_modules(name: str, extra: tuple[str, ...],
                                                         aliases: tuple[str, ...]) -> None:
    surface = get_surface(name)
    assert "print" not in surface.global_names
    assert len(surface.globals) == 10
    assert surface.module_names == CORE_MODULES + extra
    assert surface.alias_names == aliases


def test_every_surface_name_resolves_and_unknown_names_fail() -> None:
    assert [get_surface(n).name for n in SURFACE_NAMES] == list(SURFACE_NAMES)
    with pytest.raises(KeyError):
        get_surface("nope")


def test_every_scheme_parses_once_and_is_shared() -> None:
    for qualified in all_exports():
        parsed = scheme_of(qualified)
        assert parsed is scheme_of(qualified)
        assert isinstance(resolve(parsed), TFun), qualified


@pytest.mark.parametrize(("qualified", "printed"), [
    ("print", "'a -> unit"),
    ("record_keys", "{...} -> string array"),
    ("variant_tag", "[...] -> string"),
    ("swap_ref", "ref('a), 'a -> 'a"),
    ("Array.fold", "'a array, 'b, ('b, 'a -> 'b) -> 'b"),
    ("Array.find_map", "'a array, ('a -> [`None | `Some('b)]) -> [`None | `Some('b)]"),
    ("Option.none", "( -> [`None | `Some('a)])"),
    ("Hashtbl.get", "ref({key: string; value: 'a} array), string -> [`None | `Some('a)]"),
    ("Task.bind", "'a task, ('a -> 'b task) -> 'b task"),
    ("Json.as_object", "json -> [`None | `Some({key: string; value: json} array)]"),
    ("Turn.replace_or_append", "[`None | `Some(string)], item -> unit task"),
    ("Model.call_text",
     "string, string -> [`Error(string) | `Ok(json) | `Refused(string)] task"),
    ("Schedule.after_ms", "int, 'a -> string task"),
    ("Shell.policy", "shell_context -> [`None | `Some(shell_policy)]"),
    ("Approval.ask_choice", "string, string array -> string task"),
])
def test_schemes_print_as_the_stdlib_spec_writes_them(qualified: str, printed: str) -> None:
    assert show_signature(scheme_of(qualified)) == printed


def test_scheme_variables_are_generic_and_row_variables_separate() -> None:
    keys = scheme_of("record_keys")
    assert contains_generic(keys)
    param = resolve(keys.params[0])  # type: ignore[attr-defined]
    assert isinstance(param, TRecord)
    _, tail = flatten_row(param.row)
    assert isinstance(tail, TVar) and tail.level == GENERIC
    assert not contains_generic(scheme_of("String.length"))


def test_the_json_alias_is_a_contractive_recursive_variant() -> None:
    json = alias_type("json")
    assert isinstance(json, TMu)
    assert show_type(json.body) == (
        "[`Array(j array) | `Bool(bool) | `Null | `Number(float) | "
        "`Object({key: string; value: j} array) | `String(string)]")
    assert alias_type("json") is json


def test_modules_are_closed_records_of_their_exports() -> None:
    task = module_type("Task")
    assert isinstance(task, TRecord)
    fields, tail = flatten_row(task.row)
    assert sorted(fields) == ["bind", "catch", "fail", "map", "pure"]
    assert show_type(tail) == "{}"


SPAWNED = {"Tool.spawn", "Model.spawn", "Model.spawn_text", "Process.run", "Schedule.after_ms"}
CAPABILITY_MODULES = ("Log", "Turn", "Tool", "Model", "Process", "Schedule", "Runtime", "Ui",
                      "Approval", "Match", "Review", "Intercept", "Result", "Effect", "Audit")


def test_capability_exports_and_only_they_build_task_nodes() -> None:
    for qualified, export in all_exports().items():
        module = qualified.split(".")[0] if "." in qualified else None
        if module in CAPABILITY_MODULES:
            assert export.effect is not None, qualified
            expected = SPAWN if qualified in SPAWNED else PERFORM
            assert export.effect.kind == expected, qualified
        else:
            assert export.effect is None, qualified


@pytest.mark.parametrize(("qualified", "operation", "adapter"), [
    ("Log.info", "Log.info", None),
    ("Turn.append_item", "Turn.append_message", None),
    ("Turn.replace_item", "Turn.replace_message", None),
    ("Turn.delete_item", "Turn.delete_message", None),
    ("Turn.replace_or_append", "Turn.replace_message", "replace_or_append"),
    ("Turn.append_notice", "Turn.append_message", "append_notice"),
    ("Model.call_text", "Model.call", "text_payload"),
    ("Model.call_json", "Model.call", None),
    ("Model.spawn_text", "Model.spawn", "text_payload"),
    ("Effect.read_path", "Effect.read_path", None),
    ("Approval.ask_text", "Approval.ask_text", None),
])
def test_effects_name_the_operation_the_node_records(qualified: str, operation: str,
                                                     adapter: str | None) -> None:
    effect = all_exports()[qualified].effect
    assert effect is not None
    assert (effect.operation, effect.adapter) == (operation, adapter)


def test_merge_is_left_biased_and_can_drop_globals() -> None:
    left = Surface("l", (Export("f", "int -> int"),), (ModuleSpec("M", ()),),
                   (AliasSpec("t", "int"),))
    right = Surface("r", (Export("f", "string -> string"), Export("print", "'a -> unit")),
                    (ModuleSpec("M", (Export("x", "int"),)), ModuleSpec("N", ())),
                    (AliasSpec("t", "string"),))
    merged = merge("m", left, right, without_globals=("print",))
    assert [g.scheme for g in merged.globals] == ["int -> int"]
    assert merged.module_names == ("M", "N") and merged.modules[0].exports == ()
    assert merged.aliases == (AliasSpec("t", "int"),)


def test_the_scheme_parser_flattens_arrows_and_rejects_malformed_schemes() -> None:
    lookup = AliasLookup({"pair": "(int * string)"})
    assert show_type(parse_scheme("unit -> int -> (int -> 'a) -> pair", lookup)) == (
        "(int, (int -> a) -> pair)")
    assert show_type(lookup("pair").elems[1]) == "string"  # type: ignore[attr-defined]
    assert show_type(parse_scheme("mu t. { next : t array }", lookup)) == (
        "mu t. {next: t array}")
    for bad in ("int ->", "{ a int }", "[ A ]", "nope", "int int"):
        with pytest.raises(SchemeSyntaxError):
            parse_scheme(bad, lookup)
