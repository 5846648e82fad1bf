"""The runtime-semantics policy: what the host does with moderator runtime requests
(moderator-runtime spec 4.2-4.5; seed 3.5.1; DECISIONS 15).

* :func:`collapse` keeps the first request of each kind, in order;
* :func:`decide_after_turn_end` -- after ``turn_end`` and its drain: stop on
  end-session (it overrides everything), continue for a tool follow-up,
  continue when the moderator requested a turn (and the policy honours it),
  else stop; compaction is reported, and only honoured when the policy says so;
* :class:`SelfTriggeredTurns` -- the budget of consecutive moderator-requested
  turns (10 by default: the 11th consecutive request fails the run);
* :class:`FollowUpBudget` -- the interactive hosts' follow-up budget (4.5):
  pause conditions, a rate limit and a per-user-turn cap, each suppression
  reported once by its notice.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import attrs

from runtime.errors import TurnBudgetExceeded
from runtime.moderation import EndSession, RequestCompaction, RequestTurn, RuntimeRequest


class PauseCondition(enum.Enum):
    PAUSE_FOLLOWUP_TURNS = "pause_followup_turns"
    PAUSE_INTERNAL_EVENT_DRAINS = "pause_internal_event_drains"


@attrs.frozen
class TurnRateLimit:
    max_turns: int
    window_ms: int


@attrs.frozen
class BudgetPolicy:
    max_self_triggered_turns: int = 10
    max_followup_turns: int = 1
    max_internal_event_drain: int = 100
    turn_rate_limit: TurnRateLimit | None = None
    pause_conditions: tuple[PauseCondition, ...] = ()


@attrs.frozen
class RuntimePolicy:
    honor_request_turn: bool = True
    honor_request_compaction: bool = False
    budget: BudgetPolicy = BudgetPolicy()


class Continue(enum.Enum):
    STOP = "stop"
    CONTINUE = "continue"


@attrs.frozen
class TurnDecision:
    """What happens after a turn: ``continue_``, the end reason, whether to compact, and the
    collapsed requests to forward to the host's observer."""

    continue_: Continue
    end_session_reason: str | None
    compaction_requested: bool
    forward: tuple[RuntimeRequest, ...]
    requested_turn: bool
    """True when the continuation (if any) is a moderator-requested turn, not a tool follow-up."""


def collapse(requests: Sequence[RuntimeRequest]) -> list[RuntimeRequest]:
    """The first request of each kind, in order (later end-session reasons are dropped)."""
    seen: set[type] = set()
    kept: list[RuntimeRequest] = []
    for request in requests:
        if type(request) not in seen:
            seen.add(type(request))
            kept.append(request)
    return kept


def end_reason(requests: Sequence[RuntimeRequest]) -> str | None:
    """The reason of the first end-session request, if any."""
    for request in requests:
        if isinstance(request, EndSession):
            return request.reason
    return None


def decide_after_turn_end(policy: RuntimePolicy, tool_followup: bool,
                          requests: Sequence[RuntimeRequest]) -> TurnDecision:
    """Spec 4.3: ``requests`` are those of ``turn_end`` and the turn-end drain."""
    collapsed = collapse(requests)
    reason = end_reason(collapsed)
    compaction = policy.honor_request_compaction and any(
        isinstance(r, RequestCompaction) for r in collapsed)
    requested = any(isinstance(r, RequestTurn) for r in collapsed)
    if reason is not None:
        verdict, by_request = Continue.STOP, False
    elif tool_followup:
        verdict, by_request = Continue.CONTINUE, False
    elif policy.honor_request_turn and requested:
        verdict, by_request = Continue.CONTINUE, True
    else:
        verdict, by_request = Continue.STOP, False
    return TurnDecision(verdict, reason, compaction, tuple(collapsed), by_request)


class SelfTriggeredTurns:
    """Counts consecutive moderator-requested turns of one host-started run."""

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit
        self.count = 0

    def reset(self) -> None:
        """A host-started turn or a tool follow-up."""
        self.count = 0

    def take(self) -> None:
        """A request-turn continuation; raises :class:`TurnBudgetExceeded` past the limit."""
        self.count += 1
        if self.count > self.limit:
            raise TurnBudgetExceeded(
                f"Exceeded maximum consecutive moderator-requested turns ({self.limit}).")


@attrs.frozen
class FollowUpVerdict:
    allowed: bool
    notice: str | None = None
    """The one-time notice of the suppressor that matched (None when already shown)."""


class FollowUpBudget:
    """The interactive hosts' budget of automatic follow-up turns (spec 4.5)."""

    def __init__(self, budget: BudgetPolicy) -> None:
        self.budget = budget
        self.started_since_user = 0
        self.start_times: list[int] = []
        self._noticed: set[str] = set()

    def _once(self, notice: str) -> FollowUpVerdict:
        if notice in self._noticed:
            return FollowUpVerdict(False)
        self._noticed.add(notice)
        return FollowUpVerdict(False, notice)

    def check_followup(self, now_ms: int) -> FollowUpVerdict:
        """May an automatic follow-up start now? A started one is recorded."""
        budget = self.budget
        if PauseCondition.PAUSE_FOLLOWUP_TURNS in budget.pause_conditions:
            return self._once("budget:pause-followup-turns")
        limit = budget.turn_rate_limit
        if limit is not None:
            recent = [t for t in self.start_times if t >= now_ms - limit.window_ms]
            if len(recent) >= limit.max_turns:
                return self._once("budget:turn-rate-limit")
        if self.started_since_user >= budget.max_followup_turns:
            return self._once("budget:max-followup-turns")
        self.started_since_user += 1
        self.start_times.append(now_ms)
        return FollowUpVerdict(True)

    def check_idle_drain(self) -> FollowUpVerdict:
        if PauseCondition.PAUSE_INTERNAL_EVENT_DRAINS in self.budget.pause_conditions:
            return self._once("budget:pause-internal-event-drains")
        return FollowUpVerdict(True)

    def user_submitted(self) -> None:
        """A user-submitted turn bypasses the checks and resets the counter."""
        self.started_since_user = 0


__all__ = ["BudgetPolicy", "Continue", "FollowUpBudget", "FollowUpVerdict", "PauseCondition",
           "RuntimePolicy", "SelfTriggeredTurns", "TurnDecision", "TurnRateLimit", "collapse",
           "decide_after_turn_end", "end_reason"]
