"""Tests for parsers.formats.arena: SWE Arena / FastChat conversation logs with their sandbox logs."""
from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import orjson
import pytest

from parsers.pipeline import cook_paths, cook_uploads
from parsers.formats.arena import FORMAT, parse, role_of, sniff
from parsers.registry import detect
from parsers.io.source import expand, from_bytes
from parsers.cook.schema import cooked_errors

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_data" / "arena"
DAY = SAMPLE / "logs" / "2025_01_15"
GOLDEN = Path(__file__).resolve().parent / "golden" / "arena_sample.json"
# Every address the sample logs carry, in `ip` fields, message text and sandbox output.
SAMPLE_IPS = ["203.0.113.42", "2001:db8:85a3::8a2e:370:7334", "192.0.2.17", "198.51.100.23",
              "2001:db8::1f", "198.51.100.77", "192.0.2.201", "10.0.3.14", "203.0.113.9"]


def _cook(paths) -> dict:
    doc, _ = cook_paths([str(p) for p in paths])
    assert cooked_errors(doc) == []
    return doc


def projection(doc: dict) -> dict:
    """What the golden file pins: stable across ids, digests, archive prefixes and pricing."""
    msgs = {m["id"]: m for m in doc["messages"]}
    by_id = {t["id"]: t for t in doc["traces"]}

    def side(tid):
        t = by_id[tid]
        return {"title": t["title"], "models": t["models"]}

    traces = []
    for t in doc["traces"]:
        traces.append({
            "title": t["title"], "task": t["task"], "models": t["models"],
            "timeline": [msgs[m]["role"] for m in t["timeline"]],
            "requests": len(t["requests"]), "started_at": t["started_at"],
            "outcome_detail": t["outcome_detail"], "scorecard": t["scorecard"],
            "side": t["meta"].get("side"), "chat_mode": t["meta"].get("chat_mode"),
            "artifacts": [{k: v for k, v in a.items() if k != "source"} for a in t["artifacts"]],
        })
    groups = [{**{k: v for k, v in g.items() if k != "sides"}, "sides": [side(s) for s in g["sides"]]}
              for g in doc.get("groups", [])]
    return {"traces": sorted(traces, key=lambda t: (t["task"], t["side"] or "")),
            "groups": sorted(groups, key=lambda g: g["id"])}


def _jsonl(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def _state(conv, session="s1", msgs=None, model="m", mode="battle_anony", roles=("user", "assistant")):
    return {"template_name": "t", "system_message": "", "roles": list(roles),
            "messages": msgs if msgs is not None else [["user", "hi"], ["assistant", f"hello from {model}"]],
            "offset": 0, "chat_session_id": session, "conv_id": conv, "chat_mode": mode, "model_name": model}


def _rec(conv, typ="chat_multi", tstamp=1736935200.0, **kw):
    model = kw.pop("model", conv.upper())
    return {"tstamp": tstamp, "type": typ, "model": model, "state": _state(conv, model=model, **kw),
            "ip": "203.0.113.5"}


def _parse_file(path: Path):
    src = next(expand([path], []))
    result = parse(src)
    return result, list(result.traces)


# -- the sample tree -------------------------------------------------------------------------

def test_sample_matches_golden():
    doc = _cook([SAMPLE])
    got = projection(doc)
    if os.environ.get("TRACEVIEW_REGEN_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(GOLDEN.read_text())


def test_sample_has_every_vote_kind_and_battle_shape():
    doc = _cook([SAMPLE])
    groups = doc["groups"]
    assert len(groups) == 4
    assert sorted(v["winner"] for g in groups for v in g["votes"]) == ["bothbad", "left", "right", "tie"]
    for g in groups:
        assert g["kind"] == "battle" and len(g["sides"]) == 2 and None not in g["sides"]
        tasks = {t["task"] for t in doc["traces"] if t["id"] in g["sides"]}
        assert tasks == {g["id"]}
    assert {g["chat_mode"]: g["anony"] for g in groups} == {"battle_anony": True, "battle_named": False}
    # the direct chat is a trace of its own, with its upvote
    direct = [t for t in doc["traces"] if t["meta"]["chat_mode"] == "direct"]
    assert len(direct) == 1 and direct[0]["scorecard"] == {"feedback": {"upvote": 1, "downvote": 0, "flag": 0}}


def test_latest_line_wins_and_regenerate_replaces_the_answer():
    doc = _cook([SAMPLE])
    msgs = {m["id"]: m for m in doc["messages"]}
    claude = next(t for t in doc["traces"] if t["models"] == ["claude-3-5-sonnet-20241022"])
    last = msgs[claude["timeline"][-1]]["content"]
    assert "test_false" in last and "Here are some tests" not in last
    assert claude["meta"]["regenerations"] == 1
    # one synthetic request per answer, timed from the line that produced it
    reqs = [r for r in doc["requests"] if r["trace"] == claude["id"]]
    assert len(reqs) == 2 and all(r["model"] == "claude-3-5-sonnet-20241022" for r in reqs)
    assert reqs[1]["duration_ms"] == 8200 and reqs[0]["timestamp"] < reqs[1]["timestamp"]


def test_sandbox_runs_attach_by_conversation_and_round():
    doc = _cook([SAMPLE])
    runs = {t["models"][0]: [(a["chat_round"], a["run_round"], bool(a["error"])) for a in t["artifacts"]]
            for t in doc["traces"]}
    assert runs["gpt-4o-2024-11-20"] == [(1, 1, False), (2, 1, True), (2, 2, False)]
    assert runs["claude-3-5-sonnet-20241022"] == [(1, 1, False)]
    assert runs["gemini-2.0-flash-exp"] == [(1, 1, True)]
    assert runs["deepseek-v3"] == [] and runs["gpt-4o-mini-2024-07-18"] == []
    art = next(t for t in doc["traces"] if t["models"] == ["gemini-2.0-flash-exp"])["artifacts"][0]
    assert art["kind"] == "sandbox_run" and "ModuleNotFoundError" in art["error"]
    assert art["environment"] == "Streamlit" and art["language"] == "python" and art["sandbox_id"]


def test_sandbox_rounds_sort_numerically_and_subfolders_are_searched(tmp_path):
    day = tmp_path / "logs" / "2025_02_01"
    _jsonl(day / "conv_logs" / "direct" / "conv-log-c1.json", [_rec("c1", mode="direct", session="c1")])
    for rnd, sub in ((10, ""), (2, "direct/"), (1, "")):
        p = day / "sandbox_logs" / f"{sub}sandbox-logs-c1-{rnd}-1.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({"sandbox_state": {"code_to_execute": f"print({rnd})", "sandbox_output": str(rnd)},
                                 "user_interaction_records": []}))
    # a sandbox log of another conversation is not attached
    (day / "sandbox_logs" / "sandbox-logs-c2-1-1.json").write_text('{"sandbox_state": {}}')
    doc = _cook([tmp_path])
    (trace,) = doc["traces"]
    assert [a["chat_round"] for a in trace["artifacts"]] == [1, 2, 10]
    assert [a["output"] for a in trace["artifacts"]] == ["1", "2", "10"]


def test_api_keys_in_sandbox_runs_and_messages_are_masked(tmp_path):
    key = "sk-proj-" + "A1b2C3d4" * 5
    day = tmp_path / "logs" / "2025_02_01"
    _jsonl(day / "conv_logs" / "direct" / "conv-log-c1.json", [_rec("c1", mode="direct", session="c1")])
    p = day / "sandbox_logs" / "sandbox-logs-c1-1-1.json"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps({"sandbox_state": {"code_to_execute": f"client = OpenAI(api_key='{key}')",
                                               "sandbox_output": f"Authorization: Bearer {key}"},
                             "user_interaction_records": []}))
    doc = _cook([tmp_path])
    (art,) = doc["traces"][0]["artifacts"]
    assert key not in orjson.dumps(doc).decode()
    assert "[redacted]" in art["code"] and "[redacted]" in art["output"]


def test_sandbox_log_alone_is_declined_with_a_reason():
    p = next(DAY.glob("sandbox_logs/*.json"))
    src = next(expand([p], []))
    assert sniff(src) == "a sandbox log; it is attached to its conversation"
    doc, summaries = cook_paths([str(p)])
    assert cooked_errors(doc) == [] and doc["traces"] == []
    # a companion given without its conversation: said in plain words, nothing else read
    said = [summaries[0].note or ""] + [q["message"] for q in summaries[0].problems]
    assert any("a sandbox log; it is attached to its conversation" in x for x in said)


def test_conversation_log_alone_loads_without_sandbox_runs():
    p = next(DAY.glob("conv_logs/battle_anony/conv-log-c7af*.json"))
    doc = _cook([p])
    assert len(doc["traces"]) == 2 and all(t["artifacts"] == [] for t in doc["traces"])
    assert len(doc["groups"]) == 1


# -- personal data ---------------------------------------------------------------------------

def test_client_addresses_are_dropped_and_message_text_is_kept():
    doc = _cook([SAMPLE])
    text = orjson.dumps(doc).decode()
    # every record's `ip` field, read from the sample itself
    client = {json.loads(line)["ip"] for p in DAY.rglob("conv-log-*.json") for line in p.read_text().splitlines()}
    assert client and not any(ip in text for ip in client)
    assert '"ip"' not in text and "[ip redacted]" not in text
    # the addresses a user typed into a prompt are theirs: shown as written
    contents = [m["content"] for m in doc["messages"]]
    assert any("192.0.2.17:5000" in c and "198.51.100.23" in c and "2001:db8::1f" in c for c in contents)
    assert any("http://10.0.3.14:8501" in c for c in contents)  # a sandbox's own output


# -- battles: votes and sides ----------------------------------------------------------------

def test_a_vote_written_by_both_sides_counts_once(tmp_path):
    recs = [_rec("a"), _rec("b"),
            _rec("a", "leftvote", 1736935300.0), _rec("b", "leftvote", 1736935300.0),   # same tstamp
            _rec("a", "tievote", 1736935400.1234), _rec("b", "tievote", 1736935400.1241),  # moments apart
            _rec("a", "rightvote", 1736935500.0)]  # a later click, only one side's line survived
    result, traces = _parse_file(_jsonl(tmp_path / "conv-log-s1.json", recs))
    (g,) = result.groups
    assert [(v["winner"], v["tstamp"]) for v in g["votes"]] == [
        ("left", 1736935300000), ("tie", 1736935400123), ("right", 1736935500000)]
    assert traces[0].scorecard.votes == {"won": 1, "lost": 1, "tie": 1, "bothbad": 0}
    assert traces[1].scorecard.votes == {"won": 1, "lost": 1, "tie": 1, "bothbad": 0}  # b: right won once
    assert traces[0].scorecard.feedback == {}


def test_the_same_line_twice_is_one_vote(tmp_path):
    v = _rec("a", "bothbad_vote", 1736935300.0)
    result, _ = _parse_file(_jsonl(tmp_path / "conv-log-s1.json", [_rec("a"), _rec("b"), v, v]))
    assert [x["winner"] for x in result.groups[0]["votes"]] == ["bothbad"]


def test_left_is_the_side_written_first(tmp_path):
    result, traces = _parse_file(_jsonl(tmp_path / "conv-log-s1.json", [_rec("b"), _rec("a"), _rec("a", "leftvote")]))
    (g,) = result.groups
    assert g["sides"] == ["b", "a"] and g["models"] == ["B", "A"]
    assert [t.meta["side"] for t in traces] == ["left", "right"]
    # a leftvote recorded on the right side's line still means the left side won
    assert traces[0].outcome_detail == "won the vote" and traces[1].outcome_detail == "lost the vote"


def test_a_states_pair_decides_left_and_right(tmp_path):
    # FastChat writes votes as one line with both states, left first; it outranks line order.
    pair = {"tstamp": 1736935300.0, "type": "rightvote", "models": ["", ""],
            "states": [_state("a", model="A", mode=None), _state("b", model="B", mode=None)], "ip": "198.51.100.1"}
    for s in pair["states"]:
        del s["chat_mode"]
    result, traces = _parse_file(_jsonl(tmp_path / "conv-log-s1.json", [_rec("b", mode=None), _rec("a", mode=None), pair]))
    (g,) = result.groups
    assert g["sides"] == ["a", "b"] and g["anony"] is True
    assert [v["winner"] for v in g["votes"]] == ["right"]
    assert [t.ref for t in traces] == ["a", "b"]


def test_fastchat_records_without_session_ids_pair_through_their_vote(tmp_path):
    # Plain FastChat: no chat_session_id, one log file for many conversations.
    def st(conv, model):
        s = _state(conv, model=model)
        del s["chat_session_id"], s["chat_mode"]
        return s
    recs = [{"tstamp": 1.0e9, "type": "chat", "model": "A", "state": st("a", "A"), "start": 1.0e9 - 2, "finish": 1.0e9},
            {"tstamp": 1.0e9 + 1, "type": "chat", "model": "B", "state": st("b", "B")},
            {"tstamp": 1.0e9 + 5, "type": "chat", "model": "C", "state": st("c", "C")},
            {"tstamp": 1.0e9 + 9, "type": "leftvote", "models": ["A", "B"], "states": [st("a", "A"), st("b", "B")],
             "ip": "192.0.2.1"}]
    result, traces = _parse_file(_jsonl(tmp_path / "2023-09-01-conv.json", recs))
    (g,) = result.groups
    assert g["sides"] == ["a", "b"] and g["anony"] is False and g["votes"][0]["winner"] == "left"
    assert [t.task for t in traces] == ["a", "a", "c"]
    assert traces[0].turns[1].duration_ms == 2000 and traces[0].turns[1].timestamp == 1.0e12 - 2000


# -- roles, content, bad input ---------------------------------------------------------------

@pytest.mark.parametrize("name, role", [
    ("user", "user"), ("USER", "user"), ("Human", "user"), ("<|user|>", "user"), ("### Human:", "user"),
    ("<|im_start|>user", "user"), ("<start_of_turn>user", "user"),
    ("assistant", "assistant"), ("ASSISTANT", "assistant"), ("gpt", "assistant"), ("model", "assistant"),
    ("<|assistant|>", "assistant"), ("<start_of_turn>model", "assistant"), ("Bot", "assistant"),
    ("system", "system"), ("<|system|>", "system"), ("narrator", None), (None, None),
])
def test_role_names(name, role):
    assert role_of(name) == role


def test_template_roles_win_and_unknown_roles_are_problems(tmp_path):
    msgs = [["Q", "hi"], ["A", "hello"], ["narrator", "meanwhile"], ["A", None]]
    rec = _rec("a", mode="direct", session="a", msgs=msgs, roles=("Q", "A"))
    _, (t,) = _parse_file(_jsonl(tmp_path / "conv-log-a.json", [rec]))
    assert [m.role for m in t.messages] == ["user", "assistant", "user"]  # pending answer left out
    (p,) = t.problems
    assert p.line == 1 and p.path == "/state/messages/2/0" and "unknown role 'narrator'" in p.message


def test_images_and_offset(tmp_path):
    msgs = [["user", "example"], ["assistant", "shot"], ["user", ["what is this?", ["img-hash-1"]]], ["assistant", "a cat"]]
    rec = _rec("a", mode="direct", session="a", msgs=msgs)
    rec["state"]["offset"] = 2
    _, (t,) = _parse_file(_jsonl(tmp_path / "conv-log-a.json", [rec]))
    assert [(m.role, m.content) for m in t.messages] == [("user", "what is this?\n[image]"), ("assistant", "a cat")]
    assert t.title == "what is this? [image]"


def test_broken_lines_are_problems_and_good_lines_load(tmp_path):
    good_a, good_b = _rec("a"), _rec("b")
    no_conv = _rec("c")
    del no_conv["state"]["conv_id"]
    bad_msgs = _rec("d")
    bad_msgs["state"]["messages"] = "hi"
    pair_bad = {"type": "leftvote", "tstamp": 1.7e9, "models": ["", ""], "states": [_state("a"), 5]}
    lines = [json.dumps(good_a), json.dumps(no_conv), "[1, 2]", json.dumps(bad_msgs), json.dumps(pair_bad),
             json.dumps({"type": "chat"}), json.dumps(good_b), json.dumps(good_b)[:40]]
    path = tmp_path / "logs" / "d" / "conv_logs" / "battle_anony" / "conv-log-s1.json"
    _jsonl(path, lines)
    doc, summaries = cook_paths([str(tmp_path)])
    assert cooked_errors(doc) == []
    assert [t["meta"]["conv_id"] for t in doc["traces"]] == ["a", "b"]
    assert len(doc["groups"]) == 1 and None not in doc["groups"][0]["sides"]
    probs = {(p["line"], p["path"]): p["message"] for p in summaries[0].problems}
    assert probs[(2, "/state/conv_id")].startswith("expected a string `conv_id`")
    assert probs[(3, "")].startswith("expected a JSON object")
    assert probs[(4, "/state/messages")].startswith("expected `messages`")
    assert probs[(5, "/states/1")].startswith("expected a state object, found a number")
    assert probs[(6, "/state")].startswith("expected a `state` object")
    assert "not valid JSON" in probs[(8, "")]
    assert all(p["file"].endswith("conv-log-s1.json") for p in summaries[0].problems)


def test_broken_sandbox_log_is_a_problem_not_a_failure(tmp_path):
    day = tmp_path / "logs" / "d"
    _jsonl(day / "conv_logs" / "direct" / "conv-log-a.json", [_rec("a", mode="direct", session="a")])
    (day / "sandbox_logs").mkdir(parents=True)
    (day / "sandbox_logs" / "sandbox-logs-a-1-1.json").write_text('{"sandbox_state": {"code_to_ex')
    (day / "sandbox_logs" / "sandbox-logs-a-1-2.json").write_text('{"sandbox_state": [1]}')
    doc, summaries = cook_paths([str(tmp_path)])
    assert cooked_errors(doc) == [] and doc["traces"][0]["artifacts"] == []
    msgs = sorted((p["file"].rsplit("/", 1)[-1], p["path"], p["message"][:40]) for p in summaries[0].problems)
    assert msgs[0][0] == "sandbox-logs-a-1-1.json" and "not valid JSON" in msgs[0][2]
    assert msgs[1][:2] == ("sandbox-logs-a-1-2.json", "/sandbox_state") and msgs[1][2].startswith("expected an object")


# -- opening: sniff, zip, uploads ------------------------------------------------------------

def test_sniff():
    rec = json.dumps(_rec("a")).encode() + b"\n"
    assert sniff(from_bytes("conv-log-s1.json", rec)) is None
    assert sniff(from_bytes("anything.jsonl", rec)) is None  # by content
    assert sniff(from_bytes("x.jsonl", b'{"type": "chat", "request": {}}\n')) is not None
    assert sniff(from_bytes("x.jsonl", b'{"id": 1}\n')) is not None
    assert "sandbox log" in sniff(from_bytes("x.json", b'{"sandbox_state": {"conv_id": "a"}}'))
    for p in DAY.rglob("conv-log-*.json"):
        assert detect(next(expand([p], []))) is FORMAT


def test_zip_of_the_tree_opens_identically(tmp_path):
    z = tmp_path / "logs.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted((SAMPLE / "logs").rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(SAMPLE).as_posix())
    assert projection(_cook([z])) == projection(_cook([SAMPLE]))


def test_uploaded_files_open_identically():
    files = [(p.relative_to(SAMPLE).as_posix(), p.read_bytes()) for p in sorted(SAMPLE.rglob("*.json"))]
    doc, _ = cook_uploads(files)
    assert cooked_errors(doc) == []
    assert projection(doc) == projection(_cook([SAMPLE]))


def test_folder_listing_stays_inside_what_was_opened(tmp_path):
    shutil.copytree(SAMPLE / "logs", tmp_path / "logs")
    src = next(s for s in expand([tmp_path / "logs" / "2025_01_15" / "conv_logs"], []))
    assert src.listdir(".") is not None
    assert src.listdir("../../sandbox_logs") is None  # outside the opened folder
    assert src.listdir("../../../../..") is None


# -- silent merges and silent drops ----------------------------------------------------------

BADINPUTS = REPO.parent / "shared" / "badinputs"


def _all_problems(summaries) -> list[dict]:
    return [p for s in summaries for p in s.problems]


def test_reused_conv_id_of_two_models_is_reported_naming_both_records():
    folder = BADINPUTS / "cli" / "arena__dup_conv_ids"
    if not folder.is_dir():
        pytest.skip(f"shared reproducer not present: {folder}")
    doc, summaries = cook_paths([str(folder)])
    assert cooked_errors(doc) == []
    clashes = [p for p in _all_problems(summaries) if "holds two conversations" in p["message"]]
    assert len(clashes) == 1
    (p,) = clashes
    assert p["file"].endswith("conv-log-c7af2d3544f094b28e7fa85bd32bd22c.json")
    assert p["line"] == 2 and p["path"] == "/state/conv_id"
    assert "'dup'" in p["message"] and "line 1 and line 2" in p["message"]
    assert "gpt-4o-2024-11-20" in p["message"] and "claude-3-5-sonnet-20241022" in p["message"]
    # the second conversation is a trace of its own, one per model
    dup = sorted((t["models"], t["meta"]["conv_id"]) for t in doc["traces"] if t["meta"]["conv_id"] == "dup")
    assert dup == [(["claude-3-5-sonnet-20241022"], "dup"), (["gpt-4o-2024-11-20"], "dup")]


def test_reused_conv_id_with_contradicting_histories_is_reported(tmp_path):
    first = _rec("a", msgs=[["user", "sort a list"], ["assistant", "use sorted()"]], model="m")
    other = _rec("a", msgs=[["user", "reverse a string"], ["assistant", "use [::-1]"]], model="m")
    p = _jsonl(tmp_path / "conv-log-s1.json", [first, other])
    doc, summaries = cook_paths([str(p)])
    assert cooked_errors(doc) == []
    (prob,) = [q for q in _all_problems(summaries) if "holds two conversations" in q["message"]]
    assert prob["line"] == 2 and "line 1 and line 2" in prob["message"]
    assert "histories that differ at message 0" in prob["message"]
    # split, not replaced: each conversation keeps its own history
    firsts = sorted(next(m["content"] for m in (_msgs(doc, t)) if m["role"] == "user") for t in doc["traces"])
    assert firsts == ["reverse a string", "sort a list"]


def test_growing_and_regenerated_history_of_one_conversation_is_no_clash(tmp_path):
    grow = [_rec("a", msgs=[["user", "q1"], ["assistant", None]], model="m"),
            _rec("a", msgs=[["user", "q1"], ["assistant", "a1"]], model="m"),
            _rec("a", typ="regenerate_single", msgs=[["user", "q1"], ["assistant", "a1 again"]], model="m"),
            _rec("a", msgs=[["user", "q1"], ["assistant", "a1 again"], ["user", "q2"], ["assistant", "a2"]],
                 model="m")]
    p = _jsonl(tmp_path / "conv-log-s1.json", grow)
    doc, summaries = cook_paths([str(p)])
    assert cooked_errors(doc) == [] and _all_problems(summaries) == []
    assert len(doc["traces"]) == 1


def _msgs(doc: dict, trace: dict) -> list[dict]:
    by_id = {m["id"]: m for m in doc["messages"]}
    return [by_id[m] for m in trace["timeline"]]


TWO_ROUNDS = {"a": [["user", "q1"], ["assistant", "a1 from A"], ["user", "q2"], ["assistant", "a2 from A"]],
              "b": [["user", "q1"], ["assistant", "a1 from B"], ["user", "q2"], ["assistant", "a2 from B"]]}


def _vote_pair(msgs_a, msgs_b, typ="leftvote"):
    return {"tstamp": 1736935300.0, "type": typ, "models": ["A", "B"], "ip": "198.51.100.1",
            "states": [_state("a", model="A", msgs=msgs_a), _state("b", model="B", msgs=msgs_b)]}


def _battle_doc(tmp_path, votes) -> tuple[dict, list]:
    chats = [_rec(c, msgs=TWO_ROUNDS[c][:2], model=c.upper()) for c in "ab"]
    chats += [_rec(c, msgs=TWO_ROUNDS[c], model=c.upper(), tstamp=1736935250.0) for c in "ab"]
    doc, summaries = cook_paths([str(_jsonl(tmp_path / "conv-log-s1.json", chats + votes))])
    assert cooked_errors(doc) == []
    return doc, _all_problems(summaries)


def test_a_vote_with_no_messages_keeps_the_conversation(tmp_path):
    doc, problems = _battle_doc(tmp_path, [_vote_pair([], [])])
    assert problems == []
    (g,) = doc["groups"]
    assert g["rounds"] == 2 and [v["winner"] for v in g["votes"]] == ["left"]
    for t in doc["traces"]:
        got = [[m["role"], m["content"]] for m in _msgs(doc, t) if m["role"] != "system"]
        assert got == TWO_ROUNDS[t["meta"]["conv_id"]]


def test_a_vote_with_a_shorter_history_and_placeholders_never_shortens_it(tmp_path):
    short = {c: [TWO_ROUNDS[c][0], ["assistant", "…"]] for c in "ab"}
    doc, problems = _battle_doc(tmp_path, [_vote_pair(short["a"], short["b"], "tievote")])
    assert problems == []
    assert doc["groups"][0]["rounds"] == 2
    for t in doc["traces"]:
        got = [[m["role"], m["content"]] for m in _msgs(doc, t) if m["role"] != "system"]
        assert got == TWO_ROUNDS[t["meta"]["conv_id"]]
        assert t["totals"]["requests"] == 2


def test_a_later_record_fills_a_placeholder_answer(tmp_path):
    recs = [_rec("a", msgs=[["user", "q1"], ["assistant", "▌"]], model="m", mode="direct", session="a"),
            _rec("a", typ="upvote", msgs=[["user", "q1"], ["assistant", "the answer"]], model="m", mode="direct",
                 session="a")]
    doc, summaries = cook_paths([str(_jsonl(tmp_path / "conv-log-a.json", recs))])
    (t,) = doc["traces"]
    assert [m["content"] for m in _msgs(doc, t) if m["role"] == "assistant"] == ["the answer"]
    assert _all_problems(summaries) == []


def test_a_vote_contradicting_the_history_is_a_problem_not_a_replacement(tmp_path):
    wrong = [["user", "something else"], ["assistant", "other"]]
    doc, problems = _battle_doc(tmp_path, [_vote_pair(wrong, TWO_ROUNDS["b"])])
    (p,) = problems
    assert p["line"] == 5 and p["path"] == "/states/0/conv_id"
    assert "histories that differ at message 0" in p["message"] and "not used" in p["message"]
    assert len(doc["traces"]) == 2 and [v["winner"] for v in doc["groups"][0]["votes"]] == ["left"]
    a = next(t for t in doc["traces"] if t["meta"]["conv_id"] == "a")
    assert [[m["role"], m["content"]] for m in _msgs(doc, a) if m["role"] != "system"] == TWO_ROUNDS["a"]


def test_sandbox_runs_are_tool_calls_the_totals_count(tmp_path):
    day = tmp_path / "logs" / "d"
    msgs = [["user", "q1"], ["assistant", "a1"], ["user", "q2"], ["assistant", "a2"]]
    _jsonl(day / "conv_logs" / "direct" / "conv-log-c1.json", [_rec("c1", mode="direct", session="c1", msgs=msgs)])
    runs = {(1, 1): ("print(1)", "1", ""), (2, 1): ("print(x)", "", "NameError: x"), (2, 2): ("print(2)", "2", "")}
    (day / "sandbox_logs").mkdir(parents=True)
    for (cr, rr), (code, out, err) in runs.items():
        (day / "sandbox_logs" / f"sandbox-logs-c1-{cr}-{rr}.json").write_text(json.dumps(
            {"sandbox_state": {"code_to_execute": code, "sandbox_output": out, "sandbox_error": err,
                               "code_language": "python"}}))
    doc = _cook([tmp_path])
    (t,) = doc["traces"]
    seq = [(m["role"], m["content"] if m["role"] != "tool_use" else [c["arguments"]["code"] for c in m["tool_calls"]])
           for m in _msgs(doc, t) if m["role"] != "system"]
    assert seq == [("user", "q1"), ("assistant", "a1"), ("tool_use", ["print(1)"]), ("tool_result", "1"),
                   ("user", "q2"), ("assistant", "a2"), ("tool_use", ["print(x)", "print(2)"]),
                   ("tool_result", "NameError: x"), ("tool_result", "2")]
    assert t["totals"]["tool_calls"] == len(runs) and t["totals"]["requests"] == 2
    assert t["totals"]["errors"] == 1
    assert len([a for a in t["artifacts"] if a["kind"] == "sandbox_run"]) == len(runs)


def test_sandbox_log_with_bytes_not_utf8_is_attached_and_reported(tmp_path):
    day = tmp_path / "logs" / "d"
    _jsonl(day / "conv_logs" / "direct" / "conv-log-a.json", [_rec("a", mode="direct", session="a")])
    (day / "sandbox_logs").mkdir(parents=True)
    raw = b'{"sandbox_state": {"code_to_execute": "print(1)", "sandbox_output": "caf\xe9 ok"}}'
    (day / "sandbox_logs" / "sandbox-logs-a-1-1.json").write_bytes(raw)
    doc, summaries = cook_paths([str(tmp_path)])
    assert cooked_errors(doc) == []
    (art,) = doc["traces"][0]["artifacts"]
    assert art["kind"] == "sandbox_run" and art["output"] == "caf\ufffd ok" and art["code"] == "print(1)"
    (prob,) = _all_problems(summaries)
    assert prob["file"].endswith("sandbox-logs-a-1-1.json")
    first_bad = raw.index(b"\xe9")
    assert prob["message"] == f"bytes that are not UTF-8 (the first at byte {first_bad}) were replaced with U+FFFD"


def test_unreadable_record_times_are_reported_with_their_path(tmp_path):
    recs = [_rec("a", tstamp=1e20), _rec("a", tstamp="NaN"),
            {**_rec("a"), "start_ts": "Infinity", "end_ts": -1e300}, _rec("a")]
    p = _jsonl(tmp_path / "conv-log-s1.json", recs)
    doc, summaries = cook_paths([str(p)])
    assert cooked_errors(doc) == [] and len(doc["traces"]) == 1
    got = sorted((q["line"], q["path"]) for q in _all_problems(summaries))
    assert got == [(1, "/tstamp"), (2, "/tstamp"), (3, "/end_ts"), (3, "/start_ts")]
    assert all("not a readable time" in q["message"] for q in _all_problems(summaries))


def test_out_of_range_timestamp_reproducer_is_reported():
    folder = BADINPUTS / "cli" / "arena__ts_e20"
    if not folder.is_dir():
        pytest.skip(f"shared reproducer not present: {folder}")
    doc, summaries = cook_paths([str(folder)])
    assert cooked_errors(doc) == [] and len(doc["traces"]) == 2
    (prob,) = [q for q in _all_problems(summaries) if "/conv_logs/" in q["file"]]
    assert prob["line"] == 4 and prob["path"] == "/tstamp" and "not a readable time" in prob["message"]


def test_unreadable_sandbox_time_is_reported_with_its_path(tmp_path):
    day = tmp_path / "logs" / "d"
    _jsonl(day / "conv_logs" / "direct" / "conv-log-a.json", [_rec("a", mode="direct", session="a")])
    (day / "sandbox_logs").mkdir(parents=True)
    (day / "sandbox_logs" / "sandbox-logs-a-1-1.json").write_text(
        json.dumps({"sandbox_state": {"code_to_execute": "x", "tstamp": "nan"}, "tstamp": 1e20}))
    doc, summaries = cook_paths([str(tmp_path)])
    assert len(doc["traces"][0]["artifacts"]) == 1
    got = sorted(q["path"] for q in _all_problems(summaries))
    assert got == ["/sandbox_state/tstamp", "/tstamp"]
