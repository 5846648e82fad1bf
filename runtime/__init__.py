"""The runtime: links ChatMD prompts and ChatML moderator scripts into moderated chat sessions.

The top layer: the only package that imports both ``chatmd`` and ``chatml``.
Besides the session machinery below, it holds what needs both languages:
``commands/`` (the ``chatmdc`` command, :mod:`runtime.commands.chatmdc`),
:mod:`runtime.prompt_checks` (a prompt checked with ChatMD's checks and the ChatML
script checks) and :mod:`runtime.script_check` (those script checks).

One job per module (moderator-runtime spec 9):

* :mod:`runtime.session` -- the embedding API: a host runs a session turn by turn;
* :mod:`runtime.turns` -- the moderation boundaries of one turn (:class:`TurnDriver`);
* :mod:`runtime.manager` -- one script instance per session: state, queue, overlay, lock;
* :mod:`runtime.handler` -- one handler run as one transactional ChatML run;
* :mod:`runtime.effects` -- recorded effects decoded and validated into an outcome;
* :mod:`runtime.operations` / :mod:`runtime.capabilities` -- the capability modules'
  handlers and the host callbacks behind them; :mod:`runtime.builtins` -- the
  ``Item``/``Tool_call``/``Context`` helper modules;
* :mod:`runtime.registry` -- compile once per prompt load, instantiate per session;
* :mod:`runtime.overlay` / :mod:`runtime.export` -- the overlay, its projection and its
  ChatMD materialisation;
* :mod:`runtime.policy` -- what runtime requests do; :mod:`runtime.executor` -- spawned
  model jobs; :mod:`runtime.steering` -- deferred steering; :mod:`runtime.tools` -- tool
  execution; :mod:`runtime.request_compaction` -- stale ``read_file`` outputs;
* :mod:`runtime.snapshot` / :mod:`runtime.store` -- versioned JSON, written atomically;
* :mod:`runtime.driver` -- the chat driver (a prompt against a Responses API model, the
  transcript written back); :mod:`runtime.commands` -- ``chatmdc run`` and ``chatmdc chat``;
* :mod:`runtime.ids`, :mod:`runtime.items`, :mod:`runtime.moderation`,
  :mod:`runtime.script_input`, :mod:`runtime.errors` -- the shared vocabulary.
"""
