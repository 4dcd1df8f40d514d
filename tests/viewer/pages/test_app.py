"""The app's pages, run with Streamlit's AppTest (no browser)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from parsers import pipeline
from tests.conftest import another_run

ROOT = Path(__file__).resolve().parents[3]
APP = str(ROOT / "app.py")
SAMPLES = ROOT / "sample_data" / "api_logs"


def app(paths=(), monkeypatch=None) -> AppTest:
    if monkeypatch is not None:
        monkeypatch.setenv("TRACEVIEW_PATHS", ":".join(str(p) for p in paths))
    return AppTest.from_file(APP, default_timeout=60)


def on_page(at: AppTest, url_path: str, **params) -> AppTest:
    """Open one of the app's pages (they are functions registered under a URL path)."""
    at._page_hash = calc_hash(url_path)
    at.query_params.clear()
    at.query_params.update({k: str(v) for k, v in params.items()})
    return at.run()


def trace_id(path: Path) -> str:
    doc, _ = pipeline.cook_paths([path])
    return doc["traces"][0]["id"]


def html(at: AppTest) -> str:
    """The rendered trace blocks (not the stylesheet, which names every class)."""
    return "\n".join(h.proto.body for h in at.html if 'class="tv-root"' in h.proto.body)


def long_log(tmp_path, n=120, big_at=None) -> Path:
    """An OpenAI request log of one request carrying `n` messages."""
    msgs = [{"role": "system", "content": "be brief"}]
    for i in range(1, n):
        text = f"message number {i}"
        if i == big_at:
            text = "BIG " + "x" * 9000 + " THE-END"
        msgs.append({"role": "user" if i % 2 else "assistant", "content": text})
    rec = {"id": "r1", "timestamp": 1_700_000_000_000, "request": {"model": "gpt-4o", "messages": msgs},
           "response": {"choices": [{"message": {"role": "assistant", "content": "final answer"}}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 2}}}
    p = tmp_path / "long.jsonl"
    p.write_text(json.dumps(rec) + "\n")
    return p


def test_open_lists_the_bundled_samples(monkeypatch):
    monkeypatch.delenv("TRACEVIEW_PATHS", raising=False)
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "Open traces"
    runs = at.dataframe[0].value
    ids = set(runs["id"])
    assert {trace_id(SAMPLES / "anthropic_messages.jsonl"), trace_id(SAMPLES / "openai_chat.jsonl")} <= ids
    assert {"title", "format", "model", "messages", "requests", "tokens", "cost", "outcome"} <= set(runs.columns)


def test_open_shows_problems_next_to_their_input(tmp_path, monkeypatch, open_panels):
    good = tmp_path / "good.jsonl"
    good.write_bytes((SAMPLES / "openai_chat.jsonl").read_bytes() + b"{not json\n")
    (tmp_path / "notes.log").write_text("just some notes")
    at = app([tmp_path], monkeypatch).run()
    assert not at.exception
    # The panels name each input with problems; their tables are drawn once opened.
    assert not [df for df in at.dataframe if "message" in df.value.columns]
    at = open_panels(at)
    labels = [e.label for e in at.expander]
    assert any("good\\.jsonl" in lab and "1 problem" in lab for lab in labels), labels
    assert any("notes\\.log" in lab and "nothing loaded" in lab for lab in labels), labels
    problems = [df.value for df in at.dataframe if "message" in df.value.columns]
    bad_line = [row for df in problems for _, row in df.iterrows() if row["file"] == "good.jsonl"]
    assert bad_line and bad_line[0]["line"] == 6
    # The good records opened: one trace, linked straight to its timeline.
    assert any("timeline" in str(link.proto.page) for link in at.get("page_link"))


def test_open_by_upload(monkeypatch):
    monkeypatch.delenv("TRACEVIEW_PATHS", raising=False)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.file_uploader[0].upload("mine.jsonl", (SAMPLES / "openai_chat.jsonl").read_bytes())
    at.run()
    assert not at.exception
    # One trace: the upload opens on it.
    (trace,) = pipeline.cook_uploads([("mine.jsonl", (SAMPLES / "openai_chat.jsonl").read_bytes())])[0]["traces"]
    assert at.query_params["trace"] == trace["id"]


def test_timeline_by_url(monkeypatch):
    tid = trace_id(SAMPLES / "anthropic_messages.jsonl")
    at = on_page(app([SAMPLES], monkeypatch), "timeline", trace=tid)
    assert not at.exception
    body = html(at)
    for role in ("system", "user", "assistant", "thinking", "tool_use"):
        assert f'class="tv-msg tv-role-{role}' in body
    assert 'class="tv-result' in body  # tool results sit with their calls
    assert any("anthropic\\_messages\\.jsonl" in m.value for m in at.markdown)
    assert any("7** requests" in c.value for c in at.caption)
    assert at.selectbox(key="branch").value == "all"
    assert at.selectbox(key="branch").options[0].startswith("everything, in time order · 7 requests")


def test_unknown_trace_says_so(monkeypatch):
    at = on_page(app([SAMPLES], monkeypatch), "timeline", trace="0123456789abcdef")
    assert not at.exception
    assert "not in what this server shows" in at.warning[0].value
    at = on_page(app([SAMPLES], monkeypatch), "timeline", trace="../../../etc/passwd")
    assert "not in what this server shows" in at.warning[0].value


def test_odd_parameters_fall_back_to_the_start_of_everything(monkeypatch):
    tid = trace_id(SAMPLES / "anthropic_messages.jsonl")
    at = on_page(app([SAMPLES], monkeypatch), "timeline", trace=tid, msg="abc", branch="../../etc/passwd")
    assert not at.exception
    assert 'id="msg-1"' in html(at) and at.selectbox(key="branch").value == "all"
    n = html(at).count('class="tv-msg')
    at = on_page(app([SAMPLES], monkeypatch), "timeline", trace=tid, msg="99999")
    assert f'id="msg-{n}"' in html(at)  # past the end: the last page


def test_only_errors_shows_the_failed_request(monkeypatch):
    tid = trace_id(SAMPLES / "openai_chat.jsonl")
    at = on_page(app([SAMPLES], monkeypatch), "timeline", trace=tid)
    at.toggle(key="errors").set_value(True).run()
    body = html(at)
    assert body.count('class="tv-msg') == 1 and "rate_limit_error" in body


def test_pages_find_and_permalink(tmp_path, monkeypatch):
    log = long_log(tmp_path)
    tid = trace_id(log)
    at = on_page(app([log], monkeypatch), "timeline", trace=tid, msg=76)
    assert not at.exception
    assert 'id="msg-76"' in html(at) and 'id="msg-50"' not in html(at)  # page 2 of 50
    assert at.caption[-1].value.startswith("Entries 51–100 of 121")
    # The messages above the linked one are laid out for real (the rest only near the
    # screen), so the scroll to it lands on it.
    laid_out = [h.proto.body for h in at.html if "content-visibility: visible" in h.proto.body]
    assert len(laid_out) == 1 and ".tv-root #msg-51, " in laid_out[0] and "#msg-75 {" in laid_out[0]
    assert "#msg-76" not in laid_out[0]
    # Find: Enter jumps to the first match from the place being read, then next and previous.
    at.text_input(key="find").input("number 11").run()  # 11 and 110-119: entries 12, 111-120
    assert at.caption[-1].value.endswith("find: match 2 of 11 entries, 11 hits")
    assert at.query_params["msg"] == "111" and 'id="msg-111"' in html(at)
    at.button(key="tv_next").click().run()
    assert at.query_params["msg"] == "112"
    at.button(key="tv_prev").click().run()
    at.button(key="tv_prev").click().run()
    assert at.query_params["msg"] == "12" and 'id="msg-12"' in html(at)  # back on page 1
    assert at.caption[-1].value.startswith("Entries 1–50")
    # Next and previous message move the focus one entry.
    at.button(key="tv_next_msg").click().run()
    assert at.query_params["msg"] == "13"
    at.button(key="tv_prev_msg").click().run()
    at.button(key="tv_prev_msg").click().run()
    assert at.query_params["msg"] == "11"


def test_expand_and_raw(tmp_path, monkeypatch):
    log = long_log(tmp_path, n=20, big_at=5)
    tid = trace_id(log)
    at = on_page(app([log], monkeypatch), "timeline", trace=tid)
    assert "THE-END" not in html(at)  # shortened...
    box = at.selectbox(key="tv_expand")
    assert len(box.options) == 1 and "#6" in box.options[0]
    box.select_index(0).run()
    assert "THE-END" in html(at)  # ...until asked for
    assert at.query_params["msg"] == "6"
    at.selectbox(key="tv_raw").select_index(1).run()
    assert 'class="tv-raw' in html(at)


def test_raw_json_shows_the_source_record_beside_the_normalised_message(tmp_path, monkeypatch):
    def record(rid, question, answer, extra=None):
        return {"id": rid, "timestamp": 1_700_000_000_000, **(extra or {}),
                "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": question}]},
                "response": {"choices": [{"message": {"role": "assistant", "content": answer}}]}}
    secret = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv" * 2
    log = tmp_path / "two.jsonl"
    log.write_text(json.dumps(record("first-rec", "q one", "a one")) + "\n\n"
                   + json.dumps(record("second-rec", "q two", "a two",
                                       {"headers": {"Authorization": f"Bearer {secret}"}})) + "\n")
    at = on_page(app([log], monkeypatch), "timeline", trace=trace_id(log))
    box = at.selectbox(key="tv_raw")
    label = next(o for o in box.options if o.startswith("#4"))  # "a two", read from line 3
    box.select(label).run()
    captions = [c.value for c in at.caption]
    assert "In the file: two.jsonl, line 3 (secrets masked)" in captions
    raws = [h.proto.body for h in at.html if 'class="tv-raw' in h.proto.body]
    assert len(raws) == 2  # the normalised message, and the record as the file has it
    assert '"a two"' in raws[0] and "second-rec" not in raws[0]
    assert "second-rec" in raws[1] and "choices" in raws[1]
    assert "Authorization" in raws[1] and secret not in raws[1] and secret[:12] not in raws[1]
    from viewer.pages import state
    state.indexing(*state.start_paths()).stop()  # no longer followed: a change is not read again
    log.write_text(log.read_text().replace("second-rec", "another-id"))  # changed since it was read
    at.selectbox(key="tv_raw").select(next(o for o in box.options if o.startswith("#2"))).run()
    assert any("the file has changed or gone since it was read" in c.value for c in at.caption)
    assert not any("another-id" in h.proto.body for h in at.html)


def test_other_branches_of_a_forked_log(monkeypatch):
    tid = trace_id(SAMPLES / "anthropic_messages.jsonl")
    at = on_page(app([SAMPLES], monkeypatch), "timeline", trace=tid)
    box = at.selectbox(key="branch")
    # everything, the latest conversation, the rewound attempt, the side call
    assert len(box.options) == 4
    assert box.options[1] == "all" or box.value == "all"
    box.set_value("req_03").run()
    assert not at.exception
    assert at.query_params["msg"] == "1"
    body = html(at)
    assert "Summarise tool output" in body and 'class="tv-msg tv-role-tool_use' not in body
    # The link names the branch: a new session opens on it.
    again = on_page(app([SAMPLES], monkeypatch), "timeline", trace=tid, branch="req_03")
    assert "Summarise tool output" in html(again)
    assert again.selectbox(key="branch").value == "req_03"


def test_runs_table_filters(monkeypatch):
    monkeypatch.delenv("TRACEVIEW_PATHS", raising=False)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.text_input(key="tv_runs_text").input("order 4471").run()
    runs = at.dataframe[0].value
    assert list(runs["format"]) == ["request-log"] and "openai_chat" in runs["title"].iloc[0]


def test_open_lists_an_internal_error_and_opens_the_rest_of_the_batch(tmp_path, monkeypatch, plugin, open_panels):
    # A format plug-in whose reader crashes: its file is listed with the error in plain words,
    # and every other file of the batch opens.
    plugin("tv_test_crashing", '''
from parsers.model import Format
def parse(src):
    raise KeyError("surprise")
FORMAT = Format(name="crashing", title="Crashing log", description="", priority=1, parse=parse,
                sniff=lambda src: None if src.head.startswith(b"#crash") else "no")
''', {"crashing": "tv_test_crashing:FORMAT"})
    (tmp_path / "bad.log").write_bytes(b"#crash\n")
    (tmp_path / "good.jsonl").write_bytes((SAMPLES / "openai_chat.jsonl").read_bytes())
    at = open_panels(app([tmp_path], monkeypatch).run())
    assert not at.exception
    labels = [e.label for e in at.expander]
    assert any("bad\\.log" in lab and "nothing loaded" in lab for lab in labels), labels
    problems = [df.value for df in at.dataframe if "message" in df.value.columns]
    rows = [row for df in problems for _, row in df.iterrows() if row["file"] == "bad.log"]
    assert rows and rows[0]["message"].startswith("internal error in the Crashing log reader (KeyError")
    runs = [df.value for df in at.dataframe if "input" in df.value.columns]
    assert any("good.jsonl" in set(df["input"]) for df in runs)


def test_a_plugin_format_is_listed_and_read_like_a_builtin(tmp_path, monkeypatch, plugin, open_panels):
    # A format from an installed package (nothing in viewer/ knows it): its run is in the runs
    # table and its timeline opens.
    plugin("tv_test_lines", '''
from parsers.model import Format, Message, ParsedTrace, ParseResult
def parse(src):
    rows = [line.partition(": ") for line in src.read_bytes().decode().splitlines()[1:]]
    trace = ParsedTrace(format="lines-log", title="a lines log", messages=[Message(r, t) for r, _, t in rows])
    return ParseResult(format="lines-log", traces=[trace], records=len(rows))
FORMAT = Format(name="lines-log", title="Lines log", description="", priority=1, parse=parse,
                sniff=lambda src: None if src.head.startswith(b"#lines") else "no")
''', {"lines-log": "tv_test_lines:FORMAT"})
    log = tmp_path / "chat.lines"
    log.write_bytes(b"#lines\nuser: where is my parcel?\nassistant: on its way since Monday\n")
    at = open_panels(app([log], monkeypatch).run())
    assert not at.exception
    inputs = next(df.value for df in at.dataframe if "input" in df.value.columns)
    assert list(inputs["format"]) == ["lines-log"] and list(inputs["traces"]) == [1]
    # One run: the page links straight to its timeline, under its title.
    assert any("timeline" in str(link.proto.page) and "a lines log" in link.proto.label for link in at.get("page_link"))
    tid = trace_id(log)
    at = on_page(app([log], monkeypatch), "timeline", trace=tid)
    assert not at.exception
    body = html(at)
    assert "where is my parcel?" in body and "on its way since Monday" in body
    assert 'class="tv-msg tv-role-user' in body and 'class="tv-msg tv-role-assistant' in body


def test_an_upload_is_indexed_once_listed_and_removable(monkeypatch, open_panels):
    """An upload goes into the library (indexed once, however often the page reruns), is listed
    under its name, and its remove button takes it out of the library and off the disk."""
    from viewer.library import ingest
    from viewer.pages import state

    monkeypatch.delenv("TRACEVIEW_PATHS", raising=False)
    cooked = []
    real = ingest.cook_batch

    def counting(files, origin="path"):
        cooked.append([f.name for f in files])
        return real(files, origin)

    monkeypatch.setattr(ingest, "cook_batch", counting)
    at = AppTest.from_file(APP, default_timeout=60).run()
    data = another_run((SAMPLES / "openai_chat.jsonl").read_bytes(), 3)  # its own run: no sample shares it
    at.file_uploader[0].upload("mine.jsonl", data)
    at.run()
    assert not at.exception
    for _ in range(2):
        at.run()
    assert [c for c in cooked if "mine.jsonl" in c] == [["mine.jsonl"]]
    (trace,) = pipeline.cook_uploads([("mine.jsonl", data)])[0]["traces"]
    at = open_panels(on_page(at, "open"))
    inputs = next(df.value for df in at.dataframe if "input" in df.value.columns)
    assert inputs.loc[inputs["input"] == "mine.jsonl", "opened as"].tolist() == ["★ new upload: mine.jsonl"]
    folder = state.store().uploads[next(iter(st_keys(at)))].folder
    assert Path(folder, "mine.jsonl").read_bytes() == data
    at.button(key=next(b.key for b in at.button if b.key.startswith("tv_remove_"))).click().run()
    assert not at.exception
    inputs = next((df.value for df in at.dataframe if "input" in df.value.columns), pd.DataFrame({"input": []}))
    assert "mine.jsonl" not in set(inputs["input"]) and not Path(folder).exists()
    assert state.library().run(trace["id"]) is None


def st_keys(at: AppTest) -> list:
    return list(at.session_state["tv_uploads"])


@pytest.mark.parametrize("private", [True, False])
def test_a_private_upload_opens_only_in_its_own_session(monkeypatch, private):
    from viewer.pages import state

    monkeypatch.delenv("TRACEVIEW_PATHS", raising=False)
    if private:
        monkeypatch.setenv(state.PRIVATE_ENV, "1")
    else:
        monkeypatch.delenv(state.PRIVATE_ENV, raising=False)
    data = another_run((SAMPLES / "openai_chat.jsonl").read_bytes(), 7)  # not the sample's run
    tid = pipeline.cook_uploads([("mine.jsonl", data)])[0]["traces"][0]["id"]
    state.store.clear()
    try:
        mine = AppTest.from_file(APP, default_timeout=60).run()
        mine.file_uploader[0].upload("mine.jsonl", data)
        mine.run()
        assert not mine.exception
        assert not on_page(mine, "timeline", trace=tid).warning  # the uploader reads it
        # Another browser session (AppTest gives every app the same session id: stand in another).
        monkeypatch.setattr(state, "session_id", lambda: "another browser session")
        other = on_page(AppTest.from_file(APP, default_timeout=60), "timeline", trace=tid)
        assert not other.exception
        if private:
            assert "only in the browser session that uploaded them" in other.warning[0].value
        else:
            assert not other.warning and any("mine\\.jsonl" in m.value for m in other.markdown)
        # The bundled samples open in every session.
        sample = on_page(AppTest.from_file(APP, default_timeout=60), "timeline",
                         trace=trace_id(SAMPLES / "anthropic_messages.jsonl"))
        assert not sample.warning
    finally:
        state.store.clear()
