"""The core surface: global builtins and the modules String, Array, Json, Task, Option, Hashtbl.

Schemes are written in the builtin type language of :mod:`chatml.surfaces.schemes`
(stdlib spec 3-5); ``A -> B -> R`` is a two-argument function and
``unit -> R`` a nullary one.
"""

from __future__ import annotations

from chatml.surfaces.model import AliasSpec, Export, ModuleSpec, Surface

OPTION = "[`None | `Some({})]"


def _opt(inner: str) -> str:
    return OPTION.format(inner)


JSON_ALIAS = AliasSpec(
    "json",
    "mu j. [`Null | `Bool(bool) | `Number(float) | `String(string) | `Array(j array)"
    " | `Object({ key : string; value : j } array)]",
)

GLOBALS = (
    Export("print", "'a -> unit"),
    Export("to_string", "'a -> string"),
    Export("length", "'a array -> int"),
    Export("string_length", "string -> int"),
    Export("string_is_empty", "string -> bool"),
    Export("array_copy", "'a array -> 'a array"),
    Export("record_keys", "{ ...r } -> string array"),
    Export("variant_tag", "[ ...r ] -> string"),
    Export("swap_ref", "'a ref -> 'a -> 'a"),
    Export("fail", "string -> 'a"),
    Export("hash_md5", "string -> string"),
)

STRING = ModuleSpec("String", (
    Export("length", "string -> int"),
    Export("is_empty", "string -> bool"),
    Export("concat", "string -> string -> string"),
    Export("equal", "string -> string -> bool"),
    Export("contains", "string -> string -> bool"),
    Export("starts_with", "string -> string -> bool"),
    Export("ends_with", "string -> string -> bool"),
    Export("trim", "string -> string"),
    Export("to_upper", "string -> string"),
    Export("to_lower", "string -> string"),
    Export("slice", "string -> int -> int -> string"),
    Export("find", "string -> string -> " + _opt("int")),
    Export("split", "string -> string -> string array"),
    Export("replace_all", "string -> string -> string -> string"),
))

ARRAY = ModuleSpec("Array", (
    Export("length", "'a array -> int"),
    Export("copy", "'a array -> 'a array"),
    Export("get", "'a array -> int -> 'a"),
    Export("set", "'a array -> int -> 'a -> unit"),
    Export("make", "int -> 'a -> 'a array"),
    Export("append", "'a array -> 'a array -> 'a array"),
    Export("sub", "'a array -> int -> int -> 'a array"),
    Export("reverse", "'a array -> 'a array"),
    Export("reverse_in_place", "'a array -> unit"),
    Export("swap", "'a array -> int -> int -> unit"),
    Export("fill", "'a array -> 'a -> unit"),
    Export("init", "int -> (int -> 'a) -> 'a array"),
    Export("map", "'a array -> ('a -> 'b) -> 'b array"),
    Export("mapi", "'a array -> (int -> 'a -> 'b) -> 'b array"),
    Export("iter", "'a array -> ('a -> unit) -> unit"),
    Export("iteri", "'a array -> (int -> 'a -> unit) -> unit"),
    Export("fold", "'a array -> 'b -> ('b -> 'a -> 'b) -> 'b"),
    Export("filter", "'a array -> ('a -> bool) -> 'a array"),
    Export("exists", "'a array -> ('a -> bool) -> bool"),
    Export("for_all", "'a array -> ('a -> bool) -> bool"),
    Export("find", "'a array -> ('a -> bool) -> " + _opt("'a")),
    Export("find_map", "'a array -> ('a -> " + _opt("'b") + ") -> " + _opt("'b")),
))

JSON = ModuleSpec("Json", (
    Export("parse", "string -> json"),
    Export("stringify", "json -> string"),
    Export("pretty", "json -> string"),
    Export("parse_opt", "string -> " + _opt("json")),
    Export("validate", "string -> bool"),
    Export("tag", "json -> string"),
    Export("as_bool", "json -> " + _opt("bool")),
    Export("as_number", "json -> " + _opt("float")),
    Export("as_string", "json -> " + _opt("string")),
    Export("as_array", "json -> " + _opt("json array")),
    Export("as_object", "json -> " + _opt("{ key : string; value : json } array")),
    Export("object_keys", "json -> string array"),
    Export("get_field", "json -> string -> " + _opt("json")),
    Export("get_path", "json -> string array -> " + _opt("json")),
    Export("set_field", "json -> string -> json -> json"),
    Export("remove_field", "json -> string -> json"),
))

TASK = ModuleSpec("Task", (
    Export("pure", "'a -> 'a task"),
    Export("bind", "'a task -> ('a -> 'b task) -> 'b task"),
    Export("map", "'a task -> ('a -> 'b) -> 'b task"),
    Export("fail", "string -> 'a task"),
    Export("catch", "'a task -> (string -> 'a task) -> 'a task"),
))

OPTION_MODULE = ModuleSpec("Option", (
    Export("none", "unit -> " + _opt("'a")),
    Export("some", "'a -> " + _opt("'a")),
    Export("is_none", _opt("'a") + " -> bool"),
    Export("is_some", _opt("'a") + " -> bool"),
    Export("get_or", _opt("'a") + " -> 'a -> 'a"),
))

_TABLE = "{ key : string; value : 'a } array ref"

HASHTBL = ModuleSpec("Hashtbl", (
    Export("create", "unit -> " + _TABLE),
    Export("set", _TABLE + " -> string -> 'a -> unit"),
    Export("get", _TABLE + " -> string -> " + _opt("'a")),
    Export("mem", _TABLE + " -> string -> bool"),
    Export("remove", _TABLE + " -> string -> unit"),
))

CORE = Surface(
    name="core",
    globals=GLOBALS,
    modules=(STRING, ARRAY, JSON, TASK, OPTION_MODULE, HASHTBL),
    aliases=(JSON_ALIAS,),
)
