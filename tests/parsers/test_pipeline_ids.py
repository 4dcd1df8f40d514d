"""Trace ids that survive a growing file: from the session id a file names itself by, else from
its first complete record (the README's id rule). Expected ids are computed here from the rule
and the raw files, not by the code under test."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson

from parsers.pipeline import cook_paths, list_runs

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
CLAUDE = SAMPLES / "claude_code" / "-home-user-notes-app"
SESSION = "5f0c1e2a-7b3d-4c59-9e1f-2a6b8c0d4e71"
CODEX = SAMPLES / "codex" / "rollout-2026-03-14T09-30-00-0195aa00-1111-7000-8000-000000000001.jsonl"
COPILOT = SAMPLES / "copilot_cli" / "5b0e7c2a-91d4-4f3e-a6b8-2c4d9e1f7a30" / "events.jsonl"
GEMINI_JSONL = SAMPLES / "gemini_cli" / "session-2026-03-02T10-15-a1b2c3d4.jsonl"
REQUEST_LOG = SAMPLES / "api_logs" / "anthropic_messages.jsonl"


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode()).hexdigest()


def session_id(fmt: str, session: str) -> str:
    return sha(f"{fmt}\nsession\n{session}")[:16]


def keyed_id(fmt: str, key: str, index: int) -> str:
    return sha(f"{fmt}\n{key}\n{index}")[:16]


def lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines(keepends=True) if line.strip()]


def ids_of(paths) -> dict[str, list[str]]:
    doc, _ = cook_paths([str(p) for p in paths])
    return {e["name"]: e["traces"] for e in doc["inputs"]}


def grow(src: Path, dst: Path, keep: int) -> list[bytes]:
    """`dst` holds the first `keep` lines of `src`; returns the rest, to append."""
    all_lines = lines(src)
    dst.write_bytes(b"".join(all_lines[:keep]))
    return all_lines[keep:]


def test_a_growing_claude_code_session_keeps_its_ids_and_its_sub_agent_too(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(CLAUDE, project)
    session = project / f"{SESSION}.jsonl"
    rest = grow(CLAUDE / f"{SESSION}.jsonl", session, 4)
    agent_file = CLAUDE / SESSION / "subagents" / "agent-a7c41d9.jsonl"
    agent = orjson.loads(lines(agent_file)[0])["agentId"]
    expected_main = session_id("claude-code", SESSION)
    expected_agent = session_id("claude-code", f"{SESSION}/agent-{agent}")

    before = ids_of([project])
    with session.open("ab") as f:
        f.writelines(rest)
    after = ids_of([project])

    assert before[f"{SESSION}.jsonl"][0] == after[f"{SESSION}.jsonl"][0] == expected_main
    assert expected_agent in before[f"{SESSION}.jsonl"] and expected_agent in after[f"{SESSION}.jsonl"]


def test_codex_copilot_and_gemini_sessions_are_named_by_their_session_ids(tmp_path):
    codex_id = orjson.loads(lines(CODEX)[0])["payload"]["id"]
    start = next(r for r in map(orjson.loads, lines(COPILOT)) if r.get("type") == "session.start")
    gemini = next(r["sessionId"] for r in map(orjson.loads, lines(GEMINI_JSONL)) if "sessionId" in r)
    for src, fmt, sid in ((CODEX, "codex", codex_id), (COPILOT, "copilot-cli", start["data"]["sessionId"]),
                          (GEMINI_JSONL, "gemini-cli", gemini)):
        growing = tmp_path / fmt / src.name
        growing.parent.mkdir()
        rest = grow(src, growing, 3)
        first = ids_of([growing])[src.name][0]
        with growing.open("ab") as f:
            f.writelines(rest)
        assert first == ids_of([growing])[src.name][0] == session_id(fmt, sid), fmt


def test_a_file_without_a_session_is_named_by_its_first_complete_record(tmp_path):
    log = tmp_path / "proxy.jsonl"
    rest = grow(REQUEST_LOG, log, 2)
    first_line = lines(REQUEST_LOG)[0].strip()
    expected = keyed_id("request-log", sha(b"first record\n" + first_line), 0)
    assert ids_of([log])["proxy.jsonl"] == [expected]
    with log.open("ab") as f:
        f.write(rest[0][: len(rest[0]) // 2])  # a line still being written
    assert ids_of([log])["proxy.jsonl"] == [expected]
    with log.open("ab") as f:
        f.write(rest[0][len(rest[0]) // 2:])
        f.writelines(rest[1:])
    assert ids_of([log])["proxy.jsonl"] == [expected]


def test_small_and_large_inputs_get_their_digest_and_key_alike(tmp_path):
    """A file its first 64 KB hold whole is hashed as it is read; a larger one on the hashing
    thread: the input's digest is the SHA-256 of its bytes and its runs' key its first record
    either way."""
    first_line = lines(REQUEST_LOG)[0].strip()
    expected = keyed_id("request-log", sha(b"first record\n" + first_line), 0)
    log = tmp_path / "proxy.jsonl"
    grow(REQUEST_LOG, log, 1)
    body = lines(REQUEST_LOG)
    sizes = []
    for _ in range(2):
        doc, _ = cook_paths([str(log)])
        (entry,) = doc["inputs"]
        assert entry["digest"] == sha(log.read_bytes())
        assert entry["traces"][0] == expected
        sizes.append(log.stat().st_size)
        with log.open("ab") as f:  # past 64 KB
            while f.tell() < 200_000:
                f.writelines(body)
    assert sizes[0] < 64 * 1024 < sizes[1]


def test_a_one_document_file_is_its_own_first_record(tmp_path):
    """A JSON document over many lines has no complete record before its end: its id follows
    its content, so a rewrite with other content is another run."""
    doc = tmp_path / "convs.json"
    convs = [{"id": "c0", "conversations": [{"from": "human", "value": "hello"}, {"from": "gpt", "value": "hi"}]}]
    doc.write_bytes(orjson.dumps(convs, option=orjson.OPT_INDENT_2))
    assert ids_of([doc])["convs.json"] == [keyed_id("sharegpt", sha(doc.read_bytes()), 0)]
    convs.append({"id": "c1", "conversations": [{"from": "human", "value": "again"}]})
    doc.write_bytes(orjson.dumps(convs, option=orjson.OPT_INDENT_2))
    digest = sha(doc.read_bytes())
    assert ids_of([doc])["convs.json"] == [keyed_id("sharegpt", digest, 0), keyed_id("sharegpt", digest, 1)]


def test_two_sessions_and_two_copies(tmp_path):
    """Different sessions get different ids; a copy of a session is that session."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        shutil.copy(CODEX, tmp_path / d / CODEX.name)
    other = SAMPLES / "codex" / "rollout-2026-03-14T09-31-44-0195aa00-2222-7000-8000-000000000002.jsonl"
    shutil.copy(other, tmp_path / "a" / other.name)
    ids = ids_of([tmp_path])
    assert ids[f"a/{CODEX.name}"] == ids[f"b/{CODEX.name}"]
    assert ids[f"a/{CODEX.name}"] != ids[f"a/{other.name}"]


def test_an_inspect_log_names_its_samples_by_eval_sample_and_epoch(tmp_path):
    """An Inspect log is rewritten as a whole while it is written: its samples keep their ids
    because they are named by the log's eval id, their sample id and epoch; listed or cooked."""
    import zipfile

    log = SAMPLES / "inspect_ai" / "2026-03-14T10-00-00+00-00_fix-bugs_Q7kR2mTn8vXbLc4pW9sYzA.eval"
    with zipfile.ZipFile(log) as z:
        eval_id = orjson.loads(z.read("header.json"))["eval"]["eval_id"]
        samples = [orjson.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    expected = {session_id("inspect-ai", f"{eval_id}/{s['id']}#{s['epoch']}") for s in samples}
    assert set(ids_of([log])[log.name]) == expected
    rows, _ = list_runs([str(log)])
    assert {r.trace_id for r in rows} == expected
