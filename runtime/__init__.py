"""The runtime: links ChatMD prompts and ChatML scripts into moderated chat sessions."""
