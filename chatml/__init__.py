"""ChatML: the statically typed scripting language of ChatMD moderators and shell hooks."""
