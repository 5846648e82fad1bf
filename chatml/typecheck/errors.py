"""The catalogue of ChatML type errors: one stable code per kind (spec 4.16).

Every diagnostic of the ``type`` phase carries one of these codes. Messages
keep the reference implementation's wording (conformance tests compare it);
what was expected and what was found, when the message alone does not say
it, goes into the diagnostic's hint.

==============================================  =====================================================
code                                            message (and where it points)
==============================================  =====================================================
``chatml.unknown_variable``                     ``Unknown variable 'x'`` (the variable)
``chatml.type_mismatch``                        ``Cannot unify A with B`` (the expression, or the arm's pattern)
``chatml.arity_mismatch``                       ``Function arity mismatch`` (the application / lambda)
``chatml.missing_label``                        ``Row does not contain label 'l'`` (field access, call, pattern)
``chatml.recursive_type``                       ``Recursive types`` (a cycle through a function/array/ref, e.g. ``x(x)``)
``chatml.recursive_row``                        ``Recursive row types``
``chatml.constructor_mismatch``                 ``Type constructor mismatch`` / ``... arity mismatch``
``chatml.payload_arity_mismatch``               ``Tuple arity mismatch`` (a constructor used with two payload sizes)
``chatml.recursive_type_variable``              ``Recursive type variables do not match`` / ``Cannot unify recursive type variable ...``
``chatml.module_as_record``                     a module used where a plain record is required (DECISIONS 6a, Q10)
``chatml.inexact_record``                       a record that may hold unlisted fields meets a closed pattern relying on its fields (6a)
``chatml.duplicate_field``                      ``Duplicate record field label 'l'`` (the literal)
``chatml.duplicate_update_field``               ``Duplicate record update label 'l'`` (the copy-update)
``chatml.duplicate_pattern_field``              ``Duplicate record pattern label 'l'`` (the arm's pattern)
``chatml.duplicate_binder``                     ``Duplicate pattern binder 'x'`` (the arm's pattern)
``chatml.redundant_arm``                        ``Redundant match arm ...`` (the redundant arm's pattern)
``chatml.duplicate_arm``                        ``Duplicate match arm for pattern 'P'`` (the arm's pattern)
``chatml.non_exhaustive``                       ``Non-exhaustive ...`` (the whole match)
``chatml.equality_unsupported``                 ``Equality is not supported for arrays`` (refs, functions, Task values)
``chatml.recursive_binding``                    ``Recursive binding 'f' must be a function`` (the right-hand side)
``chatml.annotation_arity``                     ``Annotated function expects N parameter(s), but lambda has M``
``chatml.unknown_type``                         ``Unknown type 'n'`` (the type name)
``chatml.unknown_type_constructor``             ``Unknown type constructor 'c'``
``chatml.duplicate_type_field``                 ``Duplicate type record field label 'l'``
``chatml.duplicate_type_case``                  ``Duplicate type variant constructor label 'T'``
``chatml.unguarded_recursive_type``             ``Unguarded recursive type variable 'n'`` (the declaration)
``chatml.primitive_redefinition``               ``Cannot redefine primitive type 'n'``
``chatml.duplicate_type``                       ``Duplicate type declaration 'n'``
``chatml.open_shadows``                         ``open M would shadow existing binding 'x'`` (the ``open``)
``chatml.open_non_module``                      ``Cannot open non-module 'M'`` (the ``open``)
``chatml.module_self_reference``                a module read while it is still being initialised (DECISIONS 6a, Q14)
``chatml.too_deep``                             a program nested too deeply to check
``chatml.contract_missing``                     a host script lacks a required top-level binding
``chatml.contract_type``                        a host script's entry point has the wrong type
``chatml.contract_state``                       a host script's state holds values that cannot be persisted (warning)
==============================================  =====================================================

The reference reports type-declaration and ``open`` errors without a
position; here every diagnostic points at the offending statement.
"""

from __future__ import annotations

PHASE = "type"

UNKNOWN_VARIABLE = "chatml.unknown_variable"
TYPE_MISMATCH = "chatml.type_mismatch"
ARITY_MISMATCH = "chatml.arity_mismatch"
MISSING_LABEL = "chatml.missing_label"
RECURSIVE_TYPE = "chatml.recursive_type"
RECURSIVE_ROW = "chatml.recursive_row"
CONSTRUCTOR_MISMATCH = "chatml.constructor_mismatch"
PAYLOAD_ARITY_MISMATCH = "chatml.payload_arity_mismatch"
RECURSIVE_TYPE_VARIABLE = "chatml.recursive_type_variable"
MODULE_AS_RECORD = "chatml.module_as_record"
INEXACT_RECORD = "chatml.inexact_record"
DUPLICATE_FIELD = "chatml.duplicate_field"
DUPLICATE_UPDATE_FIELD = "chatml.duplicate_update_field"
DUPLICATE_PATTERN_FIELD = "chatml.duplicate_pattern_field"
DUPLICATE_BINDER = "chatml.duplicate_binder"
REDUNDANT_ARM = "chatml.redundant_arm"
DUPLICATE_ARM = "chatml.duplicate_arm"
NON_EXHAUSTIVE = "chatml.non_exhaustive"
EQUALITY_UNSUPPORTED = "chatml.equality_unsupported"
RECURSIVE_BINDING = "chatml.recursive_binding"
ANNOTATION_ARITY = "chatml.annotation_arity"
UNKNOWN_TYPE = "chatml.unknown_type"
UNKNOWN_TYPE_CONSTRUCTOR = "chatml.unknown_type_constructor"
DUPLICATE_TYPE_FIELD = "chatml.duplicate_type_field"
DUPLICATE_TYPE_CASE = "chatml.duplicate_type_case"
UNGUARDED_RECURSIVE_TYPE = "chatml.unguarded_recursive_type"
PRIMITIVE_REDEFINITION = "chatml.primitive_redefinition"
DUPLICATE_TYPE = "chatml.duplicate_type"
OPEN_SHADOWS = "chatml.open_shadows"
OPEN_NON_MODULE = "chatml.open_non_module"
MODULE_SELF_REFERENCE = "chatml.module_self_reference"
TOO_DEEP = "chatml.too_deep"
CONTRACT_MISSING = "chatml.contract_missing"
CONTRACT_TYPE = "chatml.contract_type"
CONTRACT_STATE = "chatml.contract_state"

#: Every code above, for documentation and tests.
ALL_CODES: tuple[str, ...] = tuple(
    value for name, value in list(globals().items())
    if name.isupper() and isinstance(value, str) and value.startswith("chatml.")
)
