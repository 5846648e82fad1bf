"""ChatML scripts of a ChatMD prompt, checked by ``chatmdc check`` (runtime/script_check.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs

from chatcommon.diagnostics import Diagnostic
from chatmd.ast import Element
from chatmd.frontend import check_prompt_text as chatmd_check_prompt_text
from chatmd.ir import ShellRuntime
from runtime.prompt_checks import check_prompt, check_prompt_text, prompt_checks
from runtime.script_check import check_prompt_scripts

MODERATOR = """\
<script language="chatml" kind="moderator" id="main">
let initial_state = { seen = 0 }
let on_event ctx st ev =
  match ev with
  | `Turn_end -> Task.pure({ seen = st.seen + 1 })
  | _ -> Task.pure(st)
</script>

<user>hello</user>
"""


def _chatml(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.code.startswith("chatml.")]


def test_the_script_check_is_one_of_the_prompt_checks() -> None:
    assert check_prompt_scripts in prompt_checks()


def test_a_valid_moderator_script_checks_cleanly() -> None:
    result = check_prompt_text(MODERATOR, name="prompt.md")
    assert _chatml(result.diagnostics) == []
    assert not any(d.is_error for d in result.diagnostics)


def test_inline_script_errors_are_positioned_in_the_prompt() -> None:
    text = MODERATOR.replace("st.seen + 1", 'st.seen + "one"')
    result = check_prompt_text("<!-- a comment -->\n" + text, name="prompt.md")
    (error,) = _chatml(result.diagnostics)
    assert error.code == "chatml.type_mismatch"
    assert (error.file, error.line, error.column) == ("prompt.md", 6, 37)
    assert error.source is not None
    assert error.source.line_text(6).startswith("  | `Turn_end")


def test_scripts_are_checked_against_their_kinds_surface() -> None:
    text = ('<script language="chatml" kind="moderator" id="m">\n'
            'let initial_state = 0\n'
            'let on_event ctx st ev = let* () = Ui.notify("x") in Task.pure(st)\n'
            '</script>\n<user>x</user>\n')
    (error,) = _chatml(check_prompt_text(text, name="p.md").diagnostics)
    assert error.message == "Unknown variable 'Ui'"
    assert (error.line, error.column) == (3, 36)


def test_src_scripts_report_in_their_own_file_with_a_note_on_the_declaration(
        tmp_path: Path) -> None:
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "review.chatml").write_text(
        "let initial_state = 0\nlet review ctx st =\n  let* () = print(ctx.cwd) in\n"
        "  Task.pure(st)\n", encoding="utf-8")
    prompt = tmp_path / "prompt.md"
    prompt.write_text('<script language="chatml" kind="shell_reviewer" id="rev"\n'
                      '        src="hooks/review.chatml"/>\n<user>x</user>\n', encoding="utf-8")
    (error,) = _chatml(check_prompt(prompt).diagnostics)
    assert error.message == "Unknown variable 'print'"
    assert error.file.endswith("review.chatml")
    assert (error.line, error.column) == (3, 13)
    (note,) = error.related
    assert note.message == "script 'rev' is declared here"
    assert (note.file, note.line, note.column) == (str(prompt), 1, 1)


def test_a_moderator_without_entry_points_is_reported() -> None:
    text = ('<script language="chatml" kind="moderator" id="m">\nlet helper x = x\n</script>\n'
            '<user>x</user>\n')
    errors = _chatml(check_prompt_text(text, name="p.md").diagnostics)
    assert [d.code for d in errors] == ["chatml.contract_missing"] * 2
    assert [d.message for d in errors] == [
        "A moderator script must define 'initial_state'",
        "A moderator script must define 'on_event'"]
    assert all((d.line, d.column) == (1, 51) for d in errors)  # where the script text starts


def test_a_moderator_whose_match_drops_host_events_is_reported() -> None:
    text = MODERATOR.replace("  | _ -> Task.pure(st)\n", "")
    (error,) = _chatml(check_prompt_text(text, name="p.md").diagnostics)
    assert error.code == "chatml.contract_type"
    assert error.hint is not None and "does not accept the host event" in error.hint
    assert (error.line, error.column) == (3, 5)


def test_a_shell_matcher_is_checked_against_the_functions_its_runtimes_name() -> None:
    script = ('<script language="chatml" kind="shell_matcher" id="m">\n'
              'let initial_state = 0\n'
              'let is_git ctx st = let* () = Match.yes("git") in Task.pure(st)\n'
              '</script>\n')
    loaded = chatmd_check_prompt_text(script + "<user>x</user>\n", name="p.md",
                                      checks=[]).prompt
    assert loaded is not None
    prompt = attrs.evolve(loaded, shell_runtimes=())
    (missing,) = check_prompt_scripts(prompt)
    assert missing.message == "A shell_matcher script must define 'match_command'"
    runtime = ShellRuntime("r", None, _element('<shell_access id="r"><policy><allow>'
                                               '<chatml_match script="m" function="is_git"/>'
                                               '</allow></policy></shell_access>'))
    prompt = attrs.evolve(prompt, shell_runtimes=(runtime,))
    assert check_prompt_scripts(prompt) == []


def _element(text: str) -> Element:
    from chatmd.parser import parse_text

    document = parse_text(text)
    return next(node for node in document.nodes if isinstance(node, Element))


def test_a_prompt_without_scripts_does_not_load_the_typechecker(tmp_path: Path) -> None:
    prompt = tmp_path / "plain.md"
    prompt.write_text("<user>hello</user>\n", encoding="utf-8")
    code = ("import sys\nfrom chatmd.frontend import check_prompt\n"
            f"result = check_prompt({str(prompt)!r})\n"
            "assert not any(d.is_error for d in result.diagnostics), result.diagnostics\n"
            "print('chatml.typecheck' in sys.modules, 'chatml.syntax.parser' in sys.modules)\n")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["False", "False"]
