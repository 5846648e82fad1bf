"""What an editor shows about ChatMD markup: every tag of the closed vocabulary.

For each of the 18 core tags and the 64 nested shell tags (:mod:`chatmd.vocabulary`):
a one-line description, the attributes with a one-line description and their
enumerated values (empty when free-form), and the tags allowed as children.
The data restates the specifications (chatmd-language §4, chatmd-shell §3-§5);
``tests/runtime/lsp/test_vocabulary_table.py`` keeps it in step with the vocabulary.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["MESSAGE_LIKE", "TOP_LEVEL", "Attr", "Tag", "TAGS", "children_of"]

BOOL = ("true", "false")
MERGE = ("append", "replace")
WHEN = ("macos", "linux", "windows", "any")
FAILURE = ("deny", "error", "no_match", "unknown", "keep")
LIFECYCLE = ("invocation", "session", "runtime")
EFFECTS = ("read_path", "write_path", "network", "child_processes", "arbitrary_code",
           "privilege_change", "unknown")
SCRIPT_KINDS = ("moderator", "shell_matcher", "shell_reviewer", "shell_before_interceptor",
                "shell_after_interceptor", "shell_effect_analyzer", "shell_audit_filter")
ROLES = ("user", "assistant", "system", "developer", "tool")


class Attr(NamedTuple):
    """One attribute: what it means and, for an enumeration, its values."""

    description: str
    values: tuple[str, ...] = ()


class Tag(NamedTuple):
    """One tag: what it is, its attributes, the tags it may contain."""

    description: str
    attributes: dict[str, Attr]
    children: tuple[str, ...] = ()


def _a(description: str, *values: str) -> Attr:
    return Attr(description, tuple(values))


_MESSAGE_CHILDREN = ("doc", "img", "agent", "import")
_MESSAGE_ATTRIBUTES = {
    "id": _a("provider item id"),
    "status": _a("item status"),
    "name": _a("participant name"),
    "ochat-history-id": _a("canonical history id `<len>:<namespace>:<seq>`"),
}
_HOOK = {
    "executable": _a("path of the hook executable (required)"),
    "sha256": _a("expected SHA-256 of the executable"),
    "runtime": _a("the worker shell runtime that launches the hook (required)"),
    "protocol": _a("hook protocol", "shell-hook-json-v1"),
    "timeout": _a("hook timeout (duration)"),
    "max_input": _a("largest input sent to the hook (bytes, default 1 MiB)"),
    "max_output": _a("largest output read from the hook (bytes, default 256 KiB)"),
}
_MATCHERS = ("any_command", "program", "basename", "resolved_path", "trusted_executable",
             "program_regex", "argv_prefix", "argument", "argument_contains", "effect",
             "no_unknown_effects", "raw_shell", "chatml_match", "all", "any", "not")
_TEMPLATE = ("arg", "cwd_value", "target_executable", "command_argv", "read_roots",
             "write_roots", "network_flag", "resource_limit_args")
_SECTIONS = ("capabilities", "resolver", "environment", "limits", "backends", "policy",
             "approvals", "reviewers", "interceptors", "effect_analysis", "secrets", "audit")


def _message(role: str) -> Tag:
    return Tag(f"a {role} message; its body is the message content",
               dict(_MESSAGE_ATTRIBUTES), _MESSAGE_CHILDREN)


_CORE: dict[str, Tag] = {
    "msg": Tag("a message with an explicit role", {
        "role": _a("the message role (required)", *ROLES),
        "tool_call_id": _a("the call a tool message answers"),
        "type": _a("item type"),
        **_MESSAGE_ATTRIBUTES}, _MESSAGE_CHILDREN),
    "user": _message("user"),
    "assistant": _message("assistant"),
    "system": _message("system"),
    "developer": _message("developer"),
    "agent": Tag("runs another prompt as a nested agent; the body is its extra user input", {
        "src": _a("path or URL of the agent prompt (first occurrence wins)"),
        "local": _a("flag: read src from the local file system")}, _MESSAGE_CHILDREN),
    "doc": Tag("includes a document's text in the message", {
        "src": _a("path or URL of the document"),
        "local": _a("flag: read src from the local file system"),
        "strip": _a("flag: extract readable text from HTML"),
        "markdown": _a("flag: convert HTML to Markdown")}),
    "img": Tag("includes an image in the message", {
        "src": _a("path or URL of the image"),
        "local": _a("flag: read src locally and send it as a data: URI")}),
    "import": Tag("splices another ChatMD file here", {
        "src": _a("the file to import, relative to this file (required)"),
        "namespace": _a("qualifies the imported ids (`ns:id`)")}),
    "config": Tag("model settings of the prompt (the first <config> wins)", {
        "model": _a("model name"),
        "max_tokens": _a("largest number of output tokens (integer)"),
        "temperature": _a("sampling temperature (float)"),
        "reasoning_effort": _a("reasoning effort", "none", "minimal", "low", "medium", "high"),
        "id": _a("session/runtime id label"),
        "show_tool_call": _a("flag: write tool calls inline in the transcript")}),
    "reasoning": Tag("a reasoning item; its summaries are its <summary> children", {
        "id": _a("reasoning item id (required)"),
        "status": _a("item status"),
        "ochat-history-id": _a("canonical history id")}, ("summary",)),
    "summary": Tag("one reasoning summary text", {
        "type": _a("summary type (default summary_text)", "summary_text")}),
    "tool": Tag("declares a tool the model may call (builtin, read_file, agent, MCP or shell)", {
        "name": _a("tool name"),
        "description": _a("model-facing description"),
        "command": _a("a compact shell command line (fixed mode)"),
        "agent": _a("agent prompt run as this tool"),
        "local": _a("flag: the agent prompt is a local file"),
        "mcp_server": _a("MCP server URI"),
        "include": _a("comma-separated MCP tool names"),
        "strict": _a("flag: strict MCP schemas"),
        "type": _a("`shell` for a long-form shell tool", "shell"),
        "mode": _a("shell tool mode", "fixed", "structured", "chain", "raw", "script"),
        "runtime": _a("the <shell_access> runtime the tool runs in"),
        "executable_ref": _a("an executable alias of the runtime (fixed mode)"),
        "executable": _a("raw mode: shell executable path; script mode: run directly (bool)"),
        "script": _a("script mode: the script file"),
        "interpreter": _a("script mode: interpreter path"),
        "arguments_before_script": _a("raw mode: JSON list of arguments (default [\"-c\"])"),
        "fixed_arguments": _a("script mode: JSON list of fixed arguments"),
        "verification": _a("script mode: source verification", "sha256"),
        "max_source_bytes": _a("script mode: largest script size (positive integer)"),
        "stdin": _a("whether the model may pass stdin", "none", "optional", "required"),
        "rationale": _a("whether the model explains the call", "none", "optional", "required"),
        "result": _a("what the model gets back", "combined", "stdout", "structured"),
        "stream": _a("output processing", "finalized", "sanitized"),
        "nonzero": _a("a nonzero exit status is", "result", "error")},
        ("command", "arguments", "read")),
    "tool_call": Tag("a tool call made by the assistant; the body is its arguments", {
        "function_name": _a("the called tool (required)"),
        "tool_call_id": _a("call id (required)"),
        "id": _a("provider item id"),
        "type": _a("call type", "custom_tool_call")}, _MESSAGE_CHILDREN),
    "tool_response": Tag("the output of a tool call", {
        "tool_call_id": _a("the call this answers (required)"),
        "id": _a("item id (recorded, not sent)"),
        "type": _a("output type", "custom_tool_call")}, _MESSAGE_CHILDREN),
    "script": Tag("a host-managed ChatML script (moderator or shell hook)", {
        "id": _a("script id (required for shell kinds; moderators default to main)"),
        "language": _a("script language (required)", "chatml"),
        "kind": _a("what the script is for (required)", *SCRIPT_KINDS),
        "src": _a("load the script from this file instead of the body"),
        "wall_time": _a("wall-clock limit (duration, default 2s)"),
        "fuel": _a("instruction budget (positive integer, default 100000)"),
        "max_tasks": _a("largest number of tasks (default 256)"),
        "max_value": _a("largest value size (bytes, default 256KiB)"),
        "max_output": _a("largest output (bytes, default 16KiB)"),
        "max_array_items": _a("largest array (default 256)"),
        "max_depth": _a("deepest nesting (default 32)")}),
    "shell_access": Tag("a shell runtime: capabilities, policy, sandbox and hooks of shell tools", {
        "id": _a("runtime id (required)"),
        "extends": _a("parent runtime: a declared runtime or builtin:NAME[@VER]"),
        "cwd": _a("working directory of every command (path)"),
        "pipefail": _a("pipeline status is the last failing stage", *BOOL)}, _SECTIONS),
    "moderator_runtime": Tag("binds the moderator's Process.run to a shell runtime", {
        "shell_runtime": _a("the runtime id (required)")}),
}

_SHELL: dict[str, Tag] = {
    "capabilities": Tag("ceilings for the effects commands may have", {
        "sandbox": _a("sandbox requirement", "required", "preferred", "direct_unsafe"),
        "network": _a("network access", *BOOL),
        "child_processes": _a("spawning child processes", *BOOL),
        "arbitrary_code": _a("running arbitrary code", *BOOL),
        "privilege_change": _a("changing privileges", *BOOL),
        "merge": _a("how roots combine with the parent's", *MERGE)}, ("read", "write")),
    "read": Tag("a readable root (or, in a read_file tool, a root the tool may read)", {
        "path": _a("the root (path expression)"),
        "path_env": _a("environment variable holding the root"),
        "optional": _a("a missing path_env is not an error", *BOOL),
        "id": _a("read_file root id"), "description": _a("read_file root description")}),
    "write": Tag("a writable root (also readable)", {
        "path": _a("the root (path expression)"),
        "path_env": _a("environment variable holding the root"),
        "optional": _a("a missing path_env is not an error", *BOOL)}),
    "resolver": Tag("how program names resolve to executables", {
        "allow_relative_search_path": _a("allow relative search paths", *BOOL),
        "merge": _a("how entries combine with the parent's", *MERGE)},
        ("search_path", "trusted_root", "executable")),
    "search_path": Tag("a directory searched for programs, in order", {
        "path": _a("the directory (path expression)")}),
    "trusted_root": Tag("a directory whose executables count as trusted", {
        "path": _a("the directory (path expression)")}),
    "executable": Tag("a named executable alias", {
        "id": _a("alias id"), "path": _a("executable path"),
        "sha256": _a("expected SHA-256"), "trusted": _a("counts as trusted", *BOOL),
        "override": _a("replace the parent's alias of the same id", *BOOL)}),
    "environment": Tag("the environment of commands", {
        "inherit": _a("what is inherited from the host", "none", "safe", "selected",
                      "all_sanitized", "raw"),
        "merge": _a("how operations combine with the parent's", *MERGE)},
        ("set", "pass", "unset", "unset_prefix", "path", "path_env")),
    "set": Tag("sets a variable", {"name": _a("variable name"), "value": _a("its value")}),
    "pass": Tag("copies a variable from the host environment", {
        "name": _a("variable name"), "required": _a("missing is an error", *BOOL),
        "secret": _a("register the value for redaction", *BOOL)}),
    "unset": Tag("removes a variable", {"name": _a("variable name")}),
    "unset_prefix": Tag("removes every variable with a prefix", {"value": _a("the prefix")}),
    "path": Tag("adds a directory to PATH", {
        "prepend": _a("directory put first"), "append": _a("directory put last")}),
    "path_env": Tag("adds a host variable's value to PATH", {
        "name": _a("variable name"), "suffix": _a("sub-path joined to the value"),
        "position": _a("where it goes", "prepend", "append"),
        "required": _a("missing is an error", *BOOL)}),
    "limits": Tag("resource limits of every command", {
        "wall_time": _a("wall-clock limit (duration or none)"),
        "idle_time": _a("limit without output (duration or none)"),
        "max_stdin": _a("largest stdin (bytes)"), "stdout": _a("largest stdout (bytes)"),
        "stderr": _a("largest stderr (bytes)"), "total_output": _a("largest output (bytes)"),
        "cpu_time": _a("CPU time limit (duration)"), "memory": _a("memory limit (bytes)"),
        "file_size": _a("largest file written (bytes)"),
        "open_files": _a("most open files (integer)")}),
    "backends": Tag("how commands are confined", {
        "accept_declared_confinement": _a("trust external backends' declared confinement",
                                          *BOOL),
        "merge": _a("how backends combine with the parent's", *MERGE)},
        ("seatbelt", "bubblewrap", "direct", "external_backend")),
    "seatbelt": Tag("macOS sandbox-exec backend", {
        "id": _a("backend id"), "when": _a("platform", *WHEN),
        "executable": _a("sandbox-exec path"),
        "allow_system_reads": _a("allow system reads", *BOOL)}),
    "bubblewrap": Tag("Linux bwrap backend", {
        "id": _a("backend id"), "when": _a("platform", *WHEN), "executable": _a("bwrap path"),
        "private_tmp": _a("private /tmp", *BOOL), "proc": _a("mount /proc", *BOOL),
        "dev": _a("/dev setup (default minimal)")}),
    "direct": Tag("runs commands unconfined", {
        "id": _a("backend id"), "when": _a("platform", *WHEN)}),
    "external_backend": Tag("a confining launcher given as an argv template", {
        "id": _a("backend id"), "when": _a("platform", *WHEN),
        "executable": _a("launcher path (required)"), "sha256": _a("expected SHA-256"),
        "confinement": _a("confinement claim", "verified", "declared", "none")}, _TEMPLATE),
    "arg": Tag("one literal argv element", {"value": _a("the argument")}),
    "cwd_value": Tag("template atom: the command's working directory", {}),
    "target_executable": Tag("template atom: the canonical target executable path", {}),
    "command_argv": Tag("template atom: the target argv (exactly once)", {}),
    "read_roots": Tag("template atom: flag,root pairs for read roots", {
        "flag": _a("the flag before each root")}),
    "write_roots": Tag("template atom: flag,root pairs for write roots", {
        "flag": _a("the flag before each root")}),
    "network_flag": Tag("template atom: emitted only when network is granted", {
        "value": _a("the flag")}),
    "resource_limit_args": Tag("template atom: --cpu/--memory/--file-size/--open-files", {}),
    "policy": Tag("which commands are allowed, asked about or denied", {
        "default": _a("decision when no rule matches", "allow", "ask", "deny"),
        "merge": _a("how rules combine with the parent's", *MERGE)}, ("rule",)),
    "rule": Tag("a policy rule with exactly one matcher", {
        "id": _a("rule id"), "action": _a("decision", "allow", "ask", "deny"),
        "override": _a("replace the parent's rule of the same id", *BOOL)}, _MATCHERS),
    "all": Tag("matcher: every child matches", {}, _MATCHERS),
    "any": Tag("matcher: some child matches", {}, _MATCHERS),
    "not": Tag("matcher: its one child does not match", {}, _MATCHERS),
    "any_command": Tag("matcher: always", {}),
    "program": Tag("matcher: the requested program text equals value", {
        "value": _a("program text")}),
    "basename": Tag("matcher: the requested program's basename equals value", {
        "value": _a("basename")}),
    "resolved_path": Tag("matcher: the canonical executable path equals value", {
        "value": _a("path")}),
    "trusted_executable": Tag("matcher: the resolver marked the executable trusted", {}),
    "program_regex": Tag("matcher: unanchored regex search on the requested program", {
        "value": _a("regular expression")}),
    "argv_prefix": Tag("matcher: argv starts with the list", {
        "values": _a("comma-separated argv prefix")}),
    "argument": Tag("matcher: some argument equals value", {"value": _a("argument")}),
    "argument_contains": Tag("matcher: some argument contains value", {
        "value": _a("substring")}),
    "effect": Tag("matcher: an inferred effect of this kind exists", {
        "name": _a("effect kind", *EFFECTS), "under": _a("restrict paths to this root")}),
    "no_unknown_effects": Tag("matcher: no unknown effect was inferred", {}),
    "raw_shell": Tag("matcher: the request is raw shell source", {}),
    "chatml_match": Tag("matcher: a ChatML shell_matcher script decides", {
        "script": _a("the shell_matcher script id"),
        "function": _a("the function called (default match_command)"),
        "failure": _a("outcome when the script fails", *FAILURE)}),
    "approvals": Tag("how ask decisions are approved", {
        "provider": _a("approval provider", "ui", "none"),
        "unavailable": _a("when no approver is available", "deny", "error"),
        "scopes": _a("comma-separated approval scopes: once, exact_session, prefix_session, "
                     "durable_exact"),
        "durable": _a("approvals may persist", *BOOL)}),
    "reviewers": Tag("reviewers consulted for ask decisions, in order", {
        "strategy": _a("review strategy", "first_terminal"),
        "merge": _a("how reviewers combine with the parent's", *MERGE)}, ("reviewer",)),
    "reviewer": Tag("one reviewer (ui, ChatML script, model agent or executable hook)", {
        "id": _a("reviewer id (required)"),
        "kind": _a("reviewer kind (required)", "ui", "chatml", "model", "executable"),
        "script": _a("chatml: the shell_reviewer script id"),
        "lifecycle": _a("chatml: script lifetime", *LIFECYCLE),
        "agent": _a("model: the agent tool name"), "model": _a("model: model name"),
        "failure": _a("outcome when the reviewer fails", *FAILURE), **_HOOK}),
    "interceptors": Tag("hooks run before or after commands", {
        "merge": _a("how interceptors combine with the parent's", *MERGE)}, ("interceptor",)),
    "interceptor": Tag("one before/after hook (ChatML script or executable)", {
        "id": _a("interceptor id (required)"),
        "phase": _a("when it runs (required)", "before", "after"),
        "script": _a("the ChatML interceptor script id"),
        "lifecycle": _a("script lifetime", *LIFECYCLE),
        "failure": _a("outcome when the hook fails", *FAILURE), **_HOOK}, ("match",)),
    "match": Tag("the one matcher selecting the commands an interceptor sees", {}, _MATCHERS),
    "effect_analysis": Tag("analyzers that infer the effects of commands", {
        "merge": _a("how analyzers combine with the parent's", *MERGE)}, ("analyzer",)),
    "analyzer": Tag("one effect analyzer (ChatML script or executable)", {
        "id": _a("analyzer id (required)"),
        "kind": _a("analyzer kind", "chatml", "executable"),
        "script": _a("the shell_effect_analyzer script id"),
        "lifecycle": _a("script lifetime", *LIFECYCLE),
        "replace": _a("replace the builtin analysis", *BOOL),
        "failure": _a("outcome when the analyzer fails", *FAILURE), **_HOOK}),
    "secrets": Tag("values redacted from output", {
        "replacement": _a("replacement text (default [REDACTED])"),
        "merge": _a("how sources combine with the parent's", *MERGE)},
        ("from_env", "from_file", "literal")),
    "from_env": Tag("a secret from a host environment variable", {
        "name": _a("variable name"), "optional": _a("missing is not an error", *BOOL)}),
    "from_file": Tag("a secret read from a file", {
        "path": _a("file path"), "optional": _a("missing is not an error", *BOOL),
        "strip": _a("strip surrounding whitespace", *BOOL)}),
    "literal": Tag("a literal secret value (never in the manifest)", {
        "value": _a("the secret")}),
    "audit": Tag("where command audit records go", {
        "format": _a("record format (required)", "none", "stderr", "jsonl", "session"),
        "path": _a("jsonl: the log file"),
        "content": _a("what is recorded", "metadata", "redacted", "full"),
        "failure": _a("when auditing fails", "continue", "deny_start", "terminate")},
        ("filter",)),
    "filter": Tag("an audit filter hook (ChatML script or executable)", {
        "script": _a("the shell_audit_filter script id"),
        "lifecycle": _a("script lifetime", *LIFECYCLE), **_HOOK}),
    "command": Tag("fixed mode: the command a shell tool runs", {
        "program": _a("the program"), "executable_ref": _a("an executable alias id")},
        ("arg", "secret_arg", "path_arg")),
    "arguments": Tag("fixed mode: the arguments the model may add", {
        "mode": _a("whether the model passes arguments (required)", "none", "optional",
                   "required"),
        "min_count": _a("fewest arguments"), "max_count": _a("most arguments"),
        "max_item_bytes": _a("largest argument (bytes)")}),
    "secret_arg": Tag("an argv element taken from the runtime environment at call time", {
        "env": _a("variable name"), "prefix": _a("text put before the value")}),
    "path_arg": Tag("an argv element resolved as a path at call time", {
        "path": _a("the path"), "base": _a("path variable it is relative to")}),
}

#: Every tag of the vocabulary (core and shell).
TAGS: dict[str, Tag] = {**_CORE, **_SHELL}

#: Tags meaningful at the top level of a prompt.
TOP_LEVEL: tuple[str, ...] = ("config", "tool", "script", "shell_access", "moderator_runtime",
                              "import", "system", "developer", "user", "assistant", "msg",
                              "tool_call", "tool_response", "reasoning")

#: Top-level items of the conversation.
MESSAGE_LIKE = frozenset({"system", "developer", "user", "assistant", "msg", "tool_call",
                          "tool_response", "reasoning"})


def children_of(parent: str | None) -> tuple[str, ...]:
    """The tags allowed inside ``parent`` (the top level when None)."""
    if parent is None:
        return TOP_LEVEL
    tag = TAGS.get(parent)
    return () if tag is None else tag.children
