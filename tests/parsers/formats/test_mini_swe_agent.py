"""mini-swe-agent trajectories: the bundled batch run and the real files against counts worked
out here from the raw `.traj.json` files with plain `json`, the batch run's preds.json and
exit_statuses_*.yaml, detection and broken input."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from parsers.formats import mini_swe_agent
from parsers.io.source import from_bytes
from parsers.model import Companion
from tests.conftest import shared_path
from tests.parsers.formats.cooked import cook, problems_of, timeline
from tests.parsers.formats.test_swe_agent import cook_folder, paired_results

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_data" / "mini_swe_agent"
TRAJS = ("demo__calc-1/demo__calc-1.traj.json", "demo__greet-2/demo__greet-2.traj.json",
         "demo__path-3/demo__path-3.traj.json")


# -- what the raw files say, worked out without the reader -----------------------------------
def expected(data) -> dict:
    """Model calls, tool calls, results and usage by the format's rule: an assistant message or
    a Response object is one call; its calls are its native tool calls (or function_call
    items), else its `extra.actions`, else (no `extra.actions`) the one ```bash or
    ```mswea_bash_command block of its text (none when it has several); `tool` messages and
    function_call_output items answer calls, and so does the user message after actions parsed
    from text; the `exit` message answers a call still without a result (the run ended on its
    output). Usage per call: input without the cached tokens, which are cache reads; output as
    given."""
    msgs = data if isinstance(data, list) else data["messages"]
    out = Counter()
    text_actions = unanswered = 0
    for m in msgs:
        extra = m.get("extra") or {}
        if m.get("object") == "response" or m.get("role") == "assistant":
            out["calls_made"] += 1
            resp = m if m.get("object") == "response" else extra.get("response") or {}
            native = len(m.get("tool_calls") or []) + sum(1 for i in m.get("output") or [] if i["type"] == "function_call")
            acts = [a for a in extra.get("actions") or [] if not a.get("tool_call_id")]
            if "actions" not in extra and not native and m.get("role") == "assistant":
                blocks = re.findall(r"```(bash|mswea_bash_command)\n", m.get("content") or "")
                acts = [{}] if len(blocks) == 1 else []
            out["tool_calls"] += native or len(acts)
            text_actions, unanswered = len(acts), native or len(acts)
            u = resp.get("usage")
            if u:
                cached = (u.get("prompt_tokens_details") or u.get("input_tokens_details") or {}).get("cached_tokens", 0)
                out["input"] += u.get("prompt_tokens", u.get("input_tokens", 0)) - cached
                out["output"] += u.get("completion_tokens", u.get("output_tokens", 0))
                out["cache_read"] += cached
            out["cost"] += extra.get("cost") or 0
        elif m.get("role") == "tool" or m.get("type") == "function_call_output":
            out["results"] += 1
            unanswered -= 1
        elif m.get("role") == "user" and text_actions and "interrupt_type" not in extra:
            out["results"] += 1
            text_actions -= 1
            unanswered -= 1
        elif m.get("role") == "exit" and unanswered > 0:
            out["results"] += 1
    return out


def check(doc: dict, trace: dict, data) -> None:
    want = expected(data)
    tot = trace["totals"]
    assert tot["requests"] == want["calls_made"]
    assert tot["tool_calls"] == want["tool_calls"]
    assert paired_results(doc, trace) == want["results"]
    for kind in ("input", "output", "cache_read"):
        assert tot[kind] == want[kind], kind
    if want["cost"]:
        assert tot["cost"] == pytest.approx(want["cost"])
    assert not [p for p in trace["problems"] if "internal error" in p["message"]]
    if isinstance(data, dict):
        info = data["info"]
        assert tot.get("stated_cost") == info["model_stats"].get("instance_cost")
        assert trace["scorecard"]["metrics"]["api_calls"] == info["model_stats"]["api_calls"]


# -- the bundled batch run -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample():
    return cook_folder(SAMPLE)


@pytest.mark.parametrize("name", TRAJS)
def test_sample_counts(sample, name):
    doc, traces = sample
    check(doc, traces[name], json.loads((SAMPLE / name).read_text()))


def test_sample_patches_and_exit_statuses(sample):
    doc, traces = sample
    preds = json.loads((SAMPLE / "preds.json").read_text())
    statuses = {}
    for line in (SAMPLE / "exit_statuses_1767225600.0.yaml").read_text().splitlines()[1:]:
        if line.startswith("  -"):
            statuses[line[4:]] = status
        else:
            status = line.strip().rstrip(":")
    for name in TRAJS:
        data, trace = json.loads((SAMPLE / name).read_text()), traces[name]
        iid = name.split("/")[0]
        patch = data["info"]["submission"] or preds[iid]["model_patch"]
        assert [a["content"] for a in trace["artifacts"] if a["kind"] == "patch"] == [patch]
        assert trace["meta"]["exit_status"] == (data["info"]["exit_status"] or statuses[iid])
        assert trace["task"] == iid and trace["outcome"] == "unknown"
    notes = {i["name"]: i.get("note", "") for i in doc["inputs"]}
    assert "read with" in notes["preds.json"] and "read with" in notes["exit_statuses_1767225600.0.yaml"]
    assert problems_of(doc) == []


def test_exit_statuses_that_are_not_yaml_cost_only_the_statuses(tmp_path):
    """A damaged exit_statuses_*.yaml: every trajectory still loads, with its patch from
    preds.json, and each names the file it could not read and why."""
    import shutil

    folder = tmp_path / "run"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "exit_statuses_1767225600.0.yaml").write_text("a: [\n  - b: {", encoding="utf-8")
    doc, traces = cook_folder(folder)
    preds = json.loads((SAMPLE / "preds.json").read_text())
    assert sorted(traces) == sorted(TRAJS)
    for name in TRAJS:
        data, trace = json.loads((SAMPLE / name).read_text()), traces[name]
        patch = data["info"]["submission"] or preds[name.split("/")[0]]["model_patch"]
        assert [a["content"] for a in trace["artifacts"] if a["kind"] == "patch"] == [patch]
        said = [p["message"] for p in trace["problems"] + [p for i in doc["inputs"] if i["name"] == name
                                                           for p in i["problems"]]
                if p["file"] == "exit_statuses_1767225600.0.yaml"]
        assert said and all(m.startswith("not read (InvalidYAML: ") and "line 2" in m for m in said), said


def test_sample_responses_api_and_times(sample):
    doc, traces = sample
    greet = traces["demo__greet-2/demo__greet-2.traj.json"]
    roles = [m["role"] for m in timeline(doc, greet)]
    assert roles.count("thinking") == 3 and roles.count("tool_use") == 3
    raw = json.loads((SAMPLE / TRAJS[1]).read_text())
    assert greet["totals"]["reasoning"] == sum(m["usage"]["output_tokens_details"]["reasoning_tokens"]
                                               for m in raw["messages"] if m.get("object") == "response")
    stamps = [m["extra"]["timestamp"] for m in raw["messages"] if "timestamp" in m.get("extra", {})]
    assert greet["duration_ms"] == pytest.approx((max(stamps) - min(stamps)) * 1000, abs=1)
    assert greet["models"] == ["o4-mini"]


# -- the real files ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real():
    folder = shared_path("realdata", "mini_swe_agent")
    return folder, *cook_folder(folder)


def test_real_files(real):
    folder, doc, traces = real
    names = sorted(p.name for p in folder.glob("*.traj.json"))
    assert sorted(traces) == names and len(names) == 3
    for name in names:
        check(doc, traces[name], json.loads((folder / name).read_text()))
    notes = {i["name"]: i.get("note") or "" for i in doc["inputs"]}
    assert all("read with" in notes[p.name] for p in folder.iterdir() if not p.name.endswith(".traj.json"))


def test_real_tool_calling_run(real):
    folder, doc, traces = real
    name = "sqlfluff__sqlfluff-2419.deepseek.traj.json"
    data, trace = json.loads((folder / name).read_text()), traces[name]
    assert trace["task"] == data["instance_id"]
    assert [a["content"] for a in trace["artifacts"]] == [data["info"]["submission"]]
    assert trace["outcome_detail"] == f"exit status: {data['info']['exit_status']}"
    assert trace["meta"]["trajectory_format"] == "mini-swe-agent-1.1"
    # The run ended on the output of its last command: the exit message is that call's result.
    msgs = timeline(doc, trace)
    exit_msg = data["messages"][-1]
    assert exit_msg["role"] == "exit" and [m["role"] for m in msgs if m["role"] == "system"] == ["system"]
    assert msgs[-1]["role"] == "tool_result" and msgs[-1]["content"] == exit_msg["content"]
    assert msgs[-1]["tool_use_id"] == data["messages"][-2]["tool_calls"][0]["id"]


# -- detection ------------------------------------------------------------------------------------------
def test_sniff():
    assert mini_swe_agent.sniff(from_bytes("a.traj.json", b"[]")) is None
    assert mini_swe_agent.sniff(from_bytes("a.json", b'{"trajectory_format": "mini-swe-agent-1"}')) is None
    assert isinstance(mini_swe_agent.sniff(from_bytes("preds.json", b"{}")), Companion)
    assert isinstance(mini_swe_agent.sniff(from_bytes("exit_statuses_1.5.yaml", b"x: 1")), Companion)
    assert mini_swe_agent.sniff(from_bytes("a.json", b'{"messages": []}')) is not None


# -- broken input -------------------------------------------------------------------------------------
CALC = SAMPLE / TRAJS[0]


def test_cut_off_files_keep_their_complete_messages():
    raw = CALC.read_bytes()
    cut = raw.index(b'"role": "tool"')  # inside the 4th message
    bare = json.dumps(json.loads(raw)["messages"], indent=1).encode()
    doc, _ = cook({"a.traj.json": raw[:cut], "b.traj.json": bare[:bare.index(b'"role": "tool"')]})
    cut_off = {p["file"] for p in problems_of(doc) if "cut off" in p["message"] and "its 3 complete messages" in p["message"]}
    assert cut_off == {"a.traj.json", "b.traj.json"}
    for trace in doc["traces"]:
        assert trace["totals"]["requests"] == 1 and trace["totals"]["input"] > 0


def test_wrong_types_are_problems_and_the_rest_loads():
    data = json.loads(CALC.read_text())
    data["messages"].insert(2, "oops")
    data["messages"][3]["extra"] = []
    data["info"]["model_stats"]["instance_cost"] = "cheap"
    data["info"]["submission"] = ["not", "text"]
    data["messages"].append({"role": "narrator", "content": "?"})
    doc, _ = cook({"a.traj.json": json.dumps(data).encode()})
    trace = doc["traces"][0]
    paths = {p["path"] for p in problems_of(doc)}
    assert {"/messages/2", "/messages/3/extra", "/info/model_stats/instance_cost", "/info/submission"} <= paths
    assert trace["totals"]["requests"] == 3
    assert trace["meta"]["unknown_fields"] == {"role 'narrator'": 1}
    assert [a["kind"] for a in trace["artifacts"]] == ["patch"]  # the exit message's submission


def test_bad_bytes_and_empty():
    raw = CALC.read_bytes().replace(b"Let me read", b"Let m\xffe read", 1)
    doc, _ = cook({"a.traj.json": raw, "b.traj.json": b"\n"})
    assert any("U+FFFD" in p["message"] for p in problems_of(doc))
    assert [t["format"] for t in doc["traces"]] == ["mini-swe-agent"] and doc["traces"][0]["totals"]["requests"] == 3


def test_actions_parsed_from_text_get_the_next_user_messages_as_results():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
            {"role": "assistant", "content": "```mswea_bash_command\nls\n```", "extra": {"actions": [{"command": "ls"}]}},
            {"role": "user", "content": "<returncode>0</returncode>", "extra": {"returncode": 0}},
            {"role": "assistant", "content": "no block", "extra": {"actions": []}},
            {"role": "user", "content": "Please use one block.", "extra": {"interrupt_type": "FormatError"}}]
    data = {"info": {"exit_status": "LimitsExceeded", "model_stats": {"api_calls": 2}}, "messages": msgs,
            "trajectory_format": "mini-swe-agent-1.1"}
    doc, _ = cook({"t.traj.json": json.dumps(data).encode()})
    trace = doc["traces"][0]
    check(doc, trace, data)
    roles = [m["role"] for m in timeline(doc, trace)]
    assert roles == ["system", "user", "assistant", "tool_use", "tool_result", "assistant", "user"]
    call = next(m for m in timeline(doc, trace) if m["tool_calls"])["tool_calls"][0]
    assert call["name"] == "bash" and call["arguments"] == {"command": "ls"}


def test_exit_message_answers_only_a_call_still_open():
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
            {"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded"}}]
    doc, _ = cook({"t.traj.json": json.dumps({"messages": msgs}).encode()})
    trace = doc["traces"][0]
    check(doc, trace, msgs)
    # The call was answered: the exit message is the run's end, not a second result.
    assert [m["role"] for m in timeline(doc, trace)] == ["system", "user", "tool_use", "tool_result", "system"]
    del msgs[3]
    doc, _ = cook({"t.traj.json": json.dumps({"messages": msgs}).encode()})
    trace = doc["traces"][0]
    check(doc, trace, msgs)
    last = timeline(doc, trace)[-1]
    assert last["role"] == "tool_result" and last["tool_use_id"] == "c1"


def test_old_trajectories_get_their_commands_from_the_text(real):
    folder, doc, traces = real
    for name in ("github_issue.traj.json", "local.traj.json"):
        raw = json.loads((folder / name).read_text())  # the bare list of messages
        msgs = timeline(doc, traces[name])
        calls = [m["tool_calls"][0] for m in msgs if m["tool_calls"]]
        results = [m for m in msgs if m["role"] == "tool_result"]
        replies = [m for m in raw if m["role"] == "assistant"]
        observations = [raw[i + 1] for i, m in enumerate(raw) if m["role"] == "assistant" and i + 1 < len(raw)]
        commands = [r["content"].split("```mswea_bash_command\n", 1)[1].split("\n```", 1)[0] for r in replies]
        assert [c["arguments"]["command"] for c in calls] == commands
        assert [r["content"] for r in results] == [o["content"] for o in observations]
        assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]


def test_a_reply_with_several_blocks_asked_for_nothing():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
            {"role": "assistant", "content": "```bash\nls\n```\nand\n```bash\npwd\n```"},
            {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks."},
            {"role": "assistant", "content": "THOUGHT: one.\n\n```bash\nls -a\n```"},
            {"role": "user", "content": "<returncode>0</returncode>"}]
    doc, _ = cook({"t.traj.json": json.dumps(msgs).encode()})
    trace = doc["traces"][0]
    check(doc, trace, msgs)
    assert [m["role"] for m in timeline(doc, trace)] == ["system", "user", "assistant", "user", "assistant",
                                                          "tool_use", "tool_result"]
