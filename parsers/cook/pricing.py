"""Cost of a request from the genai-prices package (a maintained price list).

A model the package does not know gets no cost (None) and is counted as unpriced; we never
guess a price. Cache tokens are billed at the provider's cache rates by the package.
"""
from __future__ import annotations

import functools
from datetime import datetime, timezone
from importlib import metadata

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
            return None
    mp = calc.model_price
    info = {"source": source_name(), "provider": calc.provider.id, "model": calc.model.id,
            "tiered": _is_tiered(mp),
            "input_mtok": _num(getattr(mp, "input_mtok", None)),
            "output_mtok": _num(getattr(mp, "output_mtok", None)),
            "cache_read_mtok": _num(getattr(mp, "cache_read_mtok", None)),
            "cache_write_mtok": _num(getattr(mp, "cache_write_mtok", None))}
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


def _affine_rates(mp) -> tuple[float, float, float, float, float]:
    """(fixed, per input, per output, per cache read, per cache write) in USD per token.

    Without tiers a price is affine in the token counts, so the package's own calculation
    on a few probe usages gives every rate; a request is then priced by a dot product
    instead of a full calculation each time."""
    def total(inp=0, out=0, cr=0, cw=0) -> float:
        return float(mp.calc_price(_usage(inp, out, cr, cw))["total_price"])

    m = 1_000_000
    fixed = total()
    return (fixed, (total(inp=m) - fixed) / m, (total(out=m) - fixed) / m,
            (total(cr=m) - fixed) / m, (total(cw=m) - fixed) / m)


def _usage(inp: int, out: int, cr: int, cw: int):
    # genai-prices counts cache reads and writes inside input_tokens.
    return Usage(input_tokens=inp + cr + cw, output_tokens=out,
                 cache_read_tokens=cr or None, cache_write_tokens=cw or None)


def price(model: str | None, provider: str | None, usage: dict | None,
          timestamp_ms: int | None = None) -> tuple[float | None, dict | None]:
    """(cost in USD, how it was priced) or (None, None) when the model is unknown.

    Prices are those in force on the request's day when its time is known, so cooking the
    same input twice gives the same figures. Cache reads and writes are billed at the
    provider's cache rates (genai-prices counts them inside input_tokens)."""
    if not model or usage is None or calc_price is None:
        return None, None
    hit = _model_price(model, provider, _day_of(timestamp_ms))
    if hit is None:
        return None, None
    mp, info, rates = hit
    inp, out, cr, cw = usage["input"], usage["output"], usage["cache_read"], usage["cache_write"]
    if rates is None:  # tiered prices: the package prices each request itself
        cost = float(mp.calc_price(_usage(inp, out, cr, cw))["total_price"])
    else:
        fixed, r_in, r_out, r_cr, r_cw = rates
        cost = round(fixed + inp * r_in + out * r_out + cr * r_cr + cw * r_cw, 12)
    return cost, dict(info)


def _num(v):
    v = getattr(v, "base", v)  # tiered prices: the base tier (the calculation uses every tier)
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None
