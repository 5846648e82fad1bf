"""A dedicated event-loop thread: synchronous callers run coroutines on it with a deadline.

The ``mcp`` SDK is asynchronous; tool runners are synchronous and run on the
tool pool's worker threads. One :class:`LoopThread` per set of MCP
connections owns an asyncio loop (anyio runs on it) for their whole life;
:meth:`LoopThread.run` submits a coroutine from any thread and waits for its
result, cancelling it when the deadline passes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """An asyncio loop running forever on a daemon thread until :meth:`stop`."""

    def __init__(self, name: str = "mcp-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """The result of ``coroutine`` run on the loop; ``TimeoutError`` (it is cancelled) late."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop (remaining tasks are cancelled) and wait for the thread."""
        if self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # already closed
                self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
