"""Shell phase 1, declare: ``<shell_access>`` and shell ``<tool>`` elements to typed declarations.

The strict attribute reader (:mod:`~chatmd.shell.declare.lowering`), value parsers
(:mod:`~chatmd.shell.declare.values`), the typed sections, settings and matchers, one
lowerer per top-level element (``lower_runtime``, ``lower_tool``, ``lower_moderator``) and
per section group (``lower_sections``, ``lower_policy``, ``lower_extensions``), and the
typed declarations they produce (:mod:`~chatmd.shell.declare.typed_declarations`).
"""
