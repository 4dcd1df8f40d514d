"""Cost of a request from the genai-prices package (a maintained price list), or from a
prices file the user gives (`traceview cook|serve --prices FILE`).

A model neither knows gets no cost (None) and is counted as unpriced; we never guess a price.
Cache tokens are billed at the provider's cache rates by the package; of the cache writes,
the 1-hour ones (`cache_write_1h`) at the 1-hour write rate, the rest at the cache write rate.

A prices file is TOML (or JSON, by its `.json` suffix): one table per model, prices in USD per
million tokens; `input` and `output` are required, `cache_read` and `cache_write` default to
the input price, `cache_write_1h` (1-hour cache writes) to the cache write price:

    [models."ark-code-latest"]
    input = 0.8
    output = 2.0
    cache_read = 0.16

Its path is read from the environment variable TRACEVIEW_PRICES, so every process that cooks
(the app, its indexing workers, `traceview cook`) uses the same file. A model the file names
is priced by the file, even when the package knows it; the request's price source names the
file.

Importing the package takes a fifth of a second (it builds its pydantic models and its HTTP
client), more than cooking a small file. So the prices it gave are kept between processes in
the user's cache folder (`prices-<package version>-v1.jsonl` in TRACEVIEW_CACHE, by default
the platform's cache folder for traceview), with the days over which each holds: a model
priced before is priced from there, without the package, on any day its kept price covers.
Tiered and off-peak prices are not kept (the package prices those requests); a damaged line
of the file is skipped, and a file that cannot be written keeps nothing.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import time
import tomllib
from datetime import date, datetime, timezone
from importlib import metadata
from pathlib import Path

import orjson

from parsers.cook.totals import is_unpriced


@functools.cache
def _package():
    """genai-prices' (Usage, calc_price), imported when a price is first worked out; None
    without the package (a hard dependency, kept importable for clear errors)."""
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # pragma: no cover
        return None
    return Usage, calc_price


@functools.lru_cache(maxsize=1)
def source_name() -> str:
    try:
        return f"genai-prices {metadata.version('genai-prices')}"
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "genai-prices"


PRICES_ENV = "TRACEVIEW_PRICES"
# The rates a request is billed at, as a prices file names them: `cache_write` for the cache
# writes that are not 1-hour writes, `cache_write_1h` for those (reasoning is billed inside output).
PRICE_KEYS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")


class PricesError(ValueError):
    """A prices file that cannot be used; the message names the file and the entry."""


def read_prices_file(path) -> dict[str, dict]:
    """Model -> {"input", "output", "cache_read", "cache_write", "cache_write_1h"} in USD per
    million tokens."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PricesError(f"prices file {path}: cannot be read ({e.strerror or e})") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as e:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise PricesError(f"prices file {path}: not valid {kind}: {e}") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict) or not models:
        raise PricesError(f'prices file {path}: expected a "models" table with one entry per model, '
                          'e.g. [models."my-model"] input = 0.5 output = 2.0')
    out = {}
    for model, entry in models.items():
        where = f'prices file {path}: models."{model}"'
        if not isinstance(entry, dict):
            raise PricesError(f"{where}: expected a table of prices, found {type(entry).__name__}")
        unknown = sorted(set(entry) - set(PRICE_KEYS))
        if unknown:
            raise PricesError(f"{where}: unknown key {', '.join(unknown)} (expected {', '.join(PRICE_KEYS)})")
        for key in ("input", "output"):
            if key not in entry:
                raise PricesError(f"{where}: {key} is missing (USD per million tokens)")
        for key, v in entry.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise PricesError(f"{where}.{key}: expected a number of USD per million tokens (0 or more), "
                                  f"found {v!r}")
        cache_write = float(entry.get("cache_write", entry["input"]))
        out[str(model)] = {"input": float(entry["input"]), "output": float(entry["output"]),
                           "cache_read": float(entry.get("cache_read", entry["input"])),
                           "cache_write": cache_write,
                           "cache_write_1h": float(entry.get("cache_write_1h", cache_write))}
    return out


def prices_file() -> str | None:
    """The prices file in force (TRACEVIEW_PRICES), or None."""
    return os.environ.get(PRICES_ENV) or None


def identity() -> str:
    """Which prices a cook uses: the package's version, and the prices file in force with the
    SHA-256 of its bytes (a cook made with other prices is another cook)."""
    path = prices_file()
    if not path:
        return source_name()
    try:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        digest = "unreadable"
    return f"{source_name()}; prices file {digest}"


@functools.lru_cache(maxsize=8)
def _file_prices(path: str, mtime_ns: int) -> dict[str, dict]:
    return read_prices_file(path)


def _file_price(model: str) -> dict | None:
    path = prices_file()
    if not path:
        return None
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        mtime = 0  # reading it says why
    p = _file_prices(path, mtime).get(model)
    if p is None:
        return None
    return {"source": f"prices file {path}", "provider": None, "model": model, "tiered": False,
            **{f"{k}_mtok": p[k] for k in PRICE_KEYS}}


PROVIDER_IDS = {"anthropic": "anthropic", "openai": "openai", "google": "google"}


CACHE_ENV = "TRACEVIEW_CACHE"
KEPT_VERSION = 1  # of what a kept price holds; another version is another file


def cache_dir() -> Path:
    """Where traceview keeps what it can work out again (TRACEVIEW_CACHE, else the platform's
    cache folder for traceview)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    import platformdirs

    return Path(platformdirs.user_cache_dir("traceview", appauthor=False))


class _Kept:
    """The package's prices of the models met before, on disk, one JSON line each:
    `[model and provider, [first day, end day, description, affine rates]]` for the days
    (counted from 1970-01-01; null: open-ended) over which the package gives a model that
    price, or `[model and provider, null]` for a model it does not know. Lines are only ever
    appended (one write each, so processes that cook at once add theirs whole); a line that
    does not read is skipped."""

    def __init__(self):
        self.table: dict[str, list | None] | None = None
        self.cut = False  # the file ends inside a line (a write cut short): the next starts anew

    @property
    def path(self) -> Path:
        name = "".join(c if c.isalnum() or c in ".-" else "_" for c in source_name())
        return cache_dir() / f"prices-{name}-v{KEPT_VERSION}.jsonl"

    def _read(self) -> dict:
        if self.table is None:
            self.table = {}
            try:
                data = self.path.read_bytes()
            except OSError:
                data = b""
            self.cut = bool(data) and not data.endswith(b"\n")
            for line in data.splitlines():
                try:
                    key, value = orjson.loads(line)
                except (orjson.JSONDecodeError, TypeError, ValueError):
                    continue
                if isinstance(key, str) and value is None:
                    self.table[key] = None
                elif isinstance(key, str) and _is_kept_price(value):
                    self.table[key] = (self.table.get(key) or []) + [value]
        return self.table

    def get(self, key: str, day: int):
        """(description, rates) of the model on `day`, None for a model the package does not
        know, or KeyError when not kept."""
        spans = self._read()[key]
        if spans is None:
            return None
        for value in spans:
            lo, hi, info, rates = value
            if (lo is None or lo <= day) and (hi is None or day < hi):
                return info, tuple(rates)
        raise KeyError(key)

    def put(self, key: str, value) -> None:
        table = self._read()
        table[key] = None if value is None else (table.get(key) or []) + [value]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as f:
                f.write(b"\n" * self.cut + orjson.dumps([key, value]) + b"\n")
            self.cut = False
        except OSError:
            pass  # not kept: worked out again next time


# What a price's description (the `price` of a cooked request) holds.
DESCRIPTION_KEYS = frozenset(("source", "provider", "model", "tiered", *(f"{k}_mtok" for k in PRICE_KEYS)))


def _is_kept_price(value) -> bool:
    """Whether a kept line's value is a price for some days: [first day, end day,
    description, rates]."""
    if not (isinstance(value, list) and len(value) == 4):
        return False
    lo, hi, info, rates = value
    return (all(d is None or (isinstance(d, int) and not isinstance(d, bool)) for d in (lo, hi))
            and isinstance(info, dict) and info.keys() == DESCRIPTION_KEYS
            and isinstance(rates, list) and len(rates) == len(PRICE_KEYS) + 1
            and all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in rates))


_kept = _Kept()


@functools.lru_cache(maxsize=4096)
def _model_price(model: str, provider: str | None, day: int | None):
    """The package's price of a model on a day (None: today): (ModelPrice or None,
    description, affine rates or None for tiered prices), or None when the model is unknown.

    Looking a model up is most of the package's work, so it is done once per model, provider
    and day; each request is then priced by its rates (or, tiered, by that ModelPrice).
    Affine prices are kept on disk for the days they hold (`_Kept`), and so are the models
    the package does not know: a later process prices them without the package."""
    key = f"{model}\t{provider or ''}"
    on = day if day is not None else _day_of(time.time() * 1000)
    try:
        kept = _kept.get(key, on)
    except KeyError:
        pass
    else:
        return None if kept is None else (None, *kept)
    hit = _package_price(model, provider, day, on)
    if hit is None:
        if _package() is not None:  # the package does not know it (rather than is missing)
            _kept.put(key, None)
        return None
    mp, info, rates, span = hit
    if rates is not None and span is not None:
        _kept.put(key, [*span, info, list(rates)])
    return mp, info, rates


def _package_price(model: str, provider: str | None, day: int | None, on: int):
    """`_model_price` worked out by the package, with the days [from, to) over which the
    price holds (None when it can change within a day), or None for a model it does not know."""
    if _package() is None:
        return None
    Usage, calc_price = _package()
    when = _day_start(day)
    probe = Usage(input_tokens=1, output_tokens=1)
    pid = PROVIDER_IDS.get(provider or "")
    try:
        calc = calc_price(probe, model, provider_id=pid, genai_request_timestamp=when) if pid else None
    except LookupError:
        calc = None  # proxies route models of one provider through another's API shape
    if calc is None:
        try:
            calc = calc_price(probe, model, genai_request_timestamp=when)
        except LookupError:
            calc = None
    if calc is None and "/" in model:
        # "provider/model" as routers and SDKs name models (LiteLLM's "openai/gpt-4o-mini",
        # OpenRouter's "openrouter/anthropic/claude-3.5-sonnet"): the prefix as the provider,
        # else the rest of the name on its own.
        prefix, rest = model.split("/", 1)
        try:
            calc = calc_price(probe, rest, provider_id=prefix, genai_request_timestamp=when)
        except LookupError:
            return _package_price(rest, provider, day, on) if rest else None
    if calc is None:
        return None
    mp = calc.model_price
    info = {"source": source_name(), "provider": calc.provider.id, "model": calc.model.id,
            "tiered": _is_tiered(mp),
            "input_mtok": _num(getattr(mp, "input_mtok", None)),
            "output_mtok": _num(getattr(mp, "output_mtok", None)),
            "cache_read_mtok": _num(getattr(mp, "cache_read_mtok", None)),
            "cache_write_mtok": _num(getattr(mp, "cache_write_mtok", None)),
            "cache_write_1h_mtok": _num(getattr(mp, "cache_write_1h_mtok", None))}
    return mp, info, (None if info["tiered"] else _affine_rates(mp)), _days_held(calc.model, on)


EPOCH = date(1970, 1, 1)


def _days_held(model_info, day: int) -> tuple[int | None, int | None] | None:
    """The days [from, to) (None: open-ended) over which the package gives the model the price
    it has on `day`; None when that price may change within a day (an off-peak price).

    The package takes a model's single price, or the last of its conditional prices whose
    start date has come (a price with no condition always has), else the first."""
    prices = getattr(model_info, "prices", None)
    if not isinstance(prices, list):
        return None, None  # one price for every day
    starts: list[int | None] = []
    for conditional in prices:
        c = getattr(conditional, "constraint", None)
        if c is None:
            starts.append(None)
        elif type(c).__name__ == "StartDateConstraint" and isinstance(getattr(c, "start_date", None), date):
            starts.append((c.start_date - EPOCH).days)
        else:
            return None
    active = [i for i, s in enumerate(starts) if s is None or s <= day]
    chosen = active[-1] if active else -1  # -1: none has started, the first is taken
    lo = starts[chosen] if active else None
    later = [s for s in starts[chosen + 1:] if s is not None and s > day]
    return lo, (min(later) if later else None)


def _is_tiered(mp) -> bool:
    fields = getattr(mp, "__dataclass_fields__", None) or vars(mp)
    return any(hasattr(getattr(mp, name, None), "tiers") for name in fields)


def _day_of(timestamp_ms: int | None) -> int | None:
    return int(timestamp_ms // 86_400_000) if timestamp_ms is not None else None


def _day_start(day: int | None):
    return datetime.fromtimestamp(day * 86400, tz=timezone.utc) if day is not None else None


def _when_day(timestamp_ms: int | None):
    """The moment prices are taken at for a request at this time (the start of its UTC day)."""
    return _day_start(_day_of(timestamp_ms))


def _affine_rates(mp) -> tuple[float, ...]:
    """(fixed, then the USD per token of each of PRICE_KEYS in turn).

    Without tiers a price is affine in the token counts, so the package's own calculation
    on a few probe usages gives every rate; a request is then priced by a dot product
    instead of a full calculation each time."""
    def total(billed) -> float:
        return float(mp.calc_price(_usage(billed))["total_price"])

    m, none = 1_000_000, dict.fromkeys(PRICE_KEYS, 0)
    fixed = total(none)
    return (fixed, *((total({**none, k: m}) - fixed) / m for k in PRICE_KEYS))


def _billed(usage: dict) -> dict:
    """The tokens billed at each rate of PRICE_KEYS. Normalised `cache_write` counts every cache
    write and `cache_write_1h` the 1-hour part of them; the rest are billed as `cache_write`."""
    writes = usage.get("cache_write", 0)
    one_hour = min(usage.get("cache_write_1h", 0), writes)
    return {"input": usage.get("input", 0), "output": usage.get("output", 0),
            "cache_read": usage.get("cache_read", 0), "cache_write": writes - one_hour, "cache_write_1h": one_hour}


def _usage(billed: dict):
    """genai-prices' Usage of billed tokens. The package counts cache reads and writes inside
    input_tokens, and 1-hour cache writes inside cache_write_tokens."""
    cr, one_hour = billed["cache_read"], billed["cache_write_1h"]
    writes = billed["cache_write"] + one_hour
    Usage = _package()[0]
    return Usage(input_tokens=billed["input"] + cr + writes, output_tokens=billed["output"],
                 cache_read_tokens=cr or None, cache_write_tokens=writes or None,
                 cache_write_1h_tokens=one_hour or None)


def price(model: str | None, provider: str | None, usage: dict | None,
          timestamp_ms: int | None = None) -> tuple[float | None, dict | None]:
    """(cost in USD, how it was priced) or (None, None) when the model is unknown.

    A model the prices file (TRACEVIEW_PRICES) names is priced by it.

    Prices are those in force on the request's day when its time is known, so cooking the
    same input twice gives the same figures. Cache reads and writes are billed at the
    provider's cache rates (genai-prices counts them inside input_tokens)."""
    if not model or usage is None:
        return None, None
    billed = _billed(usage)
    own = _file_price(model)
    if own is not None:
        cost = sum(billed[k] * own[f"{k}_mtok"] for k in PRICE_KEYS) / 1_000_000
        return round(cost, 12), own
    hit = _model_price(model, provider, _day_of(timestamp_ms))
    if hit is None:
        return None, None
    mp, info, rates = hit
    if rates is None:  # tiered prices: the package prices each request itself
        cost = float(mp.calc_price(_usage(billed))["total_price"])
    else:
        cost = round(sum((billed[k] * r for k, r in zip(PRICE_KEYS, rates[1:])), rates[0]), 12)
    return cost, dict(info)


def _num(v):
    v = getattr(v, "base", v)  # tiered prices: the base tier (the calculation uses every tier)
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def summary(requests) -> dict:
    """Which price lists and which model prices gave a trace's costs: {"source" (the lists
    used, or "stated by the trace", or None), "prices" (model -> how it was priced),
    "unpriced_models" (models with usage and no price; a request without usage, such as a
    failed call, has nothing to price and names no model here)}."""
    prices: dict[str, dict] = {}
    unpriced: set[str] = set()
    stated = False
    for r in requests:
        if r.get("price"):
            prices.setdefault(r["model"], r["price"])
        elif r.get("cost_source") == "trace":
            stated = True
        elif r.get("model") and is_unpriced(r):
            unpriced.add(r["model"])
    lists = sorted({p["source"] for p in prices.values() if p.get("source")})
    return {"source": ", ".join(lists) if lists else ("stated by the trace" if stated else None),
            "prices": prices, "unpriced_models": sorted(unpriced)}
