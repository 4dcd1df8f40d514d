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
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import tomllib
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from parsers.cook.totals import is_unpriced

try:
    from genai_prices import Usage, calc_price
except ImportError:  # pragma: no cover - a hard dependency; kept importable for clear errors
    calc_price = None


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


@functools.lru_cache(maxsize=4096)
def _model_price(model: str, provider: str | None, day: int | None):
    """The package's price of a model on a day: (ModelPrice, description, affine rates or None
    for tiered prices), or None when the model is unknown.

    Looking a model up is most of the package's work, so it is done once per model, provider
    and day; each request is then priced by that ModelPrice."""
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
            return _model_price(rest, provider, day) if rest else None
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
    return mp, info, (None if info["tiered"] else _affine_rates(mp))


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
    if calc_price is None:
        return None, None
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
