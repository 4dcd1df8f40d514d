"""Codex CLI sessions: the bundled samples and the real rollouts against counts taken from the raw
records here (plain json, no reader code), sub-agent forks, zstandard files, `codex exec --json`,
the oldest bare records, apply_patch diffs, detection and broken input."""
from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import pytest
import zstandard

from parsers import pipeline
from parsers.cook.schema import cooked_errors
from parsers.formats import codex
from parsers.io.source import from_bytes
from parsers.registry import detect

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_data" / "codex"
MAIN = SAMPLE / "rollout-2026-03-14T09-30-00-0195aa00-1111-7000-8000-000000000001.jsonl"
CHILD = SAMPLE / "rollout-2026-03-14T09-31-44-0195aa00-2222-7000-8000-000000000002.jsonl"
EXEC = SAMPLE / "codex-exec-2026-03-14.jsonl"
LEGACY = SAMPLE / "rollout-2025-05-20T10-00-00-0195aa00-4444-7000-8000-000000000004.jsonl"
CODEMIE = "codemie_rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
LOCALPUSH = "localpush_rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def cook(files: dict[str, bytes]) -> dict:
    doc, _ = pipeline.cook_uploads(list(files.items()))
    assert cooked_errors(doc) == []
    return doc


def cook_one(name: str, data: bytes) -> tuple[dict, dict]:
    doc = cook({name: data})
    (trace,) = doc["traces"]
    assert trace["format"] == "codex"
    return doc, trace


def timeline(doc: dict, trace: dict) -> list[dict]:
    by_id = {m["id"]: m for m in doc["messages"]}
    return [by_id[i] for i in trace["timeline"]]


def raw_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def expected_usage(totals: list[dict]) -> dict:
    """Usage of a thread from its running totals, the rule Codex's token_count implies: the last
    total minus the first one the file did not produce (a fork's copy), cached input split out."""
    last, base = totals[-1], totals[0]
    d = {k: last.get(k, 0) - base.get(k, 0) for k in last}
    return {"input": d["input_tokens"] - d["cached_input_tokens"], "cache_read": d["cached_input_tokens"],
            "output": d["output_tokens"], "reasoning": d["reasoning_output_tokens"]}


def token_totals(recs: list[dict]) -> list[dict]:
    return [r["payload"]["info"]["total_token_usage"] for r in recs
            if r.get("type") == "event_msg" and r["payload"].get("type") == "token_count" and r["payload"].get("info")]


def check_pairs(msgs: list[dict], recs: list[dict]) -> None:
    """Every function / custom tool call of the raw file is one tool call, and its output (when
    the file has one) one tool result with its call_id, after it."""
    call_ids = [r["payload"]["call_id"] for r in recs if r.get("type") == "response_item"
                and r["payload"].get("type") in CALLS]
    output_ids = {r["payload"]["call_id"] for r in recs if r.get("type") == "response_item"
                  and r["payload"].get("type") in OUTPUTS}
    calls = [(n, c["id"]) for n, m in enumerate(msgs) for c in m["tool_calls"] or ()]
    results = [(n, m["tool_use_id"]) for n, m in enumerate(msgs) if m["role"] == "tool_result"]
    for cid in call_ids:
        (at,) = [n for n, c in calls if c == cid]
        answered = [n for n, c in results if c == cid]
        assert len(answered) == (1 if cid in output_ids else 0)
        assert all(n > at for n in answered)


def check_usage(trace: dict, recs: list[dict]) -> None:
    """Usage totals from the running totals of a whole thread, and one request per distinct
    running total (each a model response)."""
    totals = token_totals(recs)
    usage = expected_usage([dict.fromkeys(totals[0], 0)] + totals)
    assert {k: trace["totals"][k] for k in usage} == usage
    distinct = [t for n, t in enumerate(totals) if n == 0 or t != totals[n - 1]]
    assert trace["totals"]["requests"] == len(distinct)


# -- the bundled samples ------------------------------------------------------------------
def test_main_sample_against_raw_records():
    recs = raw_records(MAIN)
    doc, trace = cook_one(MAIN.name, MAIN.read_bytes())
    msgs = timeline(doc, trace)
    items = [r["payload"] for r in recs if r["type"] == "response_item"]
    reasoning = [i for i in items if i["type"] == "reasoning" and i["summary"]]
    expected_messages = (sum(1 for i in items if i["type"] in ("message",) + CALLS + OUTPUTS) + len(reasoning)
                         + sum(1 + bool(r["payload"].get("message")) for r in recs if r["type"] == "compacted"))
    assert trace["totals"]["messages"] == len(msgs) == expected_messages
    assert trace["totals"]["tool_calls"] == sum(1 for i in items if i["type"] in CALLS)
    check_pairs(msgs, recs)
    check_usage(trace, recs)
    assert trace["models"] == ["gpt-5-codex"]
    assert trace["title"].startswith("Make slugify() collapse")
    assert [m["role"] for m in msgs if m["role"] == "thinking"] == ["thinking"]
    assert msgs[[m["role"] for m in msgs].index("thinking")]["content"].startswith("**Reading the current")
    failed = [m for m in msgs if m["role"] == "tool_result" and m["is_error"]]
    assert failed == []  # "Exit code: 1" in a plain-text output is the command's, not the tool's failure
    (k,) = [i for i, m in enumerate(msgs) if m.get("compaction")]  # the marker, then the summary it left
    (record,) = [r["payload"] for r in recs if r["type"] == "compacted"]
    assert msgs[k]["compaction"] == {"replacement_items": len(record.get("replacement_history") or [])}
    assert msgs[k + 1]["compaction_summary"] is True and msgs[k + 1]["content"] == record["message"]
    assert "Summary: slugify()" in msgs[k + 1]["content"]
    assert trace["meta"]["session_id"] == "0195aa00-1111-7000-8000-000000000001"
    assert "parent_session" not in trace["meta"]


def test_reasoning_effort_rides_on_each_turn():
    doc, trace = cook_one(MAIN.name, MAIN.read_bytes())
    efforts = [m.get("effort") for m in timeline(doc, trace) if m.get("effort")]
    raw = [r["payload"]["effort"] for r in raw_records(MAIN) if r["type"] == "turn_context"]
    assert efforts[0] == raw[0] and efforts[-1] == raw[-1] == "high"
    assert len(efforts) == trace["totals"]["requests"]


def test_apply_patch_becomes_a_unified_diff_artifact():
    recs = raw_records(MAIN)
    doc, trace = cook_one(MAIN.name, MAIN.read_bytes())
    (art,) = trace["artifacts"]
    applied = next(r["payload"] for r in recs if r["payload"].get("type") == "patch_apply_end")
    call = next(r["payload"] for r in recs if r["payload"].get("type") == "custom_tool_call")
    assert art["kind"] == "patch" and art["format"] == "unified-diff"
    assert art["files"] == list(applied["changes"]) and art["applied"] is True
    assert art["call_id"] == art["tool_use_id"] == call["call_id"]  # the timeline shows it in the call's place
    # Codex's own hunks, with their line numbers, under file headers.
    assert art["content"].startswith("--- a/src/slug.py\n+++ b/src/slug.py\n"
                                     + applied["changes"]["src/slug.py"]["unified_diff"])
    added = applied["changes"]["tests/test_slug.py"]["content"].splitlines()
    assert f"--- /dev/null\n+++ b/tests/test_slug.py\n@@ -0,0 +1,{len(added)} @@\n" in art["content"]
    # The call keeps its arguments readable: the patch text itself.
    (tool_use,) = [m for m in timeline(doc, trace) if m["tool_calls"] and m["tool_calls"][0]["name"] == "apply_patch"]
    assert tool_use["tool_calls"][0]["arguments"] == call["input"]


def parsed(path_or_name, data: bytes | None = None):
    src = from_bytes(path_or_name.name, path_or_name.read_bytes()) if data is None else from_bytes(path_or_name, data)
    (t,) = codex.FORMAT.parse(src).traces
    return t


def test_sub_agent_names_its_parent_thread_and_spawning_call():
    """A sub-agent's trace is referred to by its own thread id and points at its parent thread
    and the parent's call that spawned it: the copied parent history ends while that call runs
    (the one copied call without its output)."""
    recs = raw_records(CHILD)
    own = recs[0]["payload"]
    parent_id = own["source"]["subagent"]["thread_spawn"]["parent_thread_id"]
    copied = [r["payload"] for r in recs[1:] if r["type"] == "response_item" and r["timestamp"] <= "2026-03-14T09:31:45"]
    answered = {p["call_id"] for p in copied if p["type"] in OUTPUTS}
    (spawn,) = [p["call_id"] for p in copied if p["type"] in CALLS and p["call_id"] not in answered]
    assert spawn == "call_spawn_1"  # the parent's spawn_agent call, whose output names this thread
    main_out = [r["payload"] for r in raw_records(MAIN) if r["payload"].get("call_id") == spawn
                and r["payload"]["type"] in OUTPUTS]
    assert json.loads(main_out[0]["output"])["agent_id"] == own["id"]
    child = parsed(CHILD)
    assert (child.ref, child.parent) == (own["id"], (parent_id, spawn))
    main = parsed(MAIN)
    assert (main.ref, main.parent) == (raw_records(MAIN)[0]["payload"]["id"], None)


def fork_rollout(copied_items: list[dict]) -> bytes:
    meta = {"id": "child-1", "timestamp": "2026-03-14T09:31:44.250Z", "forked_from_id": "parent-1",
            "source": {"subagent": {"thread_spawn": {"parent_thread_id": "parent-1", "depth": 1}}}}
    recs = [{"timestamp": "2026-03-14T09:31:44.300Z", "type": "session_meta", "payload": meta},
            {"timestamp": "2026-03-14T09:31:44.301Z", "type": "session_meta", "payload": {**meta, "id": "parent-1"}}]
    recs += [{"timestamp": "2026-03-14T09:31:44.302Z", "type": "response_item", "payload": p} for p in copied_items]
    recs.append({"timestamp": "2026-03-14T09:31:50.000Z", "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Review it"}]}})
    return b"\n".join(orjson.dumps(r) for r in recs)


@pytest.mark.parametrize("copied,call", [
    ([], None),  # spawned without the parent's history: no call named
    ([{"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
      {"type": "function_call_output", "call_id": "c1", "output": "ok"},
      {"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "c2"}], "c2"),
    ([{"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "c1"},
      {"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "c2"}], None),  # which one?
])
def test_sub_agent_spawning_call_only_when_the_copy_shows_it(copied, call):
    t = parsed("rollout-child.jsonl", fork_rollout(copied))
    assert (t.ref, t.parent) == ("child-1", ("parent-1", call))


def test_apply_patch_text_in_unified_diff_form():
    text = ("*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Update File: b.py\n*** Move to: c.py\n"
            "@@ def f():\n     x = 1\n-    return x\n+    return x + 1\n*** Delete File: d.md\n*** End Patch\n")
    diff, files = codex.apply_patch_to_diff(text)
    assert files == ["a.txt", "b.py", "d.md"]
    assert diff == ("--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
                    "--- a/b.py\n+++ b/c.py\n@@ -0,2 +0,2 @@ def f():\n     x = 1\n-    return x\n+    return x + 1\n"
                    "--- a/d.md\n+++ /dev/null\n")
    # absolute paths are named as git names them: a/ and b/ then the path without its slash
    diff, files = codex.apply_patch_to_diff("*** Begin Patch\n*** Update File: /home/u/x.py\n"
                                            "*** Move to: /home/u/y.py\n@@\n-a\n+b\n*** End Patch\n")
    assert files == ["/home/u/x.py"] and diff.startswith("--- a/home/u/x.py\n+++ b/home/u/y.py\n")


def test_sub_agent_links_its_parent_and_counts_copies_once():
    recs = raw_records(CHILD)
    doc = cook({MAIN.name: MAIN.read_bytes(), CHILD.name: CHILD.read_bytes()})
    child = next(t for t in doc["traces"] if t["source"] == CHILD.name)
    parent = next(t for t in doc["traces"] if t["source"] == MAIN.name)
    own_meta = recs[0]["payload"]
    parent_id = own_meta["source"]["subagent"]["thread_spawn"]["parent_thread_id"]
    assert child["meta"]["parent_session"] == parent_id == parent["meta"]["session_id"]
    # The copy: the parent's session_meta and what follows it at the fork instant.
    copy_start = next(i for i, r in enumerate(recs) if r["type"] == "session_meta" and r["payload"]["id"] == parent_id)
    copy_end = next(i for i, r in enumerate(recs) if i > copy_start and r["type"] == "event_msg"
                    and r["payload"]["type"] == "task_started")
    assert child["meta"]["copied_from_parent"] == {"records": copy_end - copy_start, "thread": parent_id}
    own = recs[copy_end:]
    items = [r["payload"] for r in own if r["type"] == "response_item"]
    assert child["totals"]["messages"] == sum(1 for i in items if i["type"] in ("message",) + CALLS + OUTPUTS)
    assert child["totals"]["tool_calls"] == sum(1 for i in items if i["type"] in CALLS)
    usage = expected_usage(token_totals(recs[copy_start:copy_end])[-1:] + token_totals(own))
    assert {k: child["totals"][k] for k in usage} == usage
    assert child["models"] == [r["payload"]["model"] for r in own if r["type"] == "turn_context"]
    check_pairs(timeline(doc, child), own)


def test_exec_json_output():
    recs = raw_records(EXEC)
    doc, trace = cook_one(EXEC.name, EXEC.read_bytes())
    msgs = timeline(doc, trace)
    done = [r["item"] for r in recs if r["type"] == "item.completed"]
    assert len(msgs) == sum(2 if i["type"] == "command_execution" else 1 for i in done)
    commands = [i for i in done if i["type"] == "command_execution"]
    assert trace["totals"]["tool_calls"] == len(commands)
    results = {m["tool_use_id"]: m for m in msgs if m["role"] == "tool_result"}
    for c in commands:
        assert results[c["id"]]["content"] == c["aggregated_output"]
        assert bool(results[c["id"]]["is_error"]) == (c["exit_code"] != 0)
    # turn.completed usage is the thread's running total.
    usage = expected_usage([{"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}]
                           + [{**r["usage"], "reasoning_output_tokens": 0} for r in recs if r["type"] == "turn.completed"])
    assert {k: trace["totals"][k] for k in usage} == usage
    assert trace["meta"]["session_id"] == recs[0]["thread_id"]


def test_bare_records_of_the_oldest_rollouts():
    recs = raw_records(LEGACY)
    doc, trace = cook_one(LEGACY.name, LEGACY.read_bytes())
    msgs = timeline(doc, trace)
    typed = [r for r in recs if "type" in r]
    assert len(msgs) == len(typed)
    assert trace["meta"]["session_id"] == recs[0]["id"]
    assert trace["problems"] == []
    (art,) = trace["artifacts"]  # apply_patch given to the shell tool
    assert art["tool"] == "shell" and art["files"] == ["hello.py"]
    assert "-print('hi')\n+print('hello')\n" in art["content"]
    result = next(m for m in msgs if m["role"] == "tool_result")
    output = json.loads(typed[3]["output"])
    assert result["content"] == output["output"] and not result["is_error"]


def test_zstandard_rollout_reads_as_the_plain_one():
    plain = MAIN.read_bytes()
    packed = zstandard.ZstdCompressor().compress(plain)
    name = MAIN.name + ".zst"
    assert detect(from_bytes(name, packed)).name == "codex"
    _, want = cook_one(MAIN.name, plain)
    _, got = cook_one(name, packed)
    assert got["totals"] == want["totals"] and got["artifacts"] == want["artifacts"]


def test_damaged_zstandard_stream_keeps_what_came_before():
    texts = [os.urandom(40).hex() for _ in range(8000)]  # text that does not compress away: many blocks
    recs = [META] + [env("response_item", {"type": "message", "role": "user", "content": t}) for t in texts]
    packed = zstandard.ZstdCompressor(level=1).compress(lines(*recs))
    doc, trace = cook_one("rollout-cut.jsonl.zst", packed[: len(packed) // 2])
    messages = [p["message"] for p in problems_of(doc, trace)]
    assert any(m.startswith("the compressed stream is damaged") for m in messages), messages
    got = [m["content"] for m in timeline(doc, trace)]
    assert 0 < len(got) < len(texts) and got == texts[:len(got)]
    # Damaged from its first byte: the file is still recognised by its name, and says why it is empty.
    doc, _ = pipeline.cook_uploads([("rollout-bad.jsonl.zst", packed[:8])])
    assert doc["inputs"][0]["format"] == "codex" and doc["inputs"][0]["problems"]


# -- the real rollouts --------------------------------------------------------------------
@pytest.mark.parametrize("name", [CODEMIE, LOCALPUSH])
def test_real_rollouts_against_raw_records(realdata, name):
    path = realdata / "codex_rollout" / name
    recs = raw_records(path)
    doc, trace = cook_one(name, path.read_bytes())
    msgs = timeline(doc, trace)
    items = [r["payload"] for r in recs if r["type"] == "response_item"]
    assert trace["totals"]["tool_calls"] == sum(1 for i in items if i["type"] in CALLS + ("web_search_call",))
    check_pairs(msgs, recs)
    check_usage(trace, recs)
    assert trace["models"] == sorted({r["payload"]["model"] for r in recs if r["type"] == "turn_context"})
    compacted = sum(1 for r in recs if r["type"] == "compacted")
    assert sum(1 for m in msgs if m.get("compaction")) == compacted


def test_real_rollout_patch_artifacts(realdata):
    path = realdata / "codex_rollout" / CODEMIE
    recs = raw_records(path)
    _, trace = cook_one(CODEMIE, path.read_bytes())
    applied = [r["payload"] for r in recs if r["payload"].get("type") == "patch_apply_end"]
    assert [a["call_id"] for a in trace["artifacts"]] == [p["call_id"] for p in applied]
    for art, p in zip(trace["artifacts"], applied):
        for file, change in p["changes"].items():
            assert file.startswith("/")  # absolute: named as git names it, a/ and b/ then the path without its slash
            assert f"--- a{file}\n+++ b{file}\n{change['unified_diff']}" in art["content"]
            assert "a//" not in art["content"] and "b//" not in art["content"]


def test_running_totals_that_start_again(realdata):
    """Totals that shrink (fixtures of `turn.completed`) start a new count: that turn is taken whole."""
    path = realdata / "codex_rollout" / "agent-sessions_codex_052_raw.jsonl"
    usages = [r["payload"]["usage"] for r in raw_records(path) if r["payload"].get("type") == "turn.completed"]
    assert usages[1]["output_tokens"] < usages[0]["output_tokens"]
    _, trace = cook_one(path.name, path.read_bytes())
    assert trace["totals"]["output"] == usages[0]["output_tokens"] + usages[1]["output_tokens"]
    assert trace["totals"]["input"] == sum(u["input_tokens"] - u["cached_input_tokens"] for u in usages)


def test_every_real_file_cooks(realdata):
    folder = realdata / "codex_rollout"
    for path in sorted(folder.glob("*.jsonl")):
        assert detect(from_bytes(path.name, path.read_bytes())).name == "codex", path.name
        doc, trace = cook_one(path.name, path.read_bytes())
        assert trace["meta"].get("session_id")


# -- detection and broken input -----------------------------------------------------------
def test_other_jsonl_is_declined():
    claude = b'{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s"}\n'
    assert codex.sniff(from_bytes("session.jsonl", claude)) is not None
    log = b'{"id":"r1","timestamp":"2026-01-01T00:00:00Z","request":{"messages":[]},"response":{}}\n'
    assert codex.sniff(from_bytes("log.jsonl", log)) is not None
    assert codex.sniff(from_bytes("x.jsonl.zst", b"\x28\xb5\x2f\xfdnot a frame")) is not None


def lines(*recs) -> bytes:
    return b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in recs)


def env(typ: str, payload, ts: str = "2026-03-14T09:30:00Z") -> dict:
    return {"timestamp": ts, "type": typ, "payload": payload}


META = env("session_meta", {"id": "s-1", "timestamp": "2026-03-14T09:30:00Z", "cwd": "/w", "source": "cli"})
USER = env("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]})
ANSWER = env("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]})


def problems_of(doc: dict, trace: dict) -> list[dict]:
    return doc["inputs"][0]["problems"] + trace["problems"]


def test_truncated_last_line_is_a_problem_and_the_rest_loads():
    data = lines(META, USER, ANSWER) + orjson.dumps(ANSWER)[:30]
    doc, trace = cook_one("rollout-a.jsonl", data)
    assert [m["content"] for m in timeline(doc, trace)] == ["hi", "ok"]
    (p,) = problems_of(doc, trace)
    assert p["line"] == 4 and "not valid JSON" in p["message"]


def test_wrong_types_are_problems_with_their_paths():
    recs = [
        META,
        env("response_item", "not an object"),
        USER,
        env("response_item", {"type": "function_call", "name": "exec", "arguments": "{}", "call_id": {"x": 1}}),
        env("response_item", {"type": "function_call", "name": 7, "arguments": "{nope", "call_id": "c2"}),
        env("response_item", {"type": "function_call_output", "call_id": "c2", "output": 12}),
        env("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": "12", "output_tokens": 3}}}),
        env("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": -5, "output_tokens": 3}}}),
        env("event_msg", {"type": "token_count", "info": [1, 2]}),
        {"timestamp": 1e20, "type": "response_item", "payload": ANSWER["payload"]},
        env("compacted", {"message": {"x": 1}}),
        ["an", "array"],
        env("event_msg", {"type": "something_new", "x": 1}),
        {"type": "a_record_type_nobody_knows"},
        {"timestamp": "2026-03-14T09:30:00Z", "type": None, "payload": USER["payload"]},
        env("event_msg", {"type": ["token_count"]}),
    ]
    doc, trace = cook_one("rollout-b.jsonl", lines(*recs))
    found = {(p["line"], p["path"]) for p in problems_of(doc, trace)}
    assert found == {(2, "/payload"), (4, "/payload/call_id"), (5, "/payload/name"), (5, "/payload/arguments"),
                     (6, "/payload/output"), (7, "/payload/info/total_token_usage/input_tokens"),
                     (8, "/payload/info/total_token_usage/input_tokens"), (9, "/payload/info"),
                     (10, "/timestamp"), (11, "/payload/message"), (12, ""), (15, "/type"), (16, "/payload/type")}
    msgs = timeline(doc, trace)
    # Every good record loads: the user message, both calls, the output, the answer, the compaction
    # (its marker, and its summary as JSON text).
    assert [m["role"] for m in msgs] == ["user", "tool_use", "tool_use", "tool_result", "assistant", "system", "system"]
    assert trace["totals"]["input"] == 0 and trace["totals"]["output"] == 0
    assert trace["meta"]["skipped_records"] == {"a_record_type_nobody_knows": 1, "event_msg something_new": 1}


def test_hostile_text_is_kept_as_text():
    evil = "<img src=x onerror=alert(1)>\u202e"
    rec = env("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": evil}]})
    doc, trace = cook_one("rollout-c.jsonl", lines(META, USER, rec))
    assert timeline(doc, trace)[-1]["content"] == evil


def test_forced_on_another_format_says_so():
    log = lines({"id": "r1", "timestamp": "2026-01-01T00:00:00Z", "request": {"messages": []}, "response": {}})
    doc, _ = pipeline.cook_uploads([("log.jsonl", log)], fmt="codex")
    assert doc["traces"] == []
    (p,) = doc["inputs"][0]["problems"]
    assert p["message"].startswith("no Codex record in the file")


def test_what_codex_puts_in_as_the_users_is_marked_injected():
    def said(text):
        return env("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    agents = "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nRun the tests.\n</INSTRUCTIONS>"
    context = "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"
    doc, trace = cook_one("rollout-i.jsonl", lines(META, said(agents), said(context), said("Fix the parser"), ANSWER))
    msgs = timeline(doc, trace)
    assert [(m["content"], m.get("injected")) for m in msgs if m["role"] == "user"] == [
        (agents, True), (context, True), ("Fix the parser", None)]
    assert trace["title"].startswith("Fix the parser") and trace["task"] == "Fix the parser"
