"""The model executor: ``Model.spawn`` jobs in the background, completions delivered as
internal events (moderator-runtime spec 5.4; seed 3.5.2).

``ModelExecutor.recipe(name, call, session_id)`` gives a
:class:`~runtime.capabilities.ModelRecipe` whose ``call`` runs synchronously
(``Model.call``) and whose ``spawn`` starts a job on a worker thread and
returns its id at once: ``model-job-1``, ``model-job-2``... per executor. The
executor counts every job it ever created against ``max_spawned_jobs``
(completed jobs are kept, as the reference does); past it ``Model.spawn``
fails with ``Model.spawn: exceeded maximum spawned job limit.``

When a job finishes, ```Model_job_succeeded(job_id, recipe, result_json)`` or
```Model_job_failed(job_id, recipe, message)`` (a refusal, an error or an
exception) is enqueued on the session's manager if the session is registered;
on success the job is marked delivered and the session's wakeup callback is
called once. Otherwise the result waits, and :meth:`register_session`
delivers it. An enqueue refused because the session ended leaves the job
undelivered, silently. Jobs live in memory only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import attrs

from chatml.tasks import OperationError
from chatml.values import Value, Variant
from runtime.capabilities import ModelError, ModelOk, ModelRecipe, ModelRefused, ModelResult
from runtime.errors import ModerationError
from runtime.script_input import json_value

SPAWN_LIMIT = "Model.spawn: exceeded maximum spawned job limit."


class SpawnLimitExceeded(OperationError):
    """The executor created ``max_spawned_jobs`` jobs already (fails the ``Model.spawn`` task)."""

    def __init__(self) -> None:
        super().__init__(SPAWN_LIMIT)


@attrs.define
class Job:
    """One spawned job: ``state`` is ``pending``, ``succeeded`` or ``failed``."""

    job_id: str
    session_id: str
    recipe: str
    state: str = "pending"
    result: Any = None
    message: str | None = None
    delivered: bool = False
    delivering: bool = False
    future: Future[None] | None = attrs.field(default=None, repr=False)

    def event(self) -> Value:
        if self.state == "succeeded":
            return Variant("Model_job_succeeded", (self.job_id, self.recipe,
                                                   json_value(self.result)))
        return Variant("Model_job_failed", (self.job_id, self.recipe, self.message or ""))


@attrs.define
class _Session:
    manager: Any
    on_wakeup: Callable[[], Any] | None


class ModelExecutor:
    """Runs spawned model jobs for any number of sessions (thread-safe)."""

    def __init__(self, max_spawned_jobs: int = 100, max_workers: int = 4) -> None:
        self.max_spawned_jobs = max_spawned_jobs
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="model-job")
        self._jobs: dict[str, Job] = {}
        self._sessions: dict[str, _Session] = {}
        self._counter = 0
        self._lock = threading.RLock()

    # ----------------------------------------------------------------- recipes

    def recipe(self, name: str, call: Callable[[Any], ModelResult], session_id: str
               ) -> ModelRecipe:
        """A recipe for one session: ``call`` runs inline; ``spawn`` runs it as a job."""
        return ModelRecipe(name, call, lambda payload: self.spawn(session_id, name, call, payload))

    def spawn(self, session_id: str, recipe: str, call: Callable[[Any], ModelResult],
              payload: Any) -> str:
        """Start ``call(payload)`` in the background; its id at once."""
        with self._lock:
            if len(self._jobs) >= self.max_spawned_jobs:
                raise SpawnLimitExceeded()
            self._counter += 1
            job = Job(f"model-job-{self._counter}", session_id, recipe)
            self._jobs[job.job_id] = job
            job.future = self._pool.submit(self._run, job, call, payload)
        return job.job_id

    def _run(self, job: Job, call: Callable[[Any], ModelResult], payload: Any) -> None:
        try:
            result = call(payload)
        except Exception as error:  # noqa: BLE001 -- a failing job becomes Model_job_failed
            result = ModelError(f"{type(error).__name__}: {error}")
        with self._lock:
            if isinstance(result, ModelOk):
                job.state, job.result = "succeeded", result.result
            elif isinstance(result, ModelRefused | ModelError):
                job.state, job.message = "failed", result.message
            else:
                job.state, job.message = "failed", (f"recipe returned {type(result).__name__}, "
                                                    "expected ModelOk, ModelRefused or ModelError")
        self._deliver(job)

    # ----------------------------------------------------------------- delivery

    def _deliver(self, job: Job) -> None:
        """Enqueue a finished job's event on its session's manager (at most once).

        The manager is called without holding the executor's lock: a handler
        holding the manager's lock may be spawning a job at that moment.
        """
        with self._lock:
            session = self._sessions.get(job.session_id)
            if session is None or job.state == "pending" or job.delivered or job.delivering:
                return
            job.delivering = True
        try:
            session.manager.enqueue_internal_event(job.event())
            enqueued = True
        except ModerationError:
            enqueued = False  # the session ended: the job stays undelivered
        with self._lock:
            job.delivering = False
            job.delivered = enqueued
            wakeup = session.on_wakeup if enqueued else None
        if wakeup is not None:
            with contextlib.suppress(Exception):
                wakeup()

    def register_session(self, session_id: str, manager: Any,
                         on_wakeup: Callable[[], Any] | None = None) -> None:
        """Route completions of ``session_id`` to ``manager``; deliver those already done."""
        with self._lock:
            self._sessions[session_id] = _Session(manager, on_wakeup)
            waiting = [job for job in self._jobs.values() if job.session_id == session_id]
        for job in waiting:
            self._deliver(job)

    def unregister_wakeup(self, session_id: str) -> None:
        """Stop waking the session up; completions are still enqueued."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                session.on_wakeup = None

    def job_state(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def await_job(self, job_id: str, timeout: float | None = None) -> Job:
        """Wait until the job has finished (and been delivered if its session is registered)."""
        with self._lock:
            job = self._jobs[job_id]
        if job.future is not None:
            job.future.result(timeout)
        return job

    def wait_all(self, timeout: float | None = None) -> None:
        """Wait for every job started so far."""
        with self._lock:
            futures = [job.future for job in self._jobs.values() if job.future is not None]
        for future in futures:
            future.result(timeout)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)


__all__ = ["SPAWN_LIMIT", "Job", "ModelExecutor", "SpawnLimitExceeded"]
