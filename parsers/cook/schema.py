"""Validation of cooked documents against the published JSON Schema."""
from __future__ import annotations

import functools
import json
from importlib import resources



@functools.lru_cache(maxsize=None)
def cooked_schema() -> dict:
    return json.loads(resources.files("parsers.schema").joinpath("cooked.schema.json").read_text("utf-8"))


_ID_LISTS = ("request_messages", "response_messages")


def cooked_errors(doc) -> list[tuple[str, str]]:
    """(JSON pointer, message) for every schema violation, plus broken references between ids.

    Requests of long trajectories repeat the history's ids (millions of them in a
    3,000-message trace); those lists go to the schema validator cut to their first item and
    are checked in full below, where every id must name a message (which the schema checked)."""
    import jsonschema  # imported when first needed: every cook imports this module

    v = jsonschema.Draft202012Validator(cooked_schema())
    shown = doc
    if isinstance(doc, dict) and isinstance(doc.get("requests"), list):
        shown = dict(doc)
        shown["requests"] = [{**r, **{k: r[k][:1] for k in _ID_LISTS if isinstance(r.get(k), list)}}
                             if isinstance(r, dict) else r for r in doc["requests"]]
    errs = [("/" + "/".join(str(p) for p in e.absolute_path), e.message)
            for e in sorted(v.iter_errors(shown), key=lambda e: list(map(str, e.absolute_path)))]
    if errs or not isinstance(doc, dict):
        return errs
    mids = {m["id"] for m in doc["messages"]}
    tids = {t["id"] for t in doc["tools"]}
    rids = [r["id"] for r in doc["requests"]]
    rset = set(rids)
    if len(rset) != len(rids):
        errs.append(("/requests", "request ids are not unique"))
    for i, r in enumerate(doc["requests"]):
        for key in ("request_messages", "response_messages"):
            for j, m in enumerate(r[key]):
                if m not in mids:
                    errs.append((f"/requests/{i}/{key}/{j}", f"unknown message id {m}"))
        for j, t in enumerate(r["tools"]):
            if t not in tids:
                errs.append((f"/requests/{i}/tools/{j}", f"unknown tool id {t}"))
        if r["parent_id"] is not None and r["parent_id"] not in rset:
            errs.append((f"/requests/{i}/parent_id", f"unknown request id {r['parent_id']}"))
    for i, t in enumerate(doc["traces"]):
        for j, m in enumerate(t["timeline"]):
            if m not in mids:
                errs.append((f"/traces/{i}/timeline/{j}", f"unknown message id {m}"))
        for j, r in enumerate(t["requests"]):
            if r not in rset:
                errs.append((f"/traces/{i}/requests/{j}", f"unknown request id {r}"))
    return errs
