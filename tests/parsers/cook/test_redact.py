"""Secrets never leave the cook: every string the cooked document takes from a trace is masked.

The audit's files (`../shared/badinputs/secrets/`, `repro/S01_*`) are cooked by the CLI and
searched for every secret they hold; the secrets are found here on their own, from the raw
files, by the shapes fake keys take and by the values under key-like names (in the JSON and in
JSON nested in strings), not from the masking code. Ordinary prose and code must survive.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from parsers.cook.ids import message_id
from parsers.cook.redact import MASK, scrub, scrub_text
from parsers.cook.schema import cooked_errors
from parsers.pipeline import cook_paths
from tests.conftest import REPO, shared_path

# -- the audit's files ---------------------------------------------------------------------------

SHAPES = re.compile(r"sk-[A-Za-z0-9_\-]{20,}|AIza[0-9A-Za-z_\-]{35}|eyJ[\w\-]+\.[\w\-]+\.[\w\-]+")
AFTER_SCHEME = re.compile(r"(?i:bearer|basic)\s+([A-Za-z0-9+/._~\-]{8,}=*)")
AFTER_LABEL = re.compile(r"(?i:x-api-key|api_key|api-key)[\"']?\s*[:=]?\s*[\"']?([A-Za-z0-9_\-]{12,})")
KEY_NAMES = re.compile(r"(?i)^(x-)?api[-_]?key$|_api_key$|^authorization$|^token$|^secret$|^password$")


def _walk(v, found: set[str], key: str = "") -> None:
    """Values under key-like names, at any depth, in JSON nested in strings too."""
    if isinstance(v, dict):
        for k, x in v.items():
            _walk(x, found, k)
    elif isinstance(v, list):
        for x in v:
            _walk(x, found, key)
    elif isinstance(v, str):
        if KEY_NAMES.search(key):
            m = AFTER_SCHEME.fullmatch(v)
            found.add(m.group(1) if m else v)
        for text in (v, *(line[5:].strip() for line in v.splitlines() if line.startswith("data:"))):
            if text[:1] in "{[":
                try:
                    _walk(json.loads(text), found, key)
                except ValueError:
                    pass


def secrets_of(path: Path) -> set[str]:
    raw = path.read_text()
    found = set(SHAPES.findall(raw)) | set(AFTER_SCHEME.findall(raw)) | set(AFTER_LABEL.findall(raw))
    for line in raw.splitlines():
        if line.strip():
            _walk(json.loads(line), found)
    return {s for s in found if len(s) >= 12}


def fragments(secret: str, n: int = 14) -> set[str]:
    """Every n-character piece of a secret: a key cut short (a title) still leaks its prefix."""
    return {secret[i:i + n] for i in range(len(secret) - n + 1)} if len(secret) > n else {secret}


def audit_files() -> list[Path]:
    d = shared_path("badinputs")
    return sorted((d / "secrets").glob("*.jsonl")) + [d / "repro" / "S01_key_in_error_and_schema.jsonl"]


def test_the_secrets_are_found_independently():
    """The search above finds every key the audit lists (keys.json), and the Basic credentials."""
    listed = set(json.loads(shared_path("badinputs", "secrets", "keys.json").read_text()).values())
    found = set().union(*(secrets_of(p) for p in audit_files()))
    assert listed <= found
    assert "dXNlcjpzM2NyZXRwYXNzd29yZA==" in found  # user:s3cretpassword


@pytest.mark.parametrize("name", ["claude_secrets.jsonl", "openai_secrets.jsonl", "S01_key_in_error_and_schema.jsonl"])
def test_no_secret_of_an_audit_file_reaches_the_document_or_stderr(name):
    (path,) = [p for p in audit_files() if p.name == name]
    secrets = secrets_of(path)
    assert len(secrets) >= 4
    proc = subprocess.run([sys.executable, "-m", "viewer.cli", "cook", str(path), "--problems"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    doc = orjson.loads(proc.stdout)
    assert cooked_errors(doc) == []
    text = proc.stdout + proc.stderr
    leaks = sorted({s for s in secrets for f in fragments(s) if f in text})
    assert leaks == [], f"{len(leaks)} secrets leak"
    assert MASK in proc.stdout


def test_audit_files_still_cook_whole():
    """Masking takes nothing else away: requests, their errors, tools and schemas are there."""
    doc, _ = cook_paths([str(p) for p in audit_files()])
    reqs = doc["requests"]
    assert len(reqs) == 5 and len({r["id"] for r in reqs}) == 5
    errors = [r["error"] for r in reqs if r["error"]]
    assert any(e.startswith("invalid_request_error: Incorrect API key provided: [redacted]") for e in errors)
    assert "upstream 401 for x-api-key: [redacted]" in errors
    http = next(t for t in doc["tools"] if t["name"] == "http")
    # a parameter named like a secret keeps its schema; its default is masked whole
    assert http["parameters"]["properties"]["auth"] == {"type": "string", "default": MASK}
    masked_id = next(r for r in reqs if r["id"].startswith("req-"))
    assert masked_id["id"] == "req-[redacted]"
    assert next(r for r in reqs if r["id"] == "req-2")["parent_id"] == "req-[redacted]"


# -- the rules ---------------------------------------------------------------------------------------

KEY = "sk-proj-" + "Zq7Xw2Vr9Ts4" * 4


@pytest.mark.parametrize("text, masked", [
    (f"my key is {KEY} ok", "my key is [redacted] ok"),
    ("curl -H 'Authorization: Basic dXNlcjpzM2NyZXRwYXNzd29yZA=='", "curl -H 'Authorization: Basic [redacted]'"),
    ("auth Basic YWxhZGRpbjpvcGVuc2VzYW1l here", "auth Basic [redacted] here"),
    ("Authorization: Bearer abcdefghijklmnopqrstu", "Authorization: Bearer [redacted]"),
    ("401 Unauthorized: x-api-key xk_live_9f8e7d6c5b4a", "401 Unauthorized: x-api-key [redacted]"),
    ('{"x-api-key": "xk_live_9f8e7d6c5b4a"}', '{"x-api-key": "[redacted]"}'),
    ("export OPENAI_API_KEY=q1w2e3r4t5y6u7", "export OPENAI_API_KEY=[redacted]"),
    ("apiKey: 'q1w2e3r4t5y6u7'", "apiKey: '[redacted]'"),
    ("client_secret=q1w2e3r4t5y6u7", "client_secret=[redacted]"),
    ("password: hunter2hunter2", "password: [redacted]"),
    ("GET /v1/x?key=q1w2e3r4t5y6u7&q=1", "GET /v1/x?key=[redacted]&q=1"),
    ("token: ghp_" + "a1B2" * 9, "token: [redacted]"),
    ("GH_TOKEN github_pat_" + "a1B2_" * 9 + " set", "GH_TOKEN [redacted] set"),
    ("hf_" + "a1B2" * 8, "[redacted]"),
    ("AKIAIOSFODNN7EXAMPLE is the id", "[redacted] is the id"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dozjgNryP4J3jVmNHl0w", "jwt [redacted]"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "[redacted]"),
    ("a title cut short sk-proj-AbCdEf…", "a title cut short [redacted]…"),
])
def test_secrets_in_text_are_masked(text, masked):
    assert scrub_text(text) == masked
    assert scrub_text(masked) == masked  # masking again changes nothing


ORDINARY = [
    "The basic idea: tokens are counted per request, and max_tokens: 1024 caps the output.",
    "Set the api_key parameter to your key; the token count was 123456 tokens.",
    "Basic usage of the basic configuration is described in section 2024.",
    "Bearer authentication sends a token in the Authorization header.",
    "password = getpass.getpass()\nsecret = base64.b64encode(data)\ntoken = tokens[0]",
    'headers = {"Authorization": f"Bearer {token}", "x-api-key": os.environ["ANTHROPIC_API_KEY"]}',
    "def get_api_key(config):\n    return config.api_key or os.getenv('OPENAI_API_KEY')",
    "usage: input_tokens=1200 output_tokens=340 cache_read_input_tokens=9000",
    "The task asks for a desk lamp; risk-free returns; the sk-learn package (scikit-learn 1.5.2).",
    "$ pwd\n/home/user/project2\n$ ls -la keys/",
    "monkey keyboard keystone turkey: the keys to the kingdom",
    "Primary key: user_id; foreign key: order_id2024",
    "licenses: asterisk-linking-protocols-exception, task-runner-configuration-file-v2, "
    "sk-learn-compatible-estimators-abc; laghp_" + "a1B2" * 9,
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_prose_and_code_survive(text):
    assert scrub_text(text) == text


def test_values_under_key_like_names_are_masked_whatever_their_shape():
    obj = {"api_key": "short", "X-Api-Key": 12345, "OPENAI_API_KEY": ["a", "b"], "password": {"v": "x"},
           "headers": {"Authorization": "Basic Zm9v", "Cookie": "sid=1"},
           "auth": None, "token": True,
           "max_tokens": 100, "input_tokens": 7, "key": "Enter", "name": "bash", "tokens": ["a"]}
    out = scrub(obj)
    assert out == {"api_key": MASK, "X-Api-Key": MASK, "OPENAI_API_KEY": [MASK, MASK], "password": {"v": MASK},
                   "headers": {"Authorization": MASK, "Cookie": MASK},
                   "auth": None, "token": True,
                   "max_tokens": 100, "input_tokens": 7, "key": "Enter", "name": "bash", "tokens": ["a"]}
    # a header as a name/value pair
    assert scrub([{"name": "x-api-key", "value": "abc"}, {"name": "Accept", "value": "json"}]) == \
        [{"name": "x-api-key", "value": MASK}, {"name": "Accept", "value": "json"}]
    # a secret used as a key is masked too
    assert scrub({KEY: 1}) == {MASK: 1}


def test_a_schema_keeps_its_parameters_named_like_secrets():
    schema = {"type": "object", "required": ["api_key", "token"], "properties": {
        "api_key": {"type": "string", "description": "Your API key", "default": "abc", "examples": ["x1"]},
        "token": {"type": "string", "enum": ["t1", "t2"]},
        "query": {"type": "string", "default": "hello"}}}
    out = scrub(schema)
    assert out == {"type": "object", "required": ["api_key", "token"], "properties": {
        "api_key": {"type": "string", "description": "Your API key", "default": MASK, "examples": [MASK]},
        "token": {"type": "string", "enum": [MASK, MASK]},
        "query": {"type": "string", "default": "hello"}}}


# -- the document ------------------------------------------------------------------------------------

def _log(tmp_path: Path, *records: dict) -> Path:
    p = tmp_path / "log.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def _rec(rid: str, content: str, **extra) -> dict:
    return {"id": rid, "timestamp": "2025-05-01T10:00:00Z",
            "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": content}], **extra},
            "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}}


def test_ids_come_from_the_unmasked_content_and_dedup_stays_exact(tmp_path):
    other = "sk-proj-" + "Yy8Uu1Ii2Oo3" * 4
    doc, _ = cook_paths([str(_log(tmp_path, _rec("a", f"use {KEY}"), _rec("b", f"use {other}")))])
    users = [m for m in doc["messages"] if m["role"] == "user"]
    assert [m["content"] for m in users] == ["use [redacted]", "use [redacted]"]  # two messages, not one
    assert {m["id"] for m in users} == {message_id("user", f"use {s}", None, None, None) for s in (KEY, other)}


def test_record_ids_holding_secrets_are_masked_and_stay_unique(tmp_path):
    other = "sk-proj-" + "Yy8Uu1Ii2Oo3" * 4
    doc, _ = cook_paths([str(_log(tmp_path, _rec(f"req-{KEY}", "a"), _rec(f"req-{other}", "b")))])
    ids = [r["id"] for r in doc["requests"]]
    assert len(set(ids)) == 2 and all(MASK in i for i in ids)
    assert KEY not in orjson.dumps(doc).decode() and other not in orjson.dumps(doc).decode()
    assert cooked_errors(doc) == []


def test_params_stop_reason_and_tool_names_are_masked(tmp_path):
    rec = _rec("p", "hi", stop=[KEY], user=KEY, metadata={"api_key": "plain-words-only"},
               tools=[{"type": "function", "function": {"name": f"call_{KEY}", "description": f"uses {KEY}",
                                                        "parameters": {"type": "object"}}}])
    doc, _ = cook_paths([str(_log(tmp_path, rec))])
    text = orjson.dumps(doc).decode()
    assert KEY not in text and "plain-words-only" not in text
    (tool,) = doc["tools"]
    assert tool["name"] == "call_[redacted]" and tool["description"] == "uses [redacted]"


def test_problem_messages_are_masked_in_the_document_and_on_stderr(tmp_path):
    """A stream's error event is a problem that quotes the provider's message, key included."""
    sse = ["event: message_start",
           'data: {"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-20250514", '
           '"usage": {"input_tokens": 1, "output_tokens": 1}}}',
           "event: error",
           'data: {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key '
           + KEY + '"}}']
    rec = {"id": "e", "timestamp": "2025-05-01T10:00:00Z",
           "request": {"model": "claude-sonnet-4-20250514", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
           "response": {"stream": True, "sse_lines": sse}}
    path = _log(tmp_path, rec)
    doc, summaries = cook_paths([str(path)])
    problems = [p["message"] for t in doc["traces"] for p in t["problems"]]
    assert any("invalid x-api-key [redacted]" in m for m in problems), problems
    assert all(KEY not in p["message"] for s in summaries for p in s.problems)
    proc = subprocess.run([sys.executable, "-m", "viewer.cli", "cook", str(path), "--problems", "-o", str(tmp_path / "o.json")],
                          capture_output=True, text=True, cwd=REPO)
    assert "[redacted]" in proc.stderr and KEY not in proc.stderr
