"""Two traces read in step: step alignment, sandbox placement, per-side numbers, patches, battles."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from parsers import pipeline
from parsers.cook.schema import cooked_errors
from viewer.analysis import compare as cd
from viewer.analysis.compare import DIFFERS, LEFT_ONLY, RIGHT_ONLY, SAME, SIMILAR, Side


# -- helpers ---------------------------------------------------------------------------------
def side(*msgs, trace_extra=None) -> Side:
    """A Side from (role, content) / ("call", name, args, output) tuples; ids are positional."""
    messages, timeline = {}, []
    for n, m in enumerate(msgs):
        if m[0] == "call":
            _, name, args, output = m
            cid = f"c{n}"
            use = {"id": f"u{n}", "role": "tool_use", "content": "", "tool_calls": [{"name": name, "arguments": args,
                                                                                      "id": cid}],
                   "tool_use_id": None, "is_error": None}
            res = {"id": f"r{n}", "role": "tool_result", "content": output, "tool_calls": None, "tool_use_id": cid,
                   "is_error": None}
            messages[use["id"]], messages[res["id"]] = use, res
            timeline += [use["id"], res["id"]]
        else:
            role, content = m
            messages[f"m{n}"] = {"id": f"m{n}", "role": role, "content": content, "tool_calls": None,
                                 "tool_use_id": None, "is_error": None}
            timeline.append(f"m{n}")
    trace = {"id": "t", "timeline": timeline, "requests": [], "artifacts": [], **(trace_extra or {})}
    return Side(trace, messages)


def run(*steps):
    """An agent run: the task, then tool calls, then a closing message."""
    return side(("user", "Fix the failing test in calc.py"), *steps, ("assistant", "Done."))


READ = ("call", "read_file", {"path": "calc.py"}, "def add(a, b): return a - b")
EDIT = ("call", "edit_file", {"path": "calc.py", "old": "a - b", "new": "a + b"}, "ok")
TEST = ("call", "bash", {"command": "pytest -q"}, "1 passed")
LS = ("call", "bash", {"command": "ls"}, "calc.py test_calc.py")
GREP = ("call", "grep", {"pattern": "def add"}, "calc.py:1")


def shape(rows):
    """Each row as (left label, status, right label); a gap is None."""
    return [(r.left.label if r.left else None, r.status, r.right.label if r.right else None) for r in rows]


# -- alignment -----------------------------------------------------------------------------------
def test_identical_runs_align_row_for_row():
    a, b = run(READ, EDIT, TEST), run(READ, EDIT, TEST)
    rows = cd.align_sides(a, b)
    assert [r.status for r in rows] == [SAME] * 5
    assert shape(rows)[1:4] == [("tool read_file", SAME, "tool read_file"), ("tool edit_file", SAME, "tool edit_file"),
                                ("tool bash", SAME, "tool bash")]
    # the result travels with its call
    assert rows[1].left.items[0]["result"]["content"] == "def add(a, b): return a - b"


def test_missing_step_is_a_gap_not_a_shift():
    rows = cd.align_sides(run(READ, EDIT, TEST), run(READ, TEST))
    assert shape(rows) == [
        ("user", SAME, "user"),
        ("tool read_file", SAME, "tool read_file"),
        ("tool edit_file", LEFT_ONLY, None),
        ("tool bash", SAME, "tool bash"),
        ("assistant", SAME, "assistant"),
    ]


def test_extra_step_is_a_gap_on_the_other_side():
    rows = cd.align_sides(run(READ, EDIT, TEST), run(LS, READ, EDIT, GREP, TEST))
    assert shape(rows) == [
        ("user", SAME, "user"),
        (None, RIGHT_ONLY, "tool bash"),
        ("tool read_file", SAME, "tool read_file"),
        ("tool edit_file", SAME, "tool edit_file"),
        (None, RIGHT_ONLY, "tool grep"),
        ("tool bash", SAME, "tool bash"),
        ("assistant", SAME, "assistant"),
    ]
    assert rows[1].right.text == '{"command":"ls"}'


def test_reordered_steps_pair_one_and_show_the_other_as_gaps():
    rows = cd.align_sides(run(READ, GREP, TEST), run(READ, TEST, GREP))
    s = shape(rows)
    assert s[:2] == [("user", SAME, "user"), ("tool read_file", SAME, "tool read_file")]
    assert s[-1] == ("assistant", SAME, "assistant")
    middle = s[2:-1]
    # one of the two swapped steps is paired, the other appears once on each side against a gap
    assert sorted(st for _, st, _ in middle) == sorted([SAME, LEFT_ONLY, RIGHT_ONLY])
    assert len(middle) == 3
    assert not any(l and r and l != r for l, _, r in middle)  # grep is never paired with bash
    lefts = [l for l, _, _ in middle if l]
    rights = [r for _, _, r in middle if r]
    assert sorted(lefts) == sorted(rights) == ["tool bash", "tool grep"]


def test_near_match_of_arguments_pairs_as_similar():
    a = run(READ, ("call", "bash", {"command": "pytest -q tests/test_calc.py"}, "1 passed"))
    b = run(READ, ("call", "bash", {"command": "pytest -q tests/test_calc.py -x"}, "1 passed"))
    rows = cd.align_sides(a, b)
    assert [r.status for r in rows] == [SAME, SAME, SIMILAR, SAME]


def test_two_short_answers_that_share_digits_differ():
    # "31250" and "31375" are 60% alike letter by letter: different answers all the same.
    rows = cd.align_sides(side(("user", "Sum the list"), ("assistant", "31250")),
                          side(("user", "Sum the list"), ("assistant", "31375")))
    assert [r.status for r in rows] == [SAME, DIFFERS]
    rows = cd.align_sides(side(("user", "Sum the list"), ("assistant", "The sum of the list is 31250.")),
                          side(("user", "Sum the list"), ("assistant", "The sum of the list is 31251.")))
    assert [r.status for r in rows] == [SAME, SIMILAR]


def test_different_tools_in_the_same_place_share_a_row_as_differing():
    rows = cd.align_sides(run(READ, LS, TEST), run(READ, GREP, TEST))
    assert shape(rows)[2] == ("tool bash", DIFFERS, "tool grep")
    assert len(rows) == 5


def test_user_turns_pair_with_user_turns():
    a = side(("user", "Write a snake game"), ("assistant", "Here is pygame code..."),
             ("user", "Make it faster"), ("assistant", "Sure, speed = 20"))
    b = side(("user", "Write a snake game"), ("thinking", "Plan: use curses"), ("assistant", "A curses version..."),
             ("user", "Make it faster"), ("assistant", "Lowered the delay."))
    rows = cd.align_sides(a, b)
    assert shape(rows) == [
        ("user", SAME, "user"),
        (None, RIGHT_ONLY, "thinking"),
        ("assistant", DIFFERS, "assistant"),
        ("user", SAME, "user"),
        ("assistant", DIFFERS, "assistant"),
    ]
    # a user turn is never given up for a gap even when the prompts differ
    c = side(("user", "Write a snake game"), ("assistant", "x"), ("user", "Now add a score"), ("assistant", "y"))
    kinds = [(r.left.kind if r.left else None, r.right.kind if r.right else None) for r in cd.align_sides(a, c)]
    assert kinds == [("user", "user"), ("assistant", "assistant"), ("user", "user"), ("assistant", "assistant")]


def test_big_stretches_fall_back_to_coarse_keys(monkeypatch):
    monkeypatch.setattr(cd, "NW_MAX_CELLS", 1)
    rows = cd.align_sides(run(READ, EDIT, TEST), run(READ, ("call", "edit_file", {"path": "x"}, "ok"), TEST))
    assert shape(rows)[2] == ("tool edit_file", DIFFERS, "tool edit_file")


# -- sandbox runs -----------------------------------------------------------------------------------
ARENA = Path(__file__).resolve().parents[3] / "sample_data" / "arena"


def test_battle_sandbox_runs_are_the_tool_calls_the_stats_count():
    doc, _ = pipeline.cook_paths([str(ARENA)])
    assert cooked_errors(doc) == []
    messages = {m["id"]: m for m in doc["messages"]}
    requests = {r["id"]: r for r in doc["requests"]}
    logs = Counter(p.name.split("-")[2] for p in ARENA.rglob("sandbox-logs-*.json"))  # one file per run
    for t in doc["traces"]:
        s = Side(t, messages, requests)
        steps = cd.side_steps(s)
        stats = cd.side_stats(s)
        ran = logs.get(t["meta"]["conv_id"], 0)
        assert [st.name for st in steps if st.kind == "tool"] == ["sandbox"] * ran
        assert stats["tool_calls"] == stats["sandbox_runs"] == ran
        # each call travels with its result; the user turns bound the rounds
        assert all(st.items[0]["result"] is not None for st in steps if st.kind == "tool")


# -- layout --------------------------------------------------------------------------------------
def test_rows_html_shows_gaps_and_escapes_trace_text():
    evil = ("call", "bash", {"command": "<script>alert(1)</script>"}, "<img src=x onerror=alert(1)>")
    rows = cd.align_sides(run(READ, evil), run(READ))
    out = cd.rows_html(rows, left_title="<b>left</b>", right_title="right")
    assert "only the left side took this step" in out
    assert "<script" not in out and "<img" not in out and "<b>left" not in out
    assert out.count('class="tv-cmp-row ') == len(rows) == 4
    assert 'data-status="left only"' in out


# -- per-side numbers ---------------------------------------------------------------------------
def test_stats_table_states_differences():
    a = {"model": "m1", "outcome": "success", "outcome_detail": None, "user_turns": 1, "model_turns": 4,
         "tool_calls": 3, "input_tokens": 1000, "output_tokens": 200, "tokens": 1200, "cost": 0.5,
         "duration_ms": 2000, "errors": 0, "sandbox_runs": 0}
    b = dict(a, model="m2", model_turns=6, tool_calls=3, cost=0.25, duration_ms=None, input_tokens=1500)
    rows = {r["what"]: r for r in cd.stats_table(a, b)}
    assert rows["model"] == {"what": "model", "left": "m1", "right": "m2", "difference": "different"}
    assert rows["model turns"]["difference"] == "+2 (+50%)"
    assert rows["tool calls"]["difference"] == "same"
    assert rows["cost"]["difference"] == "−$0.25 (−50%)"
    assert rows["input tokens"]["difference"] == "+500 (+50%)"
    assert rows["duration"]["difference"] == "only left has it"
    assert "sandbox runs" not in rows


def test_patches_are_diffed_against_each_other():
    pa = "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n"
    pb = "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-return a - b\n+return b + a\n"
    ta = {"artifacts": [{"kind": "patch", "content": pa}]}
    tb = {"artifacts": [{"kind": "patch", "content": pb}]}
    d = cd.patch_diff(cd.patch_text(ta), cd.patch_text(tb))
    assert "-+return a + b\n" in d and "++return b + a\n" in d
    assert cd.patch_diff(pa, pa) == ""
    assert cd.patch_diff_html(ta, {"artifacts": []}) is None
    assert 'class="tv-root"' in cd.patch_diff_html(ta, tb)


def test_candidates_on_the_same_task_come_first():
    traces = [{"id": "a", "task": "x"}, {"id": "b", "task": "y"}, {"id": "c", "task": "x"}, {"id": "d"}]
    assert [t["id"] for t in cd.compare_candidates(traces, "a")] == ["c", "b", "d"]
    assert [t["id"] for t in cd.compare_candidates(traces, "d")] == ["a", "b", "c"]


def test_battle_rows_name_models_and_votes():
    g = {"kind": "battle", "id": "s1", "chat_mode": "battle_anony", "sides": ["t1", "t2"],
         "models": ["gpt-4o", "claude-3-5-sonnet"], "rounds": 2,
         "votes": [{"winner": "right", "tstamp": 1736935200000}]}
    traces = {"t1": {"title": "Write a snake game"}, "t2": {}}
    row = cd.battle_row(g, traces)
    assert row == {"battle": "s1", "mode": "battle_anony", "left model": "gpt-4o",
                   "right model": "claude-3-5-sonnet", "vote": "right is better (claude-3-5-sonnet)", "rounds": 2,
                   "date": "2025-01-15 10:00 UTC", "first prompt": "Write a snake game"}
    assert cd.vote_text({"winner": "bothbad"}, g["models"]) == "both are bad"
    assert cd.vote_time({"tstamp": 1736935200123}) == "2025-01-15 10:00:00 UTC"  # the cook gives epoch ms
    assert cd.vote_time({}) == "—"
    assert cd.battles([g, {"kind": "other"}, None]) == [g]


# -- through the real cook --------------------------------------------------------------------------
def _trials(path, model, steps, patch):
    msgs = [{"role": "user", "content": "Fix add() in calc.py"}]
    for n, (name, args) in enumerate(steps):
        msgs.append({"role": "assistant", "content": None, "model": model,
                     "tool_calls": [{"id": f"call_{n}", "type": "function",
                                     "function": {"name": name, "arguments": json.dumps(args)}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{n}", "content": f"output of {name}"})
    msgs.append({"role": "assistant", "content": "Fixed.", "model": model})
    path.write_text(json.dumps([{"instance_id": "calc__add-1", "model": model, "model_patch": patch,
                                 "run_metadata": {"termination_reason": "completed", "duration_ms": 1000},
                                 "messages": msgs}]))
    return path


def test_cooked_trials_runs_align_with_a_gap(tmp_path):
    steps = [("read_file", {"path": "calc.py"}), ("edit_file", {"path": "calc.py"}), ("bash", {"command": "pytest"})]
    _trials(tmp_path / "a.trials.json", "model-a", steps, "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+y\n")
    _trials(tmp_path / "b.trials.json", "model-b", [steps[0], steps[2]],
            "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+z\n")
    doc, _ = pipeline.cook_paths([tmp_path])
    assert cooked_errors(doc) == []
    messages = {m["id"]: m for m in doc["messages"]}
    requests = {r["id"]: r for r in doc["requests"]}
    by_model = {t["models"][0]: t for t in doc["traces"]}
    a, b = Side(by_model["model-a"], messages, requests), Side(by_model["model-b"], messages, requests)
    assert shape(cd.align_sides(a, b)) == [
        ("user", SAME, "user"),
        ("tool read_file", SAME, "tool read_file"),
        ("tool edit_file", LEFT_ONLY, None),
        ("tool bash", SAME, "tool bash"),
        ("assistant", SAME, "assistant"),
    ]
    stats = {r["what"]: r for r in cd.stats_table(cd.side_stats(a), cd.side_stats(b))}
    assert stats["tool calls"]["left"] == "3" and stats["tool calls"]["difference"] == "−1 (−33%)"
    assert stats["model"]["difference"] == "different"
    assert stats["input tokens"]["left"] == "—"  # the runs recorded no usage: not known, not zero
    assert "+z" in cd.patch_diff(cd.patch_text(a.trace), cd.patch_text(b.trace))
    assert [t["id"] for t in cd.compare_candidates(doc["traces"], a.trace["id"])] == [b.trace["id"]]
