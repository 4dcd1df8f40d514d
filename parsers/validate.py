"""Validation of cooked documents against the published JSON Schema."""
from __future__ import annotations

import functools
import json
from importlib import resources

import jsonschema


@functools.lru_cache(maxsize=None)
def cooked_schema() -> dict:
    return json.loads(resources.files("parsers.schema").joinpath("cooked.schema.json").read_text("utf-8"))


def cooked_errors(doc) -> list[tuple[str, str]]:
    """(JSON pointer, message) for every schema violation, plus broken references between ids."""
    v = jsonschema.Draft202012Validator(cooked_schema())
    errs = [("/" + "/".join(str(p) for p in e.absolute_path), e.message)
            for e in sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]
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


def validate_file(path: str) -> tuple[str, list[tuple[str, str]]]:
    """Validate a cooked document (or another validatable kind); returns (kind, errors)."""
    import orjson

    try:
        with open(path, "rb") as f:
            doc = orjson.loads(f.read())
    except OSError as e:
        return "file", [("", f"could not be read: {e}")]
    except orjson.JSONDecodeError as e:
        return "file", [("", f"not valid JSON: {e}")]
    for kind, is_kind, check in _VALIDATORS:
        if is_kind(doc):
            return kind, check(doc)
    return "cooked document", cooked_errors(doc)


def _is_cooked(doc) -> bool:
    return isinstance(doc, dict) and "messages" in doc and "requests" in doc


# (kind, recogniser, checker); other formats add theirs with register_validator().
_VALIDATORS: list = [("cooked document", _is_cooked, cooked_errors)]


def register_validator(kind: str, is_kind, check) -> None:
    _VALIDATORS.append((kind, is_kind, check))
