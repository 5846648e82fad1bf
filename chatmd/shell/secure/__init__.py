"""Shell phase 3, secure: administrative ceilings a host imposes on every prompt (spec 6.9).

:mod:`~chatmd.shell.secure.admin` loads the policy file and checks compiled runtimes
against it. :data:`POLICY_VARIABLE` is defined here, where it costs no import, so that
asking whether a policy is configured loads nothing (``chatmd.shell`` re-exports it).
"""

#: The environment variable naming the administrative policy file (spec §6.9).
POLICY_VARIABLE = "OCHAT_SHELL_ADMIN_POLICY"
