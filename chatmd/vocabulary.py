"""The closed ChatMD tag vocabulary and the character classes the lexer uses.

Core tags are recognised everywhere; the nested shell vocabulary only inside a
*structured scope* (``<shell_access>``, ``<tool type="shell">``, and
``<tool name="read_file">`` / ``get_contents``). Any other name is unknown and
lexes as literal text.
"""

from __future__ import annotations

CORE_TAGS: frozenset[str] = frozenset(
    ["msg", "user", "assistant", "system", "developer", "agent", "doc", "img", "import", "config", "reasoning", "summary", "tool", "tool_call", "tool_response", "script", "shell_access", "moderator_runtime"]
)

SHELL_TAGS: frozenset[str] = frozenset(
    ["capabilities", "read", "write", "resolver", "search_path", "trusted_root", "executable", "environment", "set", "pass", "unset", "unset_prefix", "path", "path_env", "limits", "backends", "seatbelt", "bubblewrap", "direct", "external_backend", "cwd_value", "target_executable", "command_argv", "read_roots", "write_roots", "network_flag", "resource_limit_args", "policy", "rule", "all", "any", "not", "any_command", "program", "basename", "resolved_path", "trusted_executable", "program_regex", "argv_prefix", "argument", "argument_contains", "effect", "no_unknown_effects", "raw_shell", "chatml_match", "approvals", "reviewers", "reviewer", "interceptors", "interceptor", "match", "effect_analysis", "analyzer", "secrets", "from_env", "from_file", "literal", "audit", "filter", "command", "arg", "secret_arg", "path_arg", "arguments"]
)

ALL_TAGS: frozenset[str] = CORE_TAGS | SHELL_TAGS

#: Whitespace for everything but the RAW-opener rule (no Unicode spaces).
WS = " \t\n\r\x0b\x0c"
#: Whitespace that may precede a ``RAW|`` opener and be dropped.
WS_RAW = " \t\r\n"

NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")

#: Tags whose children (messages, helpers) may contain expanding ``<import>``.
MESSAGE_TAGS = frozenset({"user", "assistant", "system", "developer", "msg"})

READ_FILE_TOOL_NAMES = frozenset({"read_file", "get_contents"})


def is_blank(text: str) -> bool:
    """True when ``text`` is empty or made only of :data:`WS` characters."""
    return not text.strip(WS)
