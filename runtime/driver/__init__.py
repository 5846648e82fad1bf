"""The chat driver: runs a ChatMD prompt against a Responses API model (moderator-runtime spec 8).

Modules, one job each: :mod:`~runtime.driver.client` (the ``openai`` client, retries,
timeouts, API failures), :mod:`~runtime.driver.streaming` (one streamed or blocking
response to output items), :mod:`~runtime.driver.events` (the ``--events`` JSONL log),
:mod:`~runtime.driver.display` (live output and tool activity lines),
:mod:`~runtime.driver.append` (the atomic append protocol),
:mod:`~runtime.driver.transcript` (items to transcript elements, item by item),
:mod:`~runtime.driver.toolset` (runners for the declared tools),
:mod:`~runtime.driver.agents` (nested agents), :mod:`~runtime.driver.cache` (the inline agent
result cache) and :mod:`~runtime.driver.loop` (the turn loop over :class:`runtime.session.Session`).
"""
