"""Moderator-runtime checklist 35-43: runtime requests through the policy layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.errors import HandlerFailed, SessionEnded, TurnBudgetExceeded
from runtime.ids import EntryAllocator
from runtime.manager import ModeratorManager
from runtime.moderation import EndSession, RequestCompaction, RequestTurn, TurnEnd, TurnStart
from runtime.policy import (
    BudgetPolicy,
    Continue,
    RuntimePolicy,
    collapse,
    decide_after_turn_end,
)
from runtime.prompt_checks import load_prompt
from runtime.session import Session
from tests.runtime.support import (
    RecordingRunner,
    ScriptedModel,
    assistant,
    compile_script,
    entries,
    function_call,
    prompt_in,
    user_item,
)


def _on_turn_end(body: str) -> str:
    return f"""
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_end -> {body}
  | _ -> Task.pure(st)
"""


def test_c35_end_session_refuses_later_events_and_requests() -> None:
    manager = ModeratorManager.create(compile_script(_on_turn_end(
        'Task.bind(Runtime.end_session("done"), fun u -> Task.pure(st))')),
        allocator=EntryAllocator("t"))
    history = entries(user_item("hi"))
    manager.handle_event(TurnEnd(), session_id="s", history=history)
    assert manager.is_halted()
    with pytest.raises(SessionEnded, match="Session has ended"):
        manager.handle_event(TurnStart(), session_id="s", history=history)
    with pytest.raises(SessionEnded):
        manager.enqueue_internal_event("late")


def test_c35_turn_limiter_script_ends_the_session(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path, script="turn_limiter.chatml"))
    model = ScriptedModel()
    result = session.run(model)
    assert len(model.requests) == 3
    assert result.ended_reason == "turn limit reached"
    assert session.run_turn(model).request is None  # no more model requests
    assert len(model.requests) == 3


def test_c36_end_session_overrides_request_turn(tmp_path: Path) -> None:
    source = _on_turn_end("""
    let* () = Runtime.request_turn() in
    let* () = Runtime.end_session("stop") in Task.pure(st)""")
    session = Session.open(prompt_in(tmp_path, script_source=source))
    model = ScriptedModel()
    result = session.run(model)
    assert len(model.requests) == 1
    assert result.turns[0].decision.continue_ is Continue.STOP
    assert result.ended_reason == "stop"


def test_c37_request_turn_gives_one_extra_request_without_user_entry(tmp_path: Path) -> None:
    source = _on_turn_end("""
    if st == 0 then Task.bind(Runtime.request_turn(), fun u -> Task.pure(1)) else Task.pure(st)""")
    session = Session.open(prompt_in(tmp_path, script_source=source))
    model = ScriptedModel([[assistant("first")], [assistant("second")]])
    session.run(model)
    assert len(model.requests) == 2
    users = [item for item in model.requests[1].input if item.get("role") == "user"]
    assert len(users) == 1  # only the prompt's user message


def test_c38_three_request_turns_collapse_to_one_continuation(tmp_path: Path) -> None:
    source = _on_turn_end("""
    if st == 0 then
      let* () = Runtime.request_turn() in
      let* () = Runtime.request_turn() in
      let* () = Runtime.request_turn() in Task.pure(1)
    else Task.pure(st)""")
    session = Session.open(prompt_in(tmp_path, script_source=source))
    model = ScriptedModel()
    result = session.run(model)
    assert len(model.requests) == 2
    assert result.turns[0].decision.forward == (RequestTurn(),)
    assert collapse([RequestTurn(), EndSession("a"), RequestTurn(), EndSession("b")]) == \
        [RequestTurn(), EndSession("a")]


def test_c39_request_turn_in_turn_start_is_a_phase_error(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_start -> Task.bind(Runtime.request_turn(), fun u -> Task.pure(st))
  | _ -> Task.pure(st)
"""
    session = Session.open(prompt_in(tmp_path, script_source=source))
    with pytest.raises(HandlerFailed) as caught:
        session.run_turn(ScriptedModel())
    assert ("Operation 'Runtime.request_turn' is invalid in phase 'turn_start': expected one of "
            "[turn_end, internal_event]") in caught.value.message


def test_c40_always_requesting_fails_after_ten_continuations(tmp_path: Path) -> None:
    source = _on_turn_end("Task.bind(Runtime.request_turn(), fun u -> Task.pure(st + 1))")
    session = Session.open(prompt_in(tmp_path, script_source=source))
    model = ScriptedModel()
    with pytest.raises(TurnBudgetExceeded) as caught:
        session.run(model)
    assert caught.value.message == \
        "Exceeded maximum consecutive moderator-requested turns (10)."
    assert len(model.requests) == 11  # the first turn and 10 continuations


def test_c41_tool_follow_up_resets_the_self_trigger_counter(tmp_path: Path) -> None:
    source = _on_turn_end("Task.bind(Runtime.request_turn(), fun u -> Task.pure(st + 1))")
    session = Session.open(prompt_in(tmp_path, script_source=source),
                           runners={"search": RecordingRunner()},
                           policy=RuntimePolicy(budget=BudgetPolicy(max_self_triggered_turns=2)))
    responses = [[assistant("1")], [assistant("2")], [function_call("search", "{}")],
                 [assistant("3")], [assistant("4")]]
    model = ScriptedModel(responses)
    with pytest.raises(TurnBudgetExceeded):
        session.run(model)
    # two continuations, a tool follow-up (reset), two more, then the third fails
    assert len(model.requests) == 6


def test_c42_compaction_request_is_only_reported_by_default(tmp_path: Path) -> None:
    seen = []
    compactions = []
    source = _on_turn_end("Task.bind(Runtime.request_compaction(), fun u -> Task.pure(st))")
    session = Session.open(prompt_in(tmp_path, script_source=source),
                           on_runtime_request=seen.append,
                           compactor=lambda history: compactions.append(1) or history)
    model = ScriptedModel()
    session.run(model)
    assert len(model.requests) == 1
    assert seen == [RequestCompaction()]
    assert compactions == []


def test_c43_honoured_compaction_runs_after_the_turn_without_forcing_one(tmp_path: Path) -> None:
    source = _on_turn_end("Task.bind(Runtime.request_compaction(), fun u -> Task.pure(st))")
    session = Session.open(prompt_in(tmp_path, script_source=source),
                           policy=RuntimePolicy(honor_request_compaction=True),
                           compactor=lambda history: history[-1:])
    model = ScriptedModel([[assistant("kept")]])
    result = session.run(model)
    assert len(model.requests) == 1
    assert result.turns[0].decision.compaction_requested
    assert [e.item["content"][0]["text"] for e in session.history] == ["kept"]


def test_decide_after_turn_end_table() -> None:
    policy = RuntimePolicy()
    assert decide_after_turn_end(policy, True, []).continue_ is Continue.CONTINUE
    assert decide_after_turn_end(policy, True, [EndSession("x")]).continue_ is Continue.STOP
    assert decide_after_turn_end(policy, False, [RequestTurn()]).requested_turn
    refusing = RuntimePolicy(honor_request_turn=False)
    assert decide_after_turn_end(refusing, False, [RequestTurn()]).continue_ is Continue.STOP
    assert not decide_after_turn_end(policy, False, [RequestCompaction()]).compaction_requested


def test_end_session_keeps_queued_events_in_the_snapshot(tmp_path: Path) -> None:
    """DECISIONS 15: no later events are delivered, the queue survives, the reason is reported."""
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_end ->
    let* () = Runtime.emit(`Pending("work")) in
    let* () = Runtime.end_session("budget spent") in
    Task.pure(st + 1)
  | `Pending(what) -> Task.pure(100)
  | _ -> Task.pure(st)
"""
    session = Session.open(prompt_in(tmp_path, script_source=source))
    result = session.run(ScriptedModel())
    assert result.ended_reason == "budget spent"
    assert session.manager is not None
    assert session.manager.current_state() == 1  # the queued event was not delivered
    assert session.drain() == []
    session.save(tmp_path / "s.json")
    restored = Session.restore(load_prompt(tmp_path / "chat.chatmd"), tmp_path / "s.json")
    assert restored.ended_reason == "budget spent"
    assert restored.manager is not None
    assert [v.tag for v in restored.manager.queued_events()] == ["Pending"]
    assert restored.run_turn(ScriptedModel()).request is None


def test_follow_up_budget_rules() -> None:
    """Spec 4.5 (interactive hosts): pause, rate limit, per-user-turn cap; one notice each."""
    from runtime.policy import FollowUpBudget, PauseCondition, TurnRateLimit

    paused = FollowUpBudget(BudgetPolicy(pause_conditions=(PauseCondition.PAUSE_FOLLOWUP_TURNS,
                                                           PauseCondition.PAUSE_INTERNAL_EVENT_DRAINS)))
    assert paused.check_followup(0).notice == "budget:pause-followup-turns"
    assert paused.check_followup(1).notice is None  # the notice is shown once
    assert paused.check_idle_drain().notice == "budget:pause-internal-event-drains"

    capped = FollowUpBudget(BudgetPolicy(max_followup_turns=2))
    assert capped.check_followup(0).allowed and capped.check_followup(1).allowed
    third = capped.check_followup(2)
    assert not third.allowed and third.notice == "budget:max-followup-turns"
    capped.user_submitted()
    assert capped.check_followup(3).allowed

    limited = FollowUpBudget(BudgetPolicy(max_followup_turns=10,
                                          turn_rate_limit=TurnRateLimit(2, 1000)))
    assert limited.check_followup(0).allowed and limited.check_followup(10).allowed
    assert limited.check_followup(500).notice == "budget:turn-rate-limit"
    assert limited.check_followup(1500).allowed  # the window moved on
