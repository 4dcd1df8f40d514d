"""Chat templates' role names (FastChat, ShareGPT, model-specific templates) to user /
assistant / system."""
from __future__ import annotations

import re

_ROLE_NAMES = {
    **dict.fromkeys(("user", "human", "usr", "question", "prompter", "customer", "client", "you",
                     "instruction", "input", "startofturnuser", "imstartuser", "userinput",
                     "humanuser", "patient", "student"), "user"),
    **dict.fromkeys(("assistant", "gpt", "model", "bot", "ai", "chatbot", "chatgpt", "response",
                     "answer", "output", "startofturnmodel", "imstartassistant", "claude", "gemini",
                     "llama", "vicuna", "bard", "bing", "aiassistant", "modelresponse", "agent"),
                    "assistant"),
    **dict.fromkeys(("system", "sys", "systemprompt", "developer", "imstartsystem",
                     "startofturnsystem"), "system"),
}


def role_of(name, roles=None) -> str | None:
    """user / assistant / system for a chat template's role name; None when unknown."""
    if isinstance(roles, (list, tuple)) and len(roles) >= 2:
        if name == roles[0]:
            return "user"
        if name == roles[1]:
            return "assistant"
    if not isinstance(name, str):
        return None
    key = re.sub(r"[^a-z]", "", name.lower())
    found = _ROLE_NAMES.get(key)
    if found is None and key:
        if key.endswith("user") or key.endswith("human"):
            found = "user"
        elif key.endswith(("assistant", "model", "bot")):
            found = "assistant"
        elif key.startswith("system"):
            found = "system"
    return found
