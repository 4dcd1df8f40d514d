"""Claude Code sessions: the bundled sample, usage counted once per API response, rewinds,
compaction, injected text, patches, sub-agents in their three layouts, stream-json, the
loglines export, detection and broken files. Expected figures are worked out here from the raw
records with plain json, never taken from the reader."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsers import pipeline
from parsers.cook.schema import cooked_errors
from parsers.formats import claude_code
from parsers.io.source import from_bytes, from_path
from parsers.model import Companion

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_data" / "claude_code"
SID = "5f0c1e2a-7b3d-4c59-9e1f-2a6b8c0d4e71"
SESSION = SAMPLE / "-home-user-notes-app" / f"{SID}.jsonl"
AGENT = SAMPLE / "-home-user-notes-app" / SID / "subagents" / "agent-a7c41d9.jsonl"
STREAM = SAMPLE / "claude-p-stream.jsonl"
USAGE_KEYS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")


def raw_usage(u: dict) -> dict:
    """Anthropic's usage as the API documents it: input_tokens leaves cache reads and writes
    out; cache_creation_input_tokens counts every cache write, of which cache_creation's
    ephemeral_1h_input_tokens were written for an hour (the rest for 5 minutes)."""
    return {"input": u.get("input_tokens", 0), "output": u.get("output_tokens", 0),
            "cache_read": u.get("cache_read_input_tokens", 0), "cache_write": u.get("cache_creation_input_tokens", 0),
            "cache_write_1h": (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)}


def cook(*paths) -> tuple[dict, list]:
    doc, summaries = pipeline.cook_paths([str(p) for p in paths])
    assert cooked_errors(doc) == []
    return doc, summaries


def lines(path: Path) -> list:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def per_response_usage(records: list) -> tuple[int, dict]:
    """(API responses, summed usage) with one usage per response: assistant lines grouped by
    requestId and message.id, the last line's usage taken."""
    last = {}
    for r in records:
        if isinstance(r, dict) and r.get("type") == "assistant" and isinstance(r.get("message"), dict):
            m = r["message"]
            if m.get("model") == "<synthetic>":
                continue
            last[(r.get("requestId"), m.get("id"))] = raw_usage(m.get("usage") or {})
    return len(last), {k: sum(u[k] for u in last.values()) for k in USAGE_KEYS}


def line_sum(records: list) -> dict:
    """What summing every line gives (the over-count)."""
    usages = [raw_usage(r["message"]["usage"]) for r in records if r.get("type") == "assistant"]
    return {k: sum(u[k] for u in usages) for k in USAGE_KEYS}


def by_id(doc: dict) -> dict:
    return {m["id"]: m for m in doc["messages"]}


def timeline(doc: dict, trace: dict) -> list[dict]:
    msgs = by_id(doc)
    return [msgs[i] for i in trace["timeline"]]


def trace_of(doc: dict, source_end: str, title: str | None = None) -> dict:
    found = [t for t in doc["traces"] if t["source"].endswith(source_end) and (title is None or t["title"] == title)]
    assert len(found) == 1, [t["title"] for t in doc["traces"]]
    return found[0]


def assert_calls_paired(msgs: list[dict]) -> int:
    calls = [tc["id"] for m in msgs for tc in m["tool_calls"] or ()]
    results = [m["tool_use_id"] for m in msgs if m["role"] == "tool_result"]
    assert sorted(calls) == sorted(results)
    return len(calls)


# -- the sample ---------------------------------------------------------------------------
def test_sample_session_counts_each_response_once():
    doc, _ = cook(SESSION)
    main = trace_of(doc, f"{SID}.jsonl", "Accent-insensitive search")
    raw = lines(SESSION)
    n, usage = per_response_usage(raw)
    assert main["totals"]["requests"] == n == 8
    assert {k: main["totals"][k] for k in USAGE_KEYS} == usage
    assert line_sum(raw)["output"] > usage["output"]  # summing lines would count the first response 4 times
    requests = [r for r in doc["requests"] if r["trace"] == main["id"]]
    # the first response is four lines: its usage is the last line's (212 output tokens, not 9)
    first = next(r for r in requests if r["id"] == "msg_01A")
    assert first["usage"]["output"] == 212
    assert main["problems"] == []
    assert main["meta"]["skipped_records"] == {"file-history-snapshot": 1, "progress": 2, "some-future-record": 1,
                                               "system/turn_duration": 1}


def test_sample_session_timeline_rewind_compaction_and_injected_text():
    doc, _ = cook(SESSION)
    main = trace_of(doc, f"{SID}.jsonl", "Accent-insensitive search")
    msgs = timeline(doc, main)
    texts = [m["content"] for m in msgs]
    # the rewind: the first try (u-015, a-016) is left out of the timeline, its request kept
    assert "Also write a test." not in texts and "Also write a test, but with unittest, not pytest." in texts
    assert main["meta"]["rewinds"] == 1
    assert any(r["id"] == "msg_01D" for r in doc["requests"] if r["trace"] == main["id"])
    # the compaction marker, then the summary, flagged
    k = next(i for i, m in enumerate(msgs) if m.get("compaction"))
    assert msgs[k]["role"] == "system" and msgs[k]["compaction"] == {"trigger": "manual", "pre_tokens": 9054}
    assert msgs[k + 1]["compaction_summary"] is True and msgs[k + 1]["content"].startswith("This session is being")
    # isMeta text is marked injected; nothing else is
    assert [m["content"][:24] for m in msgs if m.get("injected")] == ["<local-command-caveat>Ca"]
    assert assert_calls_paired(msgs) == 5
    assert msgs[0]["timestamp"] is not None and "isMeta" not in msgs[0]


def test_sample_session_patches_carry_line_numbers():
    doc, _ = cook(SESSION)
    main = trace_of(doc, f"{SID}.jsonl", "Accent-insensitive search")
    patches = {a["tool_use_id"]: a for a in main["artifacts"]}
    assert set(patches) == {"toolu_edit01", "toolu_write01"}
    edit = patches["toolu_edit01"]["content"]
    assert edit.startswith("--- a/home/user/notes-app/src/search.py\n+++ b/home/user/notes-app/src/search.py\n"
                           "@@ -1,3 +1,8 @@\n+import unicodedata\n")
    write = patches["toolu_write01"]["content"]
    assert write.startswith("--- /dev/null\n+++ b/home/user/notes-app/tests/test_search.py\n@@ -0,0 +1,8 @@\n"
                            "+import unittest\n")
    assert all(a["format"] == "unified-diff" and a["kind"] == "patch" for a in main["artifacts"])


def test_sample_sub_agent_is_its_own_trace_linked_to_its_call():
    doc, summaries = cook(SAMPLE / "-home-user-notes-app")
    main = trace_of(doc, f"{SID}.jsonl", "Accent-insensitive search")
    sub = trace_of(doc, f"{SID}.jsonl", "Check package versions")
    assert sub["parent"] == {"trace": main["id"], "call": "toolu_task01"}
    assert main["children"] == [{"trace": sub["id"], "call": "toolu_task01"}]
    assert "parent" not in main and "children" not in sub
    assert sub["outcome"] == "success" and sub["meta"]["sub_agent"] == {
        "agent_id": "a7c41d9", "type": "general-purpose", "call": "toolu_task01"}
    n, usage = per_response_usage(lines(AGENT))
    assert sub["totals"]["requests"] == n == 2 and {k: sub["totals"][k] for k in USAGE_KEYS} == usage
    assert sub["models"] == ["claude-haiku-4-5-20251001"]
    notes = {s.name.rsplit("/", 1)[-1]: s.note for s in summaries if s.note}
    assert set(notes) == {"agent-a7c41d9.jsonl", "agent-a7c41d9.meta.json"}
    assert all(n.endswith(f"read with {SID}.jsonl") for n in notes.values())


def test_stream_json_sample():
    doc, _ = cook(STREAM)
    (t,) = doc["traces"]
    raw = lines(STREAM)
    n, usage = per_response_usage(raw)
    result = raw[-1]
    assert t["totals"]["requests"] == n and {k: t["totals"][k] for k in USAGE_KEYS} == usage
    assert (t["outcome"], t["outcome_detail"], t["totals"]["stated_cost"], t["duration_ms"]) == \
        ("success", "success", result["total_cost_usd"], result["duration_ms"])
    assert sorted(x["name"] for x in doc["tools"]) == sorted(raw[0]["tools"])
    assert t["title"] == "How many notes does data/notes.json hold?"


# -- real files ---------------------------------------------------------------------------
def test_real_session_usage_is_the_per_response_sum(realdata):
    folder = realdata / "claude_code_session" / "spotter_ae4a77f8"
    session = folder / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    doc, _ = cook(session)
    main = next(t for t in doc["traces"] if "parent" not in t)
    raw = lines(session)
    n, usage = per_response_usage([r for r in raw if not r.get("isSidechain")])
    assert main["totals"]["requests"] == n
    assert {k: main["totals"][k] for k in USAGE_KEYS} == usage
    naive = line_sum(raw)
    assert naive["cache_read"] > 1.5 * usage["cache_read"]  # what summing lines would show
    # the Task result names its sub-agent: that file is linked to the call, the compaction run to the session
    task_result = next(r for r in raw if isinstance(r.get("toolUseResult"), dict) and r["toolUseResult"].get("agentId"))
    call = task_result["message"]["content"][0]["tool_use_id"]
    kids = {c["call"] for c in main["children"]}
    assert kids == {call, None}
    sub = next(t for t in doc["traces"] if t.get("parent", {}).get("call") == call)
    agent_raw = lines(folder / session.stem / "subagents" / f"agent-{task_result['toolUseResult']['agentId']}.jsonl")
    n, usage = per_response_usage(agent_raw)
    assert sub["totals"]["requests"] == n and {k: sub["totals"][k] for k in USAGE_KEYS} == usage
    assert sub["outcome"] == "success"
    compaction = next(m for m in timeline(doc, main) if m.get("compaction"))
    assert compaction["compaction"] == {"trigger": "manual", "pre_tokens": 142431}


def test_real_rewind_then_compaction(realdata):
    doc, _ = cook(realdata / "claude_code_session" / "claude-code-log_fixtures" / "dag_compact_after_rewind.jsonl")
    (t,) = doc["traces"]
    texts = [m["content"] for m in timeline(doc, t)]
    assert texts == ["Start", "Ready", "Second attempt", "Second answer", "Keep going", "Kept going",
                     "Conversation compacted (auto, 150,000 tokens before)", texts[7], "After compaction",
                     "Final answer"]
    assert texts[7].startswith("This session is being continued")
    assert t["totals"]["requests"] == 5  # the abandoned branch's response included


def test_real_inline_sidechains_link_by_prompt(realdata):
    path = realdata / "claude_code_session" / "ccv_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    doc, _ = cook(path)
    raw = lines(path)
    tasks = {b["input"].get("prompt"): b["id"] for r in raw if r.get("type") == "assistant" and not r.get("isSidechain")
             for b in r["message"]["content"] if isinstance(b, dict) and b.get("name") == "Task"}
    roots = [r for r in raw if r.get("isSidechain") and r.get("parentUuid") is None]
    main = next(t for t in doc["traces"] if "parent" not in t)
    assert len(doc["traces"]) == 1 + len(roots)
    want = sorted(tasks[r["message"]["content"]] for r in roots)
    assert sorted(c["call"] for c in main["children"]) == want
    main_n, main_usage = per_response_usage([r for r in raw if not r.get("isSidechain")])
    assert main["totals"]["requests"] == main_n and {k: main["totals"][k] for k in USAGE_KEYS} == main_usage


def test_real_flat_agent_files_only_of_their_session(realdata, tmp_path):
    src = realdata / "claude_code_session" / "codemie_2.0.64_flat_agents" / "-tmp-private"
    for f in src.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    # an agent file of another session in the same folder is not linked
    other = lines(src / "agent-50243ee8.jsonl")
    for r in other:
        r["sessionId"] = "0000-other"
    (tmp_path / "agent-0other01.jsonl").write_text("".join(json.dumps(r) + "\n" for r in other))
    doc, summaries = cook(tmp_path / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl")
    main = doc["traces"][0]
    assert len(main["children"]) == 2 and {c["call"] for c in main["children"]} == {None}
    assert len(doc["traces"]) == 3
    # each sub-agent's lines are its own file's: the trace names that file; the session names none
    msgs = by_id(doc)
    assert "records_file" not in main
    for sub in doc["traces"][1:]:
        own = lines(tmp_path / sub["records_file"])
        first = msgs[sub["timeline"][0]]
        assert sub["records_file"].startswith("agent-") and own[first["line"] - 1]["type"] == "user"
        assert own[first["line"] - 1]["message"]["content"] in (first["content"],
                                                                 [{"type": "text", "text": first["content"]}])


def test_real_files_all_cook_without_internal_errors(realdata):
    doc, summaries = cook(realdata / "claude_code_session", realdata / "claude_stream_json")
    for s in summaries:
        assert not any("internal error" in p["message"] for p in s.problems), s.line()
    edge = next(s for s in summaries if s.name.endswith("edge_cases.jsonl"))
    where = sorted((p["line"], p["path"]) for p in edge.problems)
    assert where == [(10, "/message/content"), (11, "/message"), (13, ""), (14, "/type"), (15, ""), (16, "")]


def test_loglines_export(realdata):
    path = realdata / "claude_code_session" / "simonw_sample_session_loglines.json"
    doc, _ = cook(path)
    (t,) = doc["traces"]
    logs = json.loads(path.read_text())["loglines"]
    n = sum(1 for r in logs if r.get("type") == "assistant")  # no message ids: each line a response
    assert t["totals"]["requests"] == n
    msgs = timeline(doc, t)
    assert assert_calls_paired(msgs) == sum(1 for r in logs if r.get("type") == "assistant"
                                            for b in r["message"]["content"] if b.get("type") == "tool_use")
    assert t["title"] == logs[0]["message"]["content"]


# -- detection ----------------------------------------------------------------------------
def test_sniff_declines_other_json_and_takes_agent_files_with_their_session(realdata):
    assert claude_code.sniff(from_path(realdata / "gemini_cli" / "codemie_logs.json")) is not None
    agent = from_path(AGENT, SAMPLE)
    assert isinstance(claude_code.sniff(agent), Companion)
    alone = from_bytes("agent-a7c41d9.jsonl", AGENT.read_bytes())
    assert claude_code.sniff(alone) is None
    assert claude_code.sniff(from_path(SESSION)) is None and claude_code.sniff(from_path(STREAM)) is None


# -- broken input -------------------------------------------------------------------------
def upload(text: str, name: str = "s.jsonl") -> tuple[dict, list]:
    doc, summaries = pipeline.cook_uploads([(name, text.encode())], fmt="claude-code")
    assert cooked_errors(doc) == []
    return doc, summaries


def test_truncated_last_line_is_a_problem_and_the_rest_loads():
    text = SESSION.read_text()
    cut = text[: len(text) - 40]  # the last line loses its end
    doc, (s,) = upload(cut)
    n = cut.count("\n") + 1
    assert [(p["line"], p["message"][:14]) for p in s.problems] == [(n, "not valid JSON")]
    assert doc["traces"][0]["totals"]["requests"] == 8


def test_wrong_types_are_problems_with_their_paths():
    recs = lines(SESSION)
    recs[4]["message"] = 42  # an assistant line
    recs[13]["toolUseResult"]["structuredPatch"] = [{"oldStart": "one", "lines": []}]
    recs[9]["message"]["content"] = None
    recs.insert(1, ["not", "a", "record"])
    recs.insert(2, {"type": 7})
    text = "".join(json.dumps(r) + "\n" for r in recs)
    doc, (s,) = upload(text)
    got = sorted((p["line"], p["path"]) for p in s.problems)
    assert got == [(2, ""), (3, "/type"), (7, "/message"), (12, "/message/content"),
                   (16, "/toolUseResult/structuredPatch/0")]
    main = doc["traces"][0]
    assert main["totals"]["requests"] == 8  # the response kept its other lines
    assert [a["tool_use_id"] for a in main["artifacts"]] == ["toolu_write01"]


def test_hostile_text_stays_text():
    rec = {"type": "user", "uuid": "x", "parentUuid": None, "sessionId": "s",
           "message": {"role": "user", "content": "<script>alert(1)</script>"}}
    doc, _ = upload(json.dumps(rec) + "\n")
    (t,) = doc["traces"]
    assert timeline(doc, t)[0]["content"] == "<script>alert(1)</script>"  # escaped where shown


def test_links_are_checked_by_the_cooked_schema():
    doc, _ = cook(SAMPLE / "-home-user-notes-app")
    sub = next(t for t in doc["traces"] if "parent" in t)
    sub["parent"]["trace"] = "not an id"
    sub["parent"]["extra"] = 1
    k = doc["traces"].index(sub)
    assert {e[0] for e in cooked_errors(doc)} == {f"/traces/{k}/parent", f"/traces/{k}/parent/trace"}


def test_real_sub_agent_relayed_by_progress_records(realdata):
    """A sub-agent whose own file is not there is read from the `agent_progress` records that
    relayed its messages to the session."""
    path = realdata / "claude_code_session" / "spotter_subagent_2.1.38.jsonl"
    doc, _ = cook(path)
    raw = lines(path)
    relayed = [r for r in raw if r.get("type") == "progress" and r["data"].get("type") == "agent_progress"]
    (call,) = {r["parentToolUseID"] for r in relayed}
    main = next(t for t in doc["traces"] if "parent" not in t)
    (child,) = [t for t in doc["traces"] if "parent" in t]
    assert child["parent"] == {"trace": main["id"], "call": call} and main["children"] == [
        {"trace": child["id"], "call": call}]
    n, usage = per_response_usage([r["data"]["message"] for r in relayed])
    assert child["totals"]["requests"] == n and {k: child["totals"][k] for k in USAGE_KEYS} == usage
    n, usage = per_response_usage(raw)
    assert main["totals"]["requests"] == n and {k: main["totals"][k] for k in USAGE_KEYS} == usage


# Anthropic's price table (USD per million tokens): input, output, cache read, 5-minute cache
# write (1.25 x input), 1-hour cache write (2 x input).
ANTHROPIC_PRICES = {"claude-opus-4-6": (5, 25, 0.5, 6.25, 10), "claude-haiku-4-5-20251001": (1, 5, 0.1, 1.25, 2)}


def test_real_one_hour_cache_writes_cost_their_own_rate(realdata):
    """Claude Code 2.1 writes its prompt cache for an hour: every response of this session
    (and of the sub-agent it relayed) costs its usage at Anthropic's rates, the 1-hour writes
    at twice the input price, not at the 5-minute write price."""
    path = realdata / "claude_code_session" / "spotter_subagent_2.1.38.jsonl"
    raw = lines(path)
    responses = {}
    for r in raw + [r["data"]["message"] for r in raw if r.get("type") == "progress"
                    and r["data"].get("type") == "agent_progress"]:
        if r.get("type") == "assistant" and r["message"].get("model") != "<synthetic>":
            responses[r["message"]["id"]] = (r["message"]["model"], raw_usage(r["message"]["usage"]))
    def cost(model: str, u: dict) -> float:
        inp, out, read, write_5m, write_1h = ANTHROPIC_PRICES[model]
        return (u["input"] * inp + u["output"] * out + u["cache_read"] * read
                + (u["cache_write"] - u["cache_write_1h"]) * write_5m + u["cache_write_1h"] * write_1h) / 1e6

    expected = {mid: cost(model, u) for mid, (model, u) in responses.items()}
    # every cache write of this session was a 1-hour write
    assert sum(u["cache_write"] for _, u in responses.values()) == 40_127
    assert sum(u["cache_write_1h"] for _, u in responses.values()) == 40_127
    doc, _ = cook(path)
    costs = {r["id"]: r["cost"] for r in doc["requests"]}
    assert costs == pytest.approx(expected, rel=1e-9)
    assert sum(t["totals"]["cost"] for t in doc["traces"]) == pytest.approx(sum(expected.values()), rel=1e-9)
    for r in doc["requests"]:
        want = dict(zip(("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok"),
                        ANTHROPIC_PRICES[r["model"]]))
        assert {k: r["price"][k] for k in want} == want


def test_agent_file_alone_is_a_run_of_its_own():
    doc, (s,) = upload(AGENT.read_text(), name="agent-a7c41d9.jsonl")
    (t,) = doc["traces"]
    assert s.format == "claude-code" and "parent" not in t
    prompt = lines(AGENT)[0]["message"]["content"]
    assert t["task"] == prompt and t["title"] == prompt[:79] + "…"  # a title is cut at 80 characters
    assert t["totals"]["requests"] == per_response_usage(lines(AGENT))[0]


def test_a_session_begun_with_a_slash_command_has_the_command_as_typed_for_task_and_title():
    records = [
        {"type": "user", "uuid": "u0", "parentUuid": None, "sessionId": "s-cmd", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "<command-message>beads:create</command-message>\n"
                                                "<command-name>/beads:create</command-name>\n"
                                                "<command-args>a plan for the parser</command-args>"}},
        {"type": "assistant", "uuid": "a0", "parentUuid": "u0", "sessionId": "s-cmd", "requestId": "r0",
         "timestamp": "2026-01-01T00:00:02Z",
         "message": {"id": "m0", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 3, "output_tokens": 1}}},
    ]
    doc, _ = upload("".join(json.dumps(r) + "\n" for r in records))
    (t,) = doc["traces"]
    assert t["task"] == t["title"] == "/beads:create a plan for the parser"


def test_runs_are_referred_to_by_their_own_ids():
    """A session is referred to by its session id and its sub-agents point at it with the call
    that started them; a sub-agent file read on its own by its agent id, pointing at the
    session its records name (the call that started it is in the session, not in the file)."""
    first = lines(AGENT)[0]
    (alone,) = claude_code.FORMAT.parse(from_bytes(AGENT.name, AGENT.read_bytes())).traces
    assert (alone.ref, alone.parent) == (first["agentId"], (first["sessionId"], None))
    session, sub = claude_code.FORMAT.parse(from_path(SESSION, SAMPLE)).traces
    assert (session.ref, session.parent) == (SID, None)
    calls = [b["id"] for r in lines(SESSION) if r.get("type") == "assistant" for b in r["message"]["content"]
             if b.get("type") == "tool_use" and b["name"] in ("Task", "Agent")]
    assert sub.parent == (SID, calls[0]) and len(calls) == 1


def test_an_unknown_first_record_type_is_taken_when_conversation_follows():
    recs = lines(SESSION)
    head = {"type": "permission-mode", "permissionMode": "default", "sessionId": SID}
    text = "".join(json.dumps(r) + "\n" for r in [head, *recs])
    assert claude_code.sniff(from_bytes("s.jsonl", text.encode())) is None
    alone = json.dumps(head) + "\n" + json.dumps({"type": "other", "sessionId": SID}) + "\n"
    assert claude_code.sniff(from_bytes("s.jsonl", alone.encode())) is not None


def test_uploaded_project_folder_with_a_broken_meta_file():
    folder = SESSION.parent
    files = [(f"p/{p.relative_to(folder).as_posix()}", p.read_bytes()) for p in folder.rglob("*") if p.is_file()]
    files = [(n, b"{broken" if n.endswith(".meta.json") else data) for n, data in files]
    doc, summaries = pipeline.cook_uploads(files)
    assert cooked_errors(doc) == []
    sub = next(t for t in doc["traces"] if "parent" in t)
    assert sub["parent"]["call"] == "toolu_task01" and sub["title"] == "Check package versions"  # from the call
    assert [(p["file"], p["message"][:38]) for p in sub["problems"]] == [
        (f"p/{SID}/subagents/agent-a7c41d9.meta.json", "the sub-agent's description was not re")]


def test_queued_prompts_are_user_messages_and_no_branch():
    recs = lines(SESSION)
    k = next(i for i, r in enumerate(recs) if r.get("uuid") == "u-008")  # while the sub-agent runs
    queued = {"type": "attachment", "parentUuid": "a-006", "uuid": "q-1", "sessionId": SID,
              "timestamp": "2026-01-15T09:00:40.000Z",
              "attachment": {"type": "queued_command", "prompt": "and keep the old behaviour behind a flag",
                             "commandMode": "prompt"}}
    recs.insert(k, queued)
    recs[k + 1]["isMeta"] = True  # a tool result marked meta is not hidden text
    doc, (s,) = upload("".join(json.dumps(r) + "\n" for r in recs))
    main = doc["traces"][0]
    msgs = timeline(doc, main)
    q = [m for m in msgs if m.get("queued")]
    assert [(m["role"], m["content"]) for m in q] == [("user", "and keep the old behaviour behind a flag")]
    assert main["meta"]["rewinds"] == 1  # the real rewind only
    assert [m["role"] for m in msgs if m.get("injected")] == ["user"]


def test_stream_json_sub_agent_events_are_their_own_run():
    events = lines(STREAM)
    call = {"type": "assistant", "session_id": "s", "parent_tool_use_id": None, "message": {
        "id": "msg_t", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "usage": {"input_tokens": 5,
                                                                                           "output_tokens": 9},
        "content": [{"type": "tool_use", "id": "toolu_T", "name": "Task",
                     "input": {"description": "Count notes", "prompt": "Count the notes."}}]}}
    sub = [{"type": "user", "session_id": "s", "parent_tool_use_id": "toolu_T",
            "message": {"role": "user", "content": [{"type": "text", "text": "Count the notes."}]}},
           {"type": "assistant", "session_id": "s", "parent_tool_use_id": "toolu_T", "message": {
               "id": "msg_s", "role": "assistant", "model": "claude-haiku-4-5-20251001",
               "usage": {"input_tokens": 7, "output_tokens": 3}, "content": [{"type": "text", "text": "42"}]}},
           {"type": "user", "session_id": "s", "parent_tool_use_id": None, "message": {"role": "user", "content": [
               {"type": "tool_result", "tool_use_id": "toolu_T", "content": "42"}]}}]
    text = "".join(json.dumps(r) + "\n" for r in [*events[:2], call, *sub, *events[2:]])
    doc, _ = upload(text)
    main, child = doc["traces"]
    assert child["parent"] == {"trace": main["id"], "call": "toolu_T"} and child["title"] == "Count notes"
    assert child["totals"]["requests"] == 1 and child["totals"]["output"] == 3
    assert main["totals"]["requests"] == 3 and assert_calls_paired(timeline(doc, main)) == 2
