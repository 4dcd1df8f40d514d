"""Secrets never leave the cook: API keys, tokens and passwords in a trace are masked.

Request headers and account metadata are not copied into the cooked document at all. Every
other string the cooked document takes from a trace passes `mask_document` once, at the end
of the cook (ids are computed before, so dedup stays exact): message fields, tools and their
schemas, request errors, stop reasons, params and record ids, trace titles, tasks, outcome,
artifacts, scorecards, meta, groups and every problem's message and path. Names of inputs
(files, archive members) are the user's, not the trace's, and are kept.

Two kinds of masking, both in `scrub`:
- in text (`scrub_text`): known key shapes (`sk-…`, `AIza…`, `ghp_…`, JWTs, private key
  blocks…), `Bearer <token>`, `Basic <base64 of user:password>`, and a secret-looking value
  after a key-like label (`x-api-key: …`, `"password": "…"`, `OPENAI_API_KEY=…`, `?key=…`);
- in objects: the value under a key-like name (`api_key`, `x-api-key`, `token`, `secret`,
  `password`, `authorization`, `cookie`…) whatever it looks like. In a JSON Schema's
  `properties` those names are parameter names: only their `default`, `const`, `enum` and
  examples are masked there, so a tool's schema still reads.
"""
from __future__ import annotations

import base64
import binascii
import re

MASK = "[redacted]"

# A value that looks like a secret: 8+ token characters with at least a letter and a digit
# (so ordinary words and code identifiers after a label are left alone); not a call or an index.
_VALUE = r"(?=[\w.~+/=\-]*\d)(?=[\w.~+/=\-]*[A-Za-z])[\w.~+/=\-]{8,}+(?![(\[])"

# A label ends with one of these words; what comes before is checked only where one is found
# (`_label_ok`). The words are looked for in the lower-cased text, one literal-led regex each:
# the regex engine skips through a text far faster that way than with `(?i:...)`.
_LABEL_WORDS = ("key", "token", "secret", "passw", "authoriz")  # the hints
_LABELS = {"key": ("key",), "token": ("token",), "secret": ("secret",), "passw": ("password", "passwd"),
           "authoriz": ("authorization",)}
_SCHEME = r"(?:(?:bearer|basic|token|digest)[ \t]+)?"
# After an api key or authorization label a space is enough (`invalid x-api-key sk-…`); after
# token, secret and password a `:` or `=` is needed ("the token 1234abcd" is prose).
_LOOSE = r"(?![\w\-])(?=[\"' \t:=])([\"']?[ \t]*[:=]?[ \t]*[\"']?[ \t]*" + _SCHEME + r")(" + _VALUE + ")"
_STRICT = r"(?![\w\-])([\"']?[ \t]*[:=][ \t]*[\"']?[ \t]*" + _SCHEME + r")(" + _VALUE + ")"
_LABEL_RX = {h: [re.compile("(" + w + ")" + (_LOOSE if h in ("key", "authoriz") else _STRICT)) for w in ws]
             for h, ws in _LABELS.items()}
# "key" is a label only as api key, x-api-key, secret key, private key, access key (OPENAI_API_KEY,
# apiKey), or a URL's query parameter (`?key=`).
_KEY_PREFIX = re.compile(r"(?<![A-Za-z0-9])(?i:(?:x[-_]?)?api|secret(?:[-_]?access)?|private|access)[-_]?\Z|[?&]\Z")


def _label_ok(s: str, start: int, end: int) -> bool:
    """Whether the label word at s[start:end] is a label: a word of its own or the end of a
    snake, kebab or camel case name (`access_token`, `clientSecret`); "key" only after api etc."""
    word = s[start:end]
    if word[0] in "kK":
        return _KEY_PREFIX.search(s, max(0, start - 24), start) is not None
    if start == 0 or not s[start - 1].isalnum():
        return True
    return word[0].isupper() and word[1].islower() and s[start - 1].islower()


def _mask_labels(s: str, words: list[str], low: str) -> str:
    """Mask the secret-looking values after labels (`x-api-key: …`, `"password": "…"`, `API_TOKEN=…`);
    `low` is `s` lower-cased."""
    if len(low) != len(s):  # a rare letter whose lower case is longer: the text's own case, slower
        for rx in (re.compile(r.pattern, re.I) for h in words for r in _LABEL_RX[h]):
            s = rx.sub(lambda m: m.group(0) if not _label_ok(m.string, m.start(), m.end(1))
                       else m.group(1) + m.group(2) + MASK, s)
        return s
    spans = []
    for h in words:
        for rx in _LABEL_RX[h]:
            m = rx.search(low)  # mostly None: the word is there, no value after it
            while m is not None:
                if _label_ok(s, m.start(), m.end(1)):
                    spans.append(m.span(3))
                m = rx.search(low, m.end())
    if not spans:
        return s
    spans.sort()
    out, last = [], 0
    for a, b in spans:
        if a < last:  # overlapping spans: the first covers it
            continue
        out.append(s[last:a])
        out.append(MASK)
        last = b
    out.append(s[last:])
    return "".join(out)


def _basic(m: re.Match) -> str:
    """`Basic <base64>` is masked when the base64 decodes to `user:password`."""
    try:
        raw = base64.b64decode(m.group(2), validate=True)
    except (binascii.Error, ValueError):
        return m.group(0)
    return m.group(1) + MASK if b":" in raw else m.group(0)


def _rx(pattern: str, repl=MASK, flags: int = 0) -> tuple[re.Pattern, object]:
    return re.compile(pattern, flags), repl


# (a lower-case hint, the rules it lets run). The text is lower-cased once and each hint looked
# for with a plain substring test: most texts hold none, and the regexes run only on the few
# that do. Each regex starts with its literal (which the engine finds fast), then checks that no
# letter or digit comes before it ("asterisk-…" is not a key); an OpenAI key's body holds a
# digit ("sk-learn-compatible-estimators" is not one).
_RULES: list[tuple[str, list[tuple[re.Pattern, object]]]] = [
    ("sk", [_rx(r"sk[-_](?<![A-Za-z0-9]sk.)(?:ant-[A-Za-z0-9_\-]{16,}"                 # Anthropic
                r"|(?:proj-|svcacct-|admin-)?(?=[A-Za-z_\-]*\d)[A-Za-z0-9_\-]{20,}"   # OpenAI
                r"|(?:live|test)_[A-Za-z0-9]{16,})")]),                                # Stripe
    ("aiza", [_rx(r"AIza(?<![A-Za-z0-9]AIza)[0-9A-Za-z_\-]{35}")]),                   # Google
    ("gh", [_rx(r"gh[pousr]_(?<![A-Za-z0-9]gh._)[A-Za-z0-9]{36,}")]),                  # GitHub
    ("github_pat_", [_rx(r"github_pat_[A-Za-z0-9_]{40,}")]),
    ("xox", [_rx(r"xox[abposr]-[A-Za-z0-9\-]{10,}")]),                   # Slack
    ("akia", [_rx(r"AKIA(?<![A-Za-z0-9]AKIA)[0-9A-Z]{16}(?![0-9A-Z])")]),   # AWS access key id
    ("hf_", [_rx(r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{30,}")]),             # Hugging Face
    ("eyj", [_rx(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")]),  # JWT
    ("bearer", [_rx(r"((?:[Bb]earer|BEARER)\s+)[A-Za-z0-9._~+/\-]{16,}=*", r"\g<1>" + MASK)]),
    ("basic", [_rx(r"((?:[Bb]asic|BASIC)\s+)([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])", _basic)]),
]
# A key cut short by a parser (a title made of the first message's first characters): looked
# for when a text holds one of the hints above and an ellipsis.
_CUT = re.compile(r"(?:sk-|sk_|AIza|gh[pousr]_|github_pat_|xox[abposr]-|AKIA|hf_|eyJ|(?<=[Bb]earer )|(?<=BEARER ))"
                  r"[A-Za-z0-9_.~+/\-]*…")
# A private key block (looked for when "key" is there).
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)


def scrub_text(s: str) -> str:
    """Mask the secrets in a text."""
    n = len(s)
    if n < 6:  # too short to hold any (ids, roles)
        return s
    if n < 80:  # names, models, stop reasons, ids recur: each is masked once
        hit = _short.get(s)
        if hit is None:
            if len(_short) > 100_000:
                _short.clear()
            hit = _short[s] = _scrub_text(s)
        return hit
    return _scrub_text(s)


_short: dict[str, str] = {}


def _scrub_text(s: str) -> str:
    low = s.lower()
    t = s
    cut = False
    for hint, rules in _RULES:
        if hint in low:
            for rx, repl in rules:
                t = rx.sub(repl, t)
            cut = cut or hint != "basic"
    if cut and "…" in t:
        t = _CUT.sub(MASK + "…", t)
    words = [w for w in _LABEL_WORDS if w in low]
    if not words:
        return t
    if words[0] == "key" and "-----BEGIN" in t:
        t = _PEM.sub(MASK, t)
    return _mask_labels(t, words, low if t is s else t.lower())


# Names whose value is a secret whatever it looks like; compared lower-cased without `-`, `_`,
# spaces and dots ("X-Api-Key", "OPENAI_API_KEY", "client.secret").
_SECRET_NAMES = frozenset((
    "authorization", "proxyauthorization", "auth", "token", "bearer", "secret", "password", "passwd", "pwd",
    "cookie", "setcookie", "credential", "credentials", "privatekey", "passphrase"))
_SECRET_SUFFIXES = ("apikey", "secret", "password", "passwd", "accesstoken", "refreshtoken", "authtoken",
                    "sessiontoken", "apitoken", "idtoken", "bearertoken", "securitytoken", "secretkey",
                    "privatekey", "secretaccesskey", "clientsecret", "authorization")
_SCHEMA_VALUES = ("default", "const", "enum", "examples", "example")
_names: dict[str, tuple[str, bool]] = {}  # an object key -> (its masked text, whether it names a secret)


def _key(k: str) -> tuple[str, bool]:
    hit = _names.get(k)
    if hit is None:
        n = k.lower().replace("-", "").replace("_", "").replace(" ", "").replace(".", "")
        hit = (scrub_text(k), n in _SECRET_NAMES or n.endswith(_SECRET_SUFFIXES))
        if len(_names) > 50_000:
            _names.clear()
        _names[k] = hit
    return hit


def _mask_all(v):
    """A value under a secret name: every string and number in it masked, its shape kept."""
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        return MASK
    if isinstance(v, list):
        return [_mask_all(x) for x in v]
    if isinstance(v, dict):
        return {_key(k)[0] if isinstance(k, str) else k: _mask_all(x) for k, x in v.items()}
    return v


# Values with no text in them: a scrub gives them back as they are.
_BARE = frozenset((int, float, bool, type(None)))


def scrub(obj, _properties: bool = False):
    """Mask secrets in every string of a JSON-like value, keys included; values under secret
    names are masked whole (see the module's docstring)."""
    if isinstance(obj, str):
        return scrub_text(obj)
    # Most values are strings and numbers: they are handled in the loops below, not in a
    # call of their own each.
    if isinstance(obj, list):
        return [scrub_text(v) if type(v) is str else v if type(v) in _BARE else scrub(v) for v in obj]
    if isinstance(obj, dict):
        out = {}
        names = _names
        for k, v in obj.items():
            if not isinstance(k, str):
                out[k] = scrub(v)
                continue
            name, secret = names.get(k) or _key(k)
            if not secret:
                t = type(v)
                out[name] = scrub_text(v) if t is str else v if t in _BARE else \
                    scrub(v, k == "properties" and isinstance(v, dict))
            elif _properties and isinstance(v, dict):  # a schema's parameter named like a secret
                out[name] = {kk: _mask_all(vv) if kk in _SCHEMA_VALUES else scrub(vv) for kk, vv in scrub(v).items()}
            else:
                out[name] = _mask_all(v)
        # {"name": "Authorization", "value": "..."}: a header as a pair (HAR and the like)
        if "value" in out and not isinstance(out["value"], (dict, list)):
            label = obj.get("name", obj.get("key"))
            if isinstance(label, str) and _key(label)[1]:
                out["value"] = _mask_all(out["value"])
        return out
    return obj


def scrub_problem(p: dict) -> dict:
    """A problem as a dict, its message and JSON path masked (the file name is the input's)."""
    msg, path = p.get("message"), p.get("path")
    if isinstance(msg, str):
        p["message"] = scrub_text(msg)
    if isinstance(path, str) and path:
        p["path"] = scrub_text(path)
    return p


# -- the cooked document ------------------------------------------------------------------------

# Fields the cook computes (content ids, trace ids, lists of ids, numbers): not trace text.
_MESSAGE_SKIP = frozenset(("id", "role", "is_error", "timestamp", "images"))
_REQUEST_SKIP = frozenset(("id", "parent_id", "timestamp", "request_messages", "response_messages", "tools",
                           "duration_ms", "trace", "usage", "cost", "cost_source", "price", "line", "record"))
_TRACE_SKIP = frozenset(("id", "format", "source", "started_at", "ended_at", "duration_ms", "totals", "requests",
                         "timeline", "tools", "pricing", "problems"))


def _image(d: dict) -> dict:
    """An image reference: its address and note masked; the data URI is kept whole (a mask
    inside base64 would only break the image) and the digest is the cook's."""
    d = dict(d)
    if isinstance(d.get("url"), str):
        d["url"] = scrub_text(d["url"])
    if isinstance(d.get("note"), str):
        d["note"] = scrub_text(d["note"])
    return d


def mask_message(m: dict) -> None:
    """Mask a cooked message in place (its id stays the id of the unmasked content)."""
    for k, v in m.items():
        t = type(v)
        if t in _BARE or k in _MESSAGE_SKIP:
            continue
        m[k] = scrub_text(v) if t is str else scrub(v)
    if m.get("images"):
        m["images"] = [_image(im) if isinstance(im, dict) else im for im in m["images"]]


def mask_tool(t: dict) -> None:
    """Mask a cooked tool in place: its name, description and parameters (a JSON Schema)."""
    for k in ("name", "description", "parameters"):
        if t.get(k) is not None:
            t[k] = scrub(t[k])


def mask_request(r: dict) -> None:
    """Mask a cooked request in place (its id is masked where ids are made unique; its price
    comes from the price list)."""
    for k, v in r.items():
        if k not in _REQUEST_SKIP and v is not None:
            r[k] = scrub_text(v) if type(v) is str else scrub(v)


def mask_trace(t: dict) -> None:
    """Mask a cooked trace in place: title, task, models, outcome, artifacts, scorecard, meta,
    the models its pricing names, its problems."""
    for k, v in t.items():
        if k not in _TRACE_SKIP and v is not None:
            t[k] = scrub(v)
    for p in t.get("problems") or ():
        scrub_problem(p)
    if t.get("pricing"):
        t["pricing"] = scrub(t["pricing"])


def mask_document(doc: dict) -> dict:
    """Mask every string the document took from a trace, in place; returns the document.

    Masking again changes nothing, so a section may be masked twice; the builder masks each of
    its messages and tools once, as they are new, and hands the rest here."""
    for m in doc.get("messages") or ():
        mask_message(m)
    for t in doc.get("tools") or ():
        mask_tool(t)
    for r in doc.get("requests") or ():
        mask_request(r)
    for t in doc.get("traces") or ():
        mask_trace(t)
    for entry in doc.get("inputs") or ():
        for p in entry.get("problems") or ():
            scrub_problem(p)
        if isinstance(entry.get("note"), str):
            entry["note"] = scrub_text(entry["note"])
    if doc.get("groups"):
        doc["groups"] = [{k: (v if k == "sides" else scrub(v)) for k, v in g.items()} for g in doc["groups"]]
    return doc
