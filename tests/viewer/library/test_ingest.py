"""Indexing lists an evaluation log's runs from its summaries before it cooks them: the runs
are in the library at once, each read from the file when it is opened, and the cook that
follows (in the same index or a later one) writes them whole in their place."""
from __future__ import annotations

import json
import shutil
import threading
import zipfile
from pathlib import Path

import pytest

from viewer.library import families, ingest
from viewer.library.library import Library, RunsQuery, Scope
from viewer.library.store import Store
from viewer.pages.open import run_target

ROOT = Path(__file__).resolve().parents[3]
LOG = next((ROOT / "sample_data" / "inspect_ai").glob("*.eval"))  # three samples
EVERYTHING = Scope(everything=True)
LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}  # Inspect's value_to_float


@pytest.fixture(autouse=True)
def list_every_log(monkeypatch):
    """Small logs are listed ahead too (by default only those that take a while to cook)."""
    monkeypatch.setattr(ingest, "LIST_AHEAD_BYTES", 0)


def raw_samples(log: Path) -> list[dict]:
    """The log's samples as its archive holds them, in the order of its summaries."""
    with zipfile.ZipFile(log) as z:
        order = [(s["id"], s["epoch"]) for s in json.loads(z.read("summaries.json"))]
        samples = {(s["id"], s["epoch"]): s for s in
                   (json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/"))}
    return [samples[k] for k in order]


def listed_only(library: Library, folder: Path) -> ingest.Progress:
    """An index that stops once the runs are listed, before the first cook."""
    progress = ingest.Progress()
    return library.index([folder], jobs=1, progress=progress, stop=lambda: progress.listed > 0)


def rows(library: Library) -> list[dict]:
    return library.runs(RunsQuery(sort="source", limit=100), EVERYTHING).rows


def test_a_log_is_listed_before_it_is_cooked_and_its_runs_open_from_the_file(library, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(LOG, folder / LOG.name)
    samples = raw_samples(LOG)
    p = listed_only(library, folder)
    assert (p.listed, p.cooked, p.runs) == (len(samples), 0, 0)
    assert f"{len(samples)} runs listed" in p.line()
    listed = rows(library)
    assert len(listed) == len(samples) == 3
    assert library.listed_inputs(EVERYTHING) == 1
    for row, sample in zip(listed, samples):
        assert families.listed(row["family"])
        assert row["task"].endswith(f"/{sample['id']}")
        # Scores come from the summary; usage and cost with the cook.
        assert row["scores"] == {k: LETTERS[v["value"]] for k, v in (sample.get("scores") or {}).items()}
        assert row["tokens"] is None and row["cost"] is None
        assert run_target(row) == "timeline"  # scored, no messages counted yet: not a scorecard-only run
    # Opening a listed run reads it from the file: its conversation is the sample's.
    store = Store(library)
    for row, sample in zip(listed, samples):
        col, trace = store.find_trace(row["id"], EVERYTHING)
        shown = [col.messages[m]["content"] for m in trace["timeline"]]
        assert sample["input"] in shown[:2]
        assert trace["totals"].get("output", 0) == sum(u["output_tokens"] for u in sample["model_usage"].values())

    # The next index cooks the log: the same runs, whole, with usage and a stored family.
    again = library.index([folder], jobs=1)
    assert (again.listed, again.cooked, again.unchanged) == (0, 1, 0)
    cooked = rows(library)
    assert [r["id"] for r in cooked] == [r["id"] for r in listed]
    assert library.listed_inputs(EVERYTHING) == 0
    for row, sample in zip(cooked, samples):
        assert not families.listed(row["family"])
        # Inspect's own total of each model's tokens (input, output and cache reads and writes).
        assert (row["tokens"] or 0) == sum(u["total_tokens"] for u in sample["model_usage"].values())
    assert library.index([folder], jobs=1).unchanged == 1  # cooked: nothing to do


def test_one_index_lists_then_cooks(library, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(LOG, folder / LOG.name)
    seen = []  # what the library held after each write
    p = library.index([folder], jobs=1, on_batch=lambda: seen.append([r["family"] for r in rows(library)]))
    assert (p.listed, p.cooked, p.runs) == (3, 1, 3)
    assert [all(map(families.listed, fams)) for fams in seen] == [True, False]


def test_a_log_that_cooks_at_once_is_not_listed_ahead(library, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "LIST_AHEAD_BYTES", LOG.stat().st_size + 1)
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(LOG, folder / LOG.name)
    p = library.index([folder], jobs=1)
    assert (p.listed, p.cooked, p.runs) == (0, 1, 3)


def test_only_new_files_of_a_lazily_listed_format_are_listed(library, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "chat.jsonl").write_text(json.dumps({"request": {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"}]}, "response": {"choices": [{"message": {
            "role": "assistant", "content": "hello"}}]}}) + "\n")
    assert listed_only(library, folder).listed == 0  # a request log is cooked, never listed
    shutil.copy(LOG, folder / LOG.name)
    library.index([folder], jobs=1)
    # A log the library holds already, then rewritten, keeps its cooked runs until its new
    # cook replaces them: it is not listed again.
    with zipfile.ZipFile(folder / LOG.name, "a") as z:
        z.writestr("notes.txt", "an extra member")
    assert listed_only(library, folder).listed == 0


def test_a_damaged_log_is_not_listed_and_its_cook_says_what_is_wrong(library, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "broken.eval").write_bytes(b"PK\x03\x04 not really a zip")
    p = library.index([folder], jobs=1)
    assert (p.listed, p.cooked) == (0, 1)
    (entry,) = library.inputs(EVERYTHING, with_problems=True)
    assert entry["problems"] and entry["name"] == "broken.eval"


@pytest.mark.parametrize("damage", ["gone", "cut off"])
def test_a_listed_run_whose_file_went_before_it_was_opened_is_not_found(library, tmp_path, damage):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(LOG, folder / LOG.name)
    listed_only(library, folder)
    first = rows(library)[0]
    if damage == "gone":
        (folder / LOG.name).unlink()
    else:
        (folder / LOG.name).write_bytes(LOG.read_bytes()[:200])
    assert library.run_and_family(first["id"]) is None
    assert Store(library).find_trace(first["id"], EVERYTHING) is None


def test_three_indexers_writing_one_listed_log_at_once_all_finish(library, tmp_path):
    """App instances on one library index the same new log at once: each writes the listed
    input's runs over the others' (one at a time, not meeting rows half replaced), none fails,
    and the library holds each run once, cooked."""
    for rep in range(8):
        folder = tmp_path / f"logs{rep}"
        folder.mkdir()
        shutil.copy(LOG, folder / LOG.name)
        errors: list[str] = []
        others = [Library(library.location) for _ in range(3)]

        def index(lib):
            try:
                lib.index([folder], jobs=1)
            except Exception as e:  # noqa: BLE001 - what the test reports
                errors.append(repr(e))

        threads = [threading.Thread(target=index, args=(lib,)) for lib in others]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for lib in others:
            lib.close()
        assert not errors, errors
        held = library.runs(RunsQuery(limit=100), Scope(paths=(str(folder),))).rows
        assert len(held) == 3 and not any(families.listed(r["family"]) for r in held)
