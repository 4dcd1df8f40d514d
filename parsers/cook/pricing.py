"""Cost of a request from the genai-prices package (a maintained price list).

A model the package does not know gets no cost (None) and is counted as unpriced; we never
guess a price. Cache tokens are billed at the provider's cache rates by the package.
"""
from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=512)
def _known(model: str, provider: str | None) -> bool:
    try:
        _calc(model, provider, 1, 1, 0, 0)
        return True
    except LookupError:
        return False


def _calc(model, provider, inp, out, cr, cw, when=None):
    # genai-prices counts cache reads and writes inside input_tokens.
    usage = Usage(input_tokens=inp + cr + cw, output_tokens=out,
                  cache_read_tokens=cr or None, cache_write_tokens=cw or None)
    pid = PROVIDER_IDS.get(provider or "")
    try:
        return calc_price(usage, model, provider_id=pid, genai_request_timestamp=when)
    except LookupError:
        if pid:  # proxies route models of one provider through another's API shape
            return calc_price(usage, model, genai_request_timestamp=when)
        raise


def price(model: str | None, provider: str | None, usage: dict | None,
          timestamp_ms: int | None = None) -> tuple[float | None, dict | None]:
    """(cost in USD, how it was priced) or (None, None) when the model is unknown.

    Prices are taken as they stood at the request's time when it is known, so cooking the
    same input twice gives the same figures."""
    if not model or usage is None or calc_price is None or not _known(model, provider):
        return None, None
    when = _when(timestamp_ms)
    calc = _calc(model, provider, usage["input"], usage["output"], usage["cache_read"], usage["cache_write"], when)
    mp = calc.model_price
    info = {"source": source_name(), "provider": calc.provider.id, "model": calc.model.id,
            "input_mtok": _num(getattr(mp, "input_mtok", None)),
            "output_mtok": _num(getattr(mp, "output_mtok", None)),
            "cache_read_mtok": _num(getattr(mp, "cache_read_mtok", None)),
            "cache_write_mtok": _num(getattr(mp, "cache_write_mtok", None))}
    return float(calc.total_price), info


def _when(ms):
    if ms is None:
        return None
    from datetime import datetime, timezone
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _num(v):
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None  # tiered prices: the calculation used the right tier; we show none
