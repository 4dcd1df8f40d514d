"""Cost comes from genai-prices; our per-request shortcut must agree with its calculation."""
from __future__ import annotations

import random

import pytest
from genai_prices import Usage, calc_price

from parsers.cook import pricing

MODELS = [("claude-sonnet-4-20250514", "anthropic"), ("claude-3-5-haiku-20241022", "anthropic"),
          ("gpt-4.1", "openai"), ("gpt-4o-mini", "openai"), ("gemini-2.5-flash", "google"),
          ("gemini-2.5-pro", "google")]  # the last has tiered prices


@pytest.mark.parametrize("model,provider", MODELS)
def test_price_equals_the_package_calculation(model, provider):
    rng = random.Random(model)
    for _ in range(25):
        u = {"input": rng.randint(0, 300_000), "output": rng.randint(0, 20_000),
             "cache_read": rng.choice([0, rng.randint(0, 500_000)]), "reasoning": 0,
             "cache_write": rng.choice([0, rng.randint(0, 50_000)]) if provider == "anthropic" else 0}
        ours, info = pricing.price(model, provider, u, 1_760_000_000_000)
        expected = calc_price(Usage(input_tokens=u["input"] + u["cache_read"] + u["cache_write"],
                                    output_tokens=u["output"], cache_read_tokens=u["cache_read"] or None,
                                    cache_write_tokens=u["cache_write"] or None),
                              model, provider_id=provider, genai_request_timestamp=pricing._when_day(1_760_000_000_000))
        assert ours == pytest.approx(float(expected.total_price), rel=1e-9, abs=1e-12)
        assert info["source"].startswith("genai-prices") and info["input_mtok"] > 0


def test_tiered_prices_show_their_base_rate():
    _, info = pricing.price("gemini-2.5-pro", "google", {"input": 1, "output": 1, "cache_read": 0,
                                                          "cache_write": 0, "reasoning": 0})
    assert info["tiered"] is True and info["input_mtok"] == 1.25


def test_unknown_model_has_no_price():
    assert pricing.price("my-local-llm", "openai", {"input": 1, "output": 1, "cache_read": 0,
                                                     "cache_write": 0, "reasoning": 0}) == (None, None)
