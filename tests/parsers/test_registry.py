"""Formats are plug-ins: a package that names a Format in the `traceview.formats` entry points
is detected, cooked and listed like a built-in; a broken one is reported, not fatal."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from parsers import registry
from parsers.pipeline import cook_uploads

REPO = Path(__file__).resolve().parents[2]

# A format a third party could ship: "KV logs", lines of `role: text`.
KV_FORMAT = '''
from parsers.model import Format, Message, ParsedTrace, ParseResult, Problem

def sniff(src):
    return None if src.head.startswith(b"#kv-log") else "no #kv-log header"

def parse(src):
    problems, messages = [], []
    for n, line in enumerate(src.read_bytes().decode().splitlines()[1:], 2):
        role, _, text = line.partition(": ")
        if role not in ("user", "assistant"):
            problems.append(Problem(src.name, f"expected user or assistant, found {role!r}", line=n))
            continue
        messages.append(Message(role, text))
    trace = ParsedTrace(format="kv-log", title="a KV log", messages=messages, models=["kv-model"])
    return ParseResult(format="kv-log", traces=[trace], problems=problems, records=len(messages))

FORMAT = Format(name="kv-log", title="KV log", description="role: text lines", sniff=sniff, parse=parse,
                patterns=("*.kv",), priority=10)
'''
KV_LOG = b"#kv-log\nuser: hello there\nassistant: general Kenobi\nrobot: beep\n"


def test_builtins_come_through_the_entry_points():
    names = {f.name for f in registry.formats()}
    assert {"request-log", "trials", "arena", "benchmark", "swf", "sharegpt"} <= names
    assert registry.load_problems() == []


def test_an_installed_plugin_is_detected_cooked_and_listed(plugin):
    plugin("tv_test_kv", KV_FORMAT, {"kv-log": "tv_test_kv:FORMAT"})
    assert "kv-log" in registry.names()
    doc, (summary,) = cook_uploads([("chat.kv", KV_LOG)])
    assert summary.format == "kv-log" and summary.traces == 1
    msgs = {m["id"]: m for m in doc["messages"]}
    (trace,) = doc["traces"]
    assert [(msgs[i]["role"], msgs[i]["content"]) for i in trace["timeline"]] == [
        ("user", "hello there"), ("assistant", "general Kenobi")]
    assert [(p["line"], p["message"]) for p in summary.problems] == [(4, "expected user or assistant, found 'robot'")]


def test_a_broken_plugin_is_reported_and_the_others_still_work(plugin):
    plugin("tv_test_broken", "raise RuntimeError('cannot start')\n", {"broken": "tv_test_broken:FORMAT"})
    (problem,) = registry.load_problems()
    assert "broken" in problem and "RuntimeError: cannot start" in problem
    assert "request-log" in registry.names()


def test_a_plugin_cannot_take_a_builtin_name(plugin):
    source = KV_FORMAT.replace('name="kv-log"', 'name="trials"')
    plugin("tv_test_dup", source, {"trials": "tv_test_dup:FORMAT"})
    assert any("already registered" in p for p in registry.load_problems())
    assert registry.get("trials").title != "KV log"


def test_the_command_line_sees_a_plugin_installed_beside_it(plugin, tmp_path):
    # A real process: the package on PYTHONPATH is found through its entry points alone.
    site = plugin("tv_test_kv", KV_FORMAT, {"kv-log": "tv_test_kv:FORMAT"})
    log = tmp_path / "chat.kv"
    log.write_bytes(KV_LOG)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "viewer.cli", "cook", str(log)], capture_output=True,
                         env=env, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    doc = orjson.loads(out.stdout)
    assert doc["inputs"][0]["format"] == "kv-log" and len(doc["traces"]) == 1
    assert b"chat.kv: kv-log, 2 records, 1 trace" in out.stderr
    forced = subprocess.run([sys.executable, "-m", "viewer.cli", "cook", "--format", "kv-log", str(log)],
                            capture_output=True, env=env, cwd=REPO, timeout=120)
    assert forced.returncode == 0, forced.stderr.decode()


HEAVY_BY_FEW = ("jsonschema", "yaml", "google.protobuf")


def test_cooking_imports_only_what_its_inputs_need():
    """Libraries that only some inputs need are imported by those inputs, not by every cook
    (each is 15 to 50 ms of every `traceview` command's start, and the registry loads every
    format): jsonschema when a document is first validated, YAML for mini-swe-agent's exit
    statuses, protobuf for a Cursor chat store."""
    code = ("import sys; from parsers import pipeline; "
            "doc, _ = pipeline.cook_paths([sys.argv[1]]); "
            f"print(len(doc['traces']), [m for m in {HEAVY_BY_FEW!r} if m in sys.modules])")
    sample = Path(__file__).resolve().parents[2] / "sample_data" / "api_logs" / "openai_chat.jsonl"
    out = subprocess.run([sys.executable, "-c", code, str(sample)], capture_output=True, text=True, check=True).stdout
    n, imported = out.split(maxsplit=1)
    assert int(n) >= 1 and imported.strip() == "[]"
