"""Secrets never leave the cook: API keys and bearer tokens in captured text are masked.

Request headers and account metadata are not copied into the cooked document at all; this
module catches keys that appear inside message text or tool arguments (an agent that ran
`env`, a pasted curl command).
"""
from __future__ import annotations

import re

MASK = "[redacted]"

_PATTERNS = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{16,}"            # Anthropic
    r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"  # OpenAI
    r"|AIza[0-9A-Za-z_\-]{35}"               # Google
    r"|gh[pousr]_[A-Za-z0-9]{36,}"           # GitHub
    r"|github_pat_[A-Za-z0-9_]{40,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"       # Slack
    r"|AKIA[0-9A-Z]{16}"                     # AWS access key id
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/\-]{16,}=*"
    r"|(?i:(?<=authorization: )|(?<=x-api-key: )|(?<=api-key: )|(?<=\"x-api-key\": \")|(?<=api_key=))[^\s\"',;]{8,}"
)
_HINTS = ("sk-", "AIza", "gh", "github_pat_", "xox", "AKIA", "earer ", "uthorization", "pi-key", "api_key", "API-KEY", "API_KEY")


def scrub_text(s: str) -> str:
    # The cheap membership tests keep the regex off the vast majority of texts.
    if not any(map(s.__contains__, _HINTS)):
        return s
    return _PATTERNS.sub(MASK, s)


def scrub(obj):
    """Mask secrets in every string of a JSON-like value."""
    if isinstance(obj, str):
        return scrub_text(obj)
    if isinstance(obj, list):
        return [scrub(v) for v in obj]
    if isinstance(obj, dict):
        return {k: scrub(v) for k, v in obj.items()}
    return obj
