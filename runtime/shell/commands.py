"""``chatmdc shell exec`` and ``chatmdc shell audit verify``: the command-line side.

Importing this module is cheap (``chatmdc`` imports it to build its parser);
the executor is imported when a command runs.

``exec PROMPT TOOL --args JSON [--approvals ask|allow|deny] [--workspace DIR]
[--audit FILE]`` runs one tool call exactly as the model would and prints what the
model would receive. Exit status: 0 the command ran (whatever its status),
1 the request was refused or invalid (or the prompt's shell layer cannot be
instantiated), 2 usage errors (unknown tool, bad flags, unreadable prompt).

``audit verify FILE`` checks the hash chain of an audit log: 0 intact,
1 a broken link (its line is printed), 2 the file cannot be read.
``keygen`` and ``sign`` (manifest signatures) live in :mod:`runtime.shell.sign_command`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runtime.shell.approvals import ApprovalAnswer, ApprovalRequest
    from runtime.shell.authorization import ManifestSummary

EXIT_RAN = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


def terminal_reviewer(request: ApprovalRequest) -> bool | ApprovalAnswer:
    """Ask on the terminal (standard error / standard input)."""
    from runtime.shell.approvals import ApprovalAnswer

    lines = [f"shell runtime {request.runtime_id} asks to run ({request.policy_reason}):",
             f"  {request.command}"]
    if request.rationale:
        lines.append(f"  rationale: {request.rationale}")
    scoped = [s for s in request.scopes if s != "once"]
    choices = "y = once, n = deny" + "".join(f", {i + 1} = {s}" for i, s in enumerate(scoped))
    sys.stderr.write("\n".join(lines) + f"\napprove? [{choices}] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer in ("y", "yes"):
        return True
    if answer.isdigit() and 0 < int(answer) <= len(scoped):
        return ApprovalAnswer("approve", scope=scoped[int(answer) - 1])
    return False


def terminal_authorizer(summary: ManifestSummary) -> bool:
    """Show the manifest summary on the terminal and ask whether to authorize it."""
    sys.stderr.write(summary.render() + "\nauthorize this shell manifest? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def run_exec(args: argparse.Namespace) -> int:
    from runtime.shell.errors import InstantiationError
    from runtime.shell.host import open_shell

    if not Path(args.prompt).is_file():
        sys.stderr.write(f"chatmdc: cannot read {args.prompt}\n")
        return EXIT_USAGE
    interactive = args.approvals == "ask" and sys.stdin.isatty()
    try:
        session = open_shell(args.prompt, workspace=Path(args.workspace or "."),
                             approvals=args.approvals,
                             ask=terminal_reviewer if interactive else None,
                             audit_path=Path(args.audit) if args.audit else None,
                             authorize=terminal_authorizer if interactive else None)
    except InstantiationError as error:
        sys.stderr.write(error.render() + "\n")
        return EXIT_REFUSED
    if args.tool not in session.tools:
        known = ", ".join(sorted(session.tools)) or "none"
        sys.stderr.write(f"chatmdc: no shell tool {args.tool} (shell tools: {known})\n")
        return EXIT_USAGE
    outcome = session.call(args.tool, args.args)
    sys.stdout.write(outcome.text)
    if outcome.text and not outcome.text.endswith("\n"):
        sys.stdout.write("\n")
    return EXIT_RAN if outcome.ran else EXIT_REFUSED


def run_verify(args: argparse.Namespace) -> int:
    from runtime.shell.audit import verify

    try:
        report = verify(args.file, continuation=args.continuation)
    except OSError as error:
        sys.stderr.write(f"chatmdc: cannot read {args.file}: {error.strerror}\n")
        return EXIT_USAGE
    if report.broken_line is not None:
        sys.stdout.write(f"{args.file}:{report.broken_line}: broken link: {report.problem} "
                         f"({report.records} records verified before it)\n")
        return EXIT_REFUSED
    sys.stdout.write(f"{args.file}: {report.records} records, chain intact\n")
    return EXIT_RAN


def add_exec_commands(actions: argparse._SubParsersAction) -> None:
    """Add ``exec`` and ``audit verify`` to the ``chatmdc shell`` subcommands."""
    run = actions.add_parser("exec", help="run one shell tool call as the model would and "
                             "print what the model would receive")
    run.add_argument("prompt", metavar="PROMPT")
    run.add_argument("tool", metavar="TOOL")
    run.add_argument("--args", default="{}", metavar="JSON",
                     help="the call's JSON arguments (default {})")
    run.add_argument("--approvals", choices=("ask", "allow", "deny"), default="ask",
                     help="answer approval requests: ask on the terminal (default), "
                     "approve once, or deny")
    run.add_argument("--workspace", metavar="DIR", help="the ${workspace} folder (default .)")
    run.add_argument("--audit", metavar="FILE",
                     help="the session audit file (for runtimes with <audit format=\"session\">)")
    run.set_defaults(run=run_exec)
    audit = actions.add_parser("audit", help="audit log tools")
    audit_actions = audit.add_subparsers(dest="audit_command", required=True)
    check = audit_actions.add_parser("verify", help="verify an audit file's hash chain and "
                                     "report the first broken link")
    check.add_argument("file", metavar="FILE")
    check.add_argument("--continuation", action="store_true",
                       help="accept a file whose first record continues a chain from a rotated "
                       "file that is no longer available")
    check.set_defaults(run=run_verify)
    from runtime.shell.sign_command import add_sign_commands

    add_sign_commands(actions)
