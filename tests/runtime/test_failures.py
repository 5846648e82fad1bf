"""Handler failures and limit hits roll back (DECISIONS 4, 5) and are reported with the
script, the phase and the ChatML position."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.errors import HandlerFailed, HandlerLimitExceeded, ModeratorLoadError
from runtime.handler import HandlerLimits
from runtime.ids import EntryAllocator
from runtime.manager import ModeratorManager
from runtime.moderation import TurnEnd, TurnStart
from runtime.prompt_checks import load_prompt
from runtime.registry import ModeratorRegistry, ScriptInstance
from runtime.session import Session
from tests.runtime.support import compile_script, entries, shown, user_item

HISTORY = entries(user_item("hi"))

MUTATOR = """
type state = { marks : int array; count : int }
let initial_state = { marks = [0, 0]; count = 0 }
let rec spin n = if n == 0 then 0 else spin(n - 1)
let on_event ctx st ev =
  match ev with
  | `Turn_start ->
    let* () = Turn.prepend_system("kept only on success") in
    st.marks[0] <- 7;
    let n = spin(1000000) in
    Task.pure({ marks = st.marks; count = n })
  | `Turn_end ->
    st.marks[1] <- 9;
    Task.bind(Runtime.emit(`Never), fun u -> Task.fail("changed my mind"))
  | _ -> Task.pure(st)
"""


def _manager(limits: HandlerLimits | None = None) -> tuple[ModeratorManager, EntryAllocator]:
    allocator = EntryAllocator("t/stream", 5)
    return ModeratorManager.create(compile_script(MUTATOR), allocator=allocator,
                                   limits=limits), allocator


def test_step_limit_rolls_back_state_overlay_queue_and_in_place_mutations() -> None:
    manager, allocator = _manager(HandlerLimits(max_steps=10_000))
    with pytest.raises(HandlerLimitExceeded) as caught:
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert "step limit exceeded" in caught.value.message
    assert caught.value.diagnostic.code == "runtime.limit_exceeded"
    assert shown(manager.current_state()) == "{ count = 0; marks = [|0, 0|] }"
    assert manager.overlay.revision == 0 and manager.queued_events() == []
    assert allocator.next_sequence == 5


def test_memory_limit_rolls_back() -> None:
    manager = ModeratorManager.create(compile_script("""
let initial_state = [0]
let on_event ctx st ev =
  let big = Array.make(10000000, 1) in
  Task.pure(big)
"""), limits=HandlerLimits(max_memory=1024 * 1024))
    with pytest.raises(HandlerLimitExceeded, match="memory limit exceeded"):
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.current_state() == [0]


def test_task_fuel_is_a_limit_and_not_catchable() -> None:
    manager = ModeratorManager.create(compile_script("""
let initial_state = 0
let rec loop n = Task.bind(Task.pure(n), fun m -> loop(m + 1))
let on_event ctx st ev = Task.catch(loop(0), fun m -> Task.pure(-1))
"""), limits=HandlerLimits(fuel=1000))
    with pytest.raises(HandlerLimitExceeded, match="fuel exhausted"):
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.current_state() == 0


def test_failed_task_rolls_back_in_place_mutations() -> None:
    manager, _ = _manager()
    with pytest.raises(HandlerFailed, match="changed my mind"):
        manager.handle_event(TurnEnd(), session_id="s", history=HISTORY)
    assert shown(manager.current_state()) == "{ count = 0; marks = [|0, 0|] }"
    assert manager.queued_events() == []


def test_success_commits_in_place_mutations() -> None:
    manager, _ = _manager()
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert shown(manager.current_state()) == "{ count = 0; marks = [|7, 0|] }"


def test_runtime_error_diagnostic_points_into_the_prompt(tmp_path: Path) -> None:
    prompt_path = tmp_path / "p.chatmd"
    prompt_path.write_text("""<config id="diag"/>
<script language="chatml" kind="moderator" id="boom">
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_start -> Task.pure(Array.get([1, 2], 5))
  | _ -> Task.pure(st)
</script>
<user>hi</user>
""")
    session = Session.open(load_prompt(prompt_path))
    with pytest.raises(HandlerFailed) as caught:
        session.run_turn(lambda request: [])
    diagnostic = caught.value.diagnostic
    assert diagnostic.file == str(prompt_path)
    assert (diagnostic.line, diagnostic.column) == (6, 30)
    assert "moderator 'boom' failed in phase 'turn_start'" in diagnostic.message
    assert "Array.get: index out of bounds" in diagnostic.message
    assert diagnostic.phase == "moderation"


def test_task_fail_diagnostic_points_at_on_event() -> None:
    manager, _ = _manager()
    with pytest.raises(HandlerFailed) as caught:
        manager.handle_event(TurnEnd(), session_id="s", history=HISTORY)
    diagnostic = caught.value.diagnostic
    assert (diagnostic.line, diagnostic.column) == (5, 5)
    assert diagnostic.hint is not None and "on_event" in diagnostic.hint
    assert caught.value.phase == "turn_end" and caught.value.script_id == "main"


def test_error_inside_a_continuation_is_located() -> None:
    manager = ModeratorManager.create(compile_script("""let initial_state = 0
let on_event ctx st ev =
  Task.bind(Task.pure(0), fun x ->
    Task.pure(10 / x))
"""))
    with pytest.raises(HandlerFailed) as caught:
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert "Division by zero" in caught.value.message
    assert caught.value.diagnostic.line == 4


def test_non_task_result_fails_cleanly() -> None:
    """Defensive: the contract check refuses such scripts, so swap in a host-made handler."""
    manager = ModeratorManager.create(compile_script("""
let initial_state = 0
let on_event ctx st ev = Task.pure(st)
"""))
    manager._instance = ScriptInstance(0, lambda ctx, st, ev: 42)
    with pytest.raises(HandlerFailed, match="Expected task result from on_event"):
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.current_state() == 0


def test_scripts_that_break_the_contract_do_not_compile() -> None:
    with pytest.raises(ModeratorLoadError) as caught:
        compile_script("let initial_state = 0\nlet on_event ctx st ev = 42\n")
    assert caught.value.diagnostics[0].code == "chatml.contract_type"
    with pytest.raises(ModeratorLoadError, match="does not compile"):
        compile_script("let initial_state = \n")


def test_failing_top_level_is_a_load_error() -> None:
    artifact = ModeratorRegistry().compile_text("""
let initial_state = Array.get([1], 3)
let on_event ctx st ev = Task.pure(st)
""")
    with pytest.raises(ModeratorLoadError, match="top level failed") as caught:
        ModeratorManager.create(artifact)
    assert caught.value.diagnostic.line == 2


def test_reentrant_dispatch_from_a_capability_is_refused() -> None:
    from runtime.capabilities import Capabilities, ToolOk

    holder: list[ModeratorManager] = []

    def tool_call(name: str, args: object) -> ToolOk:
        holder[0].handle_event(TurnEnd(), session_id="s", history=HISTORY)
        return ToolOk(None)

    manager = ModeratorManager.create(compile_script("""
let initial_state = ""
let on_event ctx st ev =
  match ev with
  | `Turn_start -> Task.catch(Task.bind(Tool.call("x", `Null), fun r -> Task.pure("called")),
                              fun message -> Task.pure(message))
  | _ -> Task.pure(st)
"""), Capabilities(on_tool_call=tool_call))
    holder.append(manager)
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.current_state() == \
        "Tool.call: HandlerBusy: Session is already handling an event."
