"""The static items of the conformance checklist (chatml-language.md section 7).

Each item is a one-line program and what the typechecker must say: ``None``
for a program that checks cleanly (its run-time behaviour is the VM's
concern), or a fragment of the expected type error. Items 107-110 are run-time
failures in the reference; DECISIONS 6a makes each a static error.
"""

from __future__ import annotations

import pytest

from chatml.check import check_source

ITEMS: list[tuple[int, str, str | None]] = [
    (1, "let x = 1.5e3", "Unknown variable 'e3'"),
    (12, "let x = -1.5", "Cannot unify float with int"),
    (12, "print(-.1.5)", None),
    (13, "print(if true then 1 else 2; 3)", None),
    (16, "let m = [[1, 2], [3, 4]] print(m[1][0])", None),
    (17, "let r = ref(1) r := !r + 1 print(!r)", None),
    (18, "let a = ref(1) print(ref(1) == a)", "Cannot unify int with ref(int)"),
    (24, "let f x = x let y = f\n(print(1))", None),
    (25, "print(1)\n-1", "Cannot unify unit with int"),
    (26, "print(match 1 with | 1 -> match 2 with | 2 -> 20 | _ -> 0 | _ -> 5)",
     "Redundant match arm '_': previous catch-all pattern '_' already matches all cases"),
    (26, "print(match 1 with | 1 -> (match 2 with | 2 -> 20 | _ -> 0) | _ -> 5)", None),
    (27, 'let id x = x print(id(1)) print(id("s"))', None),
    (28, "let r = ref(fun x -> x) in r := (fun x -> x + 1); (!r)(true)", "Cannot unify"),
    (29, 'let b = { f = fun x -> x } print(b.f(1)) print(b.f("s"))', None),
    (30, 'let mk () = ref(fun x -> x) let r1 = mk() r1 := (fun x -> x + 1) let r2 = mk() '
         'print((!r2)("ok"))', None),
    (31, 'let get p = p.name print(get({ name = "a"; age = 1 }))', None),
    (32, 'let p = { name = "A" } print(p.age)', "Row does not contain label 'age'"),
    (33, 'let p = { age = 1 } let q = { p with age = "old" } print(q.age ++ "!")', None),
    (34, "let q = { { a = 1 } with b = 2 } print(q.a + q.b)", None),
    (35, "let m b st = if b then st else { st with running = true } "
         "print(m(true, { idx = 0 }).running)", "Row does not contain label 'running'"),
    (36, "let m b st = if b then { st with r = 1 } else { st with r = 2 } "
         "print(m(true, { i = 0 }).r)", None),
    (37, "let r = if true then { a = 1 } else { b = 2 } print(r)", None),
    (37, "let r = if true then { a = 1 } else { b = 2 } print(r.a)",
     "Row does not contain label 'a'"),
    (38, 'let r = if true then { a = 1 } else { a = "x" }', "Cannot unify int with string"),
    (39, 'print([1, "two"])', "Cannot unify string with int"),
    (40, "print(1.0 + 2.0)", "Cannot unify float with int"),
    (41, "let f = 3 print(f(1))", "Cannot unify int with (int -> '"),
    (42, "let f () = 1 print(f(()))", "Function arity mismatch"),
    (42, "print(1, 2)", "Function arity mismatch"),
    (43, "let f v = match v with | `A -> 1 | `B -> 2 print(f(`C))",
     "Row does not contain label 'C'"),
    (44, "let f v = match v with | `A -> 1 | _ -> 2 print(f(`C))", None),
    (45, "let xs = [`A, `B(1)] print(xs)", None),
    (46, "let f v = match v with | `Some(x) -> x print(f(`Some(4)))", None),
    (46, "let f v = match v with | `Some(x) -> x print(f(`Some(4))) f(`None)",
     "Row does not contain label 'None'"),
    (47, "print([1] == [1])", "Equality is not supported for arrays"),
    (48, "let f x = x print(f == f)", "Equality is not supported for functions"),
    (49, "let a = ref(1) print(a == a)", "Equality is not supported for refs"),
    (50, "print(Task.pure(1) == Task.pure(1))", "Equality is not supported for Task values"),
    (51, "print(`Some([1]) == `None)", "Equality is not supported for arrays"),
    (52, "let eq a b = a == b let f x = x print(eq(f, f))", None),
    (53, 'print({ a = 1; b = "x" } == { b = "x"; a = 1 })', None),
    (54, "print(match true with | true -> 1)",
     "Non-exhaustive boolean match: missing case 'false'"),
    (55, "print(match 1 with | 0 -> 0)", "Non-exhaustive match on int: add '_' arm"),
    (56, 'print(match "s" with | "s" -> 1)', "Non-exhaustive match on string: add '_' arm"),
    (57, "print(match () with | () -> 1)", None),
    (58, "print(match 1 with | _ -> 0 | 1 -> 1)",
     "Redundant match arm '1': previous catch-all pattern '_' already matches all cases"),
    (59, "print(match 1 with | 0 -> 0 | 0 -> 1 | _ -> 2)", "Duplicate match arm for pattern '0'"),
    (60, "print(match true with | true -> 1 | false -> 0 | _ -> 2)",
     "Redundant match arm '_': previous arms already cover boolean cases 'true' and 'false'"),
    (61, "print(match `Some(1) with | `Some(1) -> 1)",
     "Non-exhaustive variant match: missing case '`Some(_)'"),
    (62, "print(match `P(1, 2) with | `P(x, x) -> x | _ -> 0)", "Duplicate pattern binder 'x'"),
    (63, "print(match { a = 1; b = 2 } with | { a = x } -> x)", "Row does not contain label 'b'"),
    (64, "print(match { a = 1; b = 2 } with | { a = x; _ } -> x)", None),
    (65, "let c v = match v with | `A -> 1 | `B -> 2 "
         "let g v = c(v) + (match v with | `A -> 1 | `B -> 2 | _ -> 3)",
     "Redundant match arm '_': previous arms already cover all variant constructors"),
    (66, 'print(match 1 with | 1 -> "a" | _ -> 2)', "Cannot unify string with int"),
    (67, "let rec x = 1", "Recursive binding 'x' must be a function"),
    (68, "let bad x = x(x)", "Recursive types"),
    (69, "let rec ev e = match e with | `Int(n) -> n | `Add(a, b) -> ev(a) + ev(b) "
         "print(ev(`Add(`Int(1), `Int(2))))", None),
    (70, "let rec ev e = match e with | `Int(n) -> n | `Add(a, b) -> ev(a) + ev(b) "
         "print(ev(`Sub(`Int(1), `Int(2))))", "Row does not contain label 'Sub'"),
    (71, "type bad = bad", "Unguarded recursive type variable 'bad'"),
    (72, "type t = int type t = string", "Duplicate type declaration 't'"),
    (73, "type int = string", "Cannot redefine primitive type 'int'"),
    (73, "type json = int", "Duplicate type declaration 'json'"),
    (74, "let x : missing = 1", "Unknown type 'missing'"),
    (74, "type t = int list", "Unknown type constructor 'list'"),
    (75, "let f : int -> int = fun x y -> x",
     "Annotated function expects 1 parameter(s), but lambda has 2"),
    (76, "let f : unit -> int = fun () -> 1 print(f())", None),
    (77, "let f : { a : int } -> int = fun r -> r.a print(f({ a = 1; b = 2 }))",
     "Row does not contain label 'b'"),
    (78, "type e = [ `Int(int) | `Add(e, e) ] let rec ev : e -> int = fun x -> match x with "
         "| `Int(n) -> n | `Add(a, b) -> ev(a) + ev(b) print(ev(`Add(`Int(2), `Int(3))))", None),
    (79, "type e = [ `Int(int) | `Add(e, e) ] let bad : e = 0", "mu e."),
    (80, "let x = 1 module M = struct let x = 2 end open M",
     "open M would shadow existing binding 'x'"),
    (81, "module M = struct let y = 1 end open M print(y)", None),
    (82, "open Array", "open Array would shadow existing binding 'length'"),
    (83, "let x = 1 module M = struct let y = x end print(M.y)", None),
    (83, "let x = 1 module M = struct let y = x end print(M.x)", "Row does not contain label 'x'"),
    (84, "module N = struct let a = 1 end module M = struct open N let b = a end print(M.b)",
     None),
    (84, "module N = struct let a = 1 end module M = struct open N let b = a end print(M.a)",
     "Row does not contain label 'a'"),
    (85, "module M = struct let id x = x let call n = M.id(n) end print(M.call(7))", None),
    (86, "module M = struct let z = 1 let a = 2 end print(record_keys(M))", None),
    (87, "let t = let* x = Task.pure(1) in Task.pure(x + 1) print(t)", None),
    (88, "let t = let+ x = Task.pure(2) in x * 10 print(t)", None),
    (89, "let t = let* () = Task.pure(5) in Task.pure(0)", None),
    (90, 'print(Task.fail("x"))', None),
    (96, "let x = 1 let f () = x let x = 2 print(f())", None),
    (97, "let rec loop n = if n == 0 then 0 else loop(n - 1) print(loop(100000))", None),
    (99, 'print({ b = 2; a = "x" }) print({})', None),
    (100, "print(()) print(ref(1)) print(fun x -> x) print(print) print(String)", None),
    (102, 'let r = ref("a") print(swap_ref(r, "b")) print(!r)', None),
    (103, "print(record_keys({ z = 1; a = 2; _b = 3 }))", None),
    (104, 'print(variant_tag(`Some(1))) print(string_length("héllo"))', None),
    (105, "let a = [1] let b = a b[0] <- 9 print(a[0])", None),
    (106, 'let f () = print("a") let g () = print("b") let run () = f(); g() run()', None),
    (111, "print(1) print(1 / 0) print(2)", None),
    (112, 'let x = 1 print(x + "bad") print("never")', "Cannot unify string with int"),
]


@pytest.mark.parametrize(("item", "program", "expected"), ITEMS,
                         ids=[f"item{n}-{i}" for i, (n, _, _) in enumerate(ITEMS)])
def test_checklist_item(item: int, program: str, expected: str | None) -> None:
    result = check_source(program)
    errors = [d.message for d in result.diagnostics if d.is_error]
    if expected is None:
        assert errors == []
    else:
        assert any(expected in message for message in errors), errors


# DECISIONS 6a: well-typed programs do not fail at run time in the ways the reference lets
# them. Each reference run-time failure below is a static error here.

DECISION_6A: list[tuple[int, str, str, str]] = [
    (107, "module N = struct let a = 1 let b = N.a end", "chatml.module_self_reference",
     "Module N is read while it is still being initialised"),
    (108, 'let f p = match p with | { name = n } -> n print(f({ name = "x"; id = 1 }))',
     "chatml.missing_label", "Row does not contain label 'id'"),
    (109, "print(match `A(1, 2) with | `A(x) -> 1 | _ -> 2)", "chatml.payload_arity_mismatch",
     "Tuple arity mismatch"),
    (110, "module M = struct let x = 1 end let r = { M with x = 2 }", "chatml.module_as_record",
     "Module M is used where a record is expected"),
]


@pytest.mark.parametrize(("item", "program", "code", "fragment"), DECISION_6A,
                         ids=[f"item{n}" for n, *_ in DECISION_6A])
def test_decision_6a_runtime_failure_is_a_static_error(item: int, program: str, code: str,
                                                       fragment: str) -> None:
    result = check_source(program)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [d.code for d in errors] == [code]
    assert fragment in errors[0].message
    assert errors[0].phase == "type"


def test_decision_6a_record_pattern_on_a_module_is_a_static_error() -> None:
    program = "module M = struct let x = 1 end let v = match M with | { x = a; _ } -> a"
    errors = [d for d in check_source(program).diagnostics if d.is_error]
    assert [d.code for d in errors] == ["chatml.module_as_record"]
    assert "record pattern" in (errors[0].hint or "")
