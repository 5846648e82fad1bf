"""Shell phase 3, secure: administrative ceilings a host imposes on every prompt (spec 6.9)."""
