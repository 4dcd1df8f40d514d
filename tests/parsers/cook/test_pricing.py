"""Cost comes from genai-prices; our per-request shortcut must agree with its calculation.

`package_price`, `package_rates` and `raw_log_costs` are the expected figures other tests
use: the package's own calculation from usage read straight from the raw input."""
from __future__ import annotations

import json
import random
from datetime import datetime
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price, extract_usage

from parsers.cook import pricing
from parsers.providers import usage as usage_mod


def package_price(model: str, provider: str | None, *, input: int = 0, output: int = 0, cache_read: int = 0,
                  cache_write: int = 0, cache_write_1h: int = 0, when: datetime | None = None) -> float | None:
    """genai-prices' total for one call, or None when it has no price for the model.

    `input` leaves cache tokens out, as providers other than OpenAI and Gemini report it; the
    package counts cache reads and writes inside its input_tokens, and 1-hour cache writes
    inside its cache_write_tokens (`cache_write` is every write, `cache_write_1h` the 1-hour
    part of them)."""
    try:
        calc = calc_price(Usage(input_tokens=input + cache_read + cache_write, output_tokens=output,
                                cache_read_tokens=cache_read or None, cache_write_tokens=cache_write or None,
                                cache_write_1h_tokens=cache_write_1h or None),
                          model, provider_id=provider, genai_request_timestamp=when)
    except LookupError:
        return None
    return float(calc.total_price)


def package_rates(model: str, provider: str | None, when: datetime | None = None) -> dict:
    """The package's USD per million tokens for a model (of tiered prices, the first tier)."""
    mp = calc_price(Usage(input_tokens=1, output_tokens=1), model, provider_id=provider,
                    genai_request_timestamp=when).model_price

    def num(v):
        v = getattr(v, "base", v)
        return None if v is None else float(v)

    return {k: num(getattr(mp, k, None)) for k in ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")}


def raw_log_calls(path: Path) -> dict[str, dict]:
    """Each record of an API request log by its id: model, provider, time and usage, read
    straight from the raw JSON as each API documents its usage. OpenAI's prompt_tokens include
    the cached tokens; Anthropic's input_tokens leave cache reads and writes out (a stream
    gives them in message_start, the final output count in message_delta); Gemini's
    promptTokenCount includes cached content, its toolUsePromptTokenCount is input, and
    thinking is billed as output. The model is
    the one the request asked for, else the one the response names."""
    out = {}
    for line in Path(path).read_text("utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        req = rec.get("request") if isinstance(rec.get("request"), dict) else {}
        resp = rec.get("response") if isinstance(rec.get("response"), dict) else {}
        stamp = rec.get("timestamp")
        call = {"model": req.get("model") or resp.get("model") or resp.get("modelVersion"), "provider": None,
                "usage": None, "when": datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None}
        u = resp.get("usage") or {}
        if "usageMetadata" in resp:
            g = resp["usageMetadata"]
            cached = g.get("cachedContentTokenCount", 0)
            call["provider"] = "google"
            # promptTokenCount includes the cached content; toolUsePromptTokenCount (results of
            # built-in tools read as prompt) is billed as input: totalTokenCount is prompt +
            # candidates + tool-use prompt + thoughts.
            call["usage"] = {"input": g.get("promptTokenCount", 0) - cached + g.get("toolUsePromptTokenCount", 0),
                             "cache_read": cached,
                             "output": g.get("candidatesTokenCount", 0) + g.get("thoughtsTokenCount", 0)}
        elif "sse_lines" in resp:
            u = {}
            for sse in resp["sse_lines"]:
                event = json.loads(sse[5:]) if sse.startswith("data:") else {}
                if event.get("type") == "message_start":
                    u.update(event["message"].get("usage") or {})
                elif event.get("type") == "message_delta":
                    u.update(event.get("usage") or {})
            call["provider"] = "anthropic"
        elif "prompt_tokens" in u:
            cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            call["provider"] = "openai"
            call["usage"] = {"input": u["prompt_tokens"] - cached, "cache_read": cached,
                             "output": u.get("completion_tokens", 0)}
        elif "input_tokens" in u:
            call["provider"] = "anthropic"
        if call["provider"] == "anthropic" and u:
            call["usage"] = {"input": u.get("input_tokens", 0), "output": u.get("output_tokens", 0),
                             "cache_read": u.get("cache_read_input_tokens") or 0,
                             "cache_write": u.get("cache_creation_input_tokens") or 0,
                             "cache_write_1h": (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0}
        out[rec["id"]] = call
    return out


def raw_log_costs(path: Path) -> dict[str, float | None]:
    """The package's price of every record of a request log, from its raw usage (None: no
    usage, or a model the package does not know)."""
    return {rid: package_price(c["model"], c["provider"], **c["usage"], when=c["when"])
            if c["usage"] is not None and c["model"] else None for rid, c in raw_log_calls(path).items()}

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
        u["cache_write_1h"] = rng.choice([0, rng.randint(0, u["cache_write"])])
        ours, info = pricing.price(model, provider, u, 1_760_000_000_000)
        expected = calc_price(Usage(input_tokens=u["input"] + u["cache_read"] + u["cache_write"],
                                    output_tokens=u["output"], cache_read_tokens=u["cache_read"] or None,
                                    cache_write_tokens=u["cache_write"] or None,
                                    cache_write_1h_tokens=u["cache_write_1h"] or None),
                              model, provider_id=provider, genai_request_timestamp=pricing._when_day(1_760_000_000_000))
        assert ours == pytest.approx(float(expected.total_price), rel=1e-9, abs=1e-12)
        assert info["source"].startswith("genai-prices") and info["input_mtok"] > 0


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-6", "claude-haiku-4-5", "claude-3-haiku-20240307"])
def test_anthropic_usage_costs_what_the_package_makes_of_the_raw_response(model):
    """A raw Anthropic usage with cache writes of both lifetimes: normalised and priced here, it
    costs what genai-prices' own reading of the response (extract_usage) costs."""
    rng = random.Random(model)
    for _ in range(25):
        five, hour = rng.choice([0, rng.randint(1, 60_000)]), rng.choice([0, rng.randint(1, 60_000)])
        raw = {"input_tokens": rng.randint(0, 50_000), "output_tokens": rng.randint(0, 8_000),
               "cache_read_input_tokens": rng.choice([0, rng.randint(0, 80_000)]),
               "cache_creation_input_tokens": five + hour,
               "cache_creation": {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": hour}}
        ours, _ = pricing.price(model, "anthropic", usage_mod.from_anthropic(raw), 1_760_000_000_000)
        extracted = extract_usage({"model": model, "usage": raw}, provider_id="anthropic")
        expected = calc_price(extracted.usage, model, provider_id="anthropic",
                              genai_request_timestamp=pricing._when_day(1_760_000_000_000))
        assert ours == pytest.approx(float(expected.total_price), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("model,rates", [("claude-sonnet-4-5", (3, 3.75, 6)),  # tiered prices
                                         ("claude-haiku-4-5", (1, 1.25, 2))])
def test_one_hour_writes_at_their_own_rate(model, rates):
    """Anthropic's prices (USD per million tokens: input, 5-minute cache write, 1-hour cache
    write): of 6,000 cache writes, the 4,000 1-hour ones at the 1-hour rate, the other 2,000 at
    the 5-minute rate."""
    inp, five_min, one_hour = rates
    u = {"input": 1000, "output": 0, "cache_read": 0, "cache_write": 6000, "cache_write_1h": 4000, "reasoning": 0}
    cost, info = pricing.price(model, "anthropic", u, 1_760_000_000_000)
    assert cost == pytest.approx((1000 * inp + 2000 * five_min + 4000 * one_hour) / 1e6)
    assert (info["cache_write_mtok"], info["cache_write_1h_mtok"]) == (five_min, one_hour)


def test_tiered_prices_show_their_base_rate():
    _, info = pricing.price("gemini-2.5-pro", "google", {"input": 1, "output": 1, "cache_read": 0,
                                                          "cache_write": 0, "cache_write_1h": 0, "reasoning": 0})
    assert info["tiered"] is True and info["input_mtok"] == package_rates("gemini-2.5-pro", "google")["input_mtok"]


def test_unknown_model_has_no_price():
    assert pricing.price("my-local-llm", "openai", {"input": 1, "output": 1, "cache_read": 0,
                                                     "cache_write": 0, "cache_write_1h": 0,
                                                     "reasoning": 0}) == (None, None)


@pytest.mark.parametrize("name,model,provider", [
    ("openai/gpt-4o-mini", "gpt-4o-mini", "openai"),                      # LiteLLM, OpenHands, Inspect
    ("openrouter/anthropic/claude-3.5-sonnet", "anthropic/claude-3.5-sonnet", "openrouter"),
    ("litellm_proxy/claude-sonnet-4-20250514", "claude-sonnet-4-20250514", None),  # a router's prefix
])
def test_a_provider_prefixed_model_name_is_priced_as_the_model(name, model, provider):
    usage = {"input": 1200, "output": 300, "cache_read": 0, "cache_write": 0, "cache_write_1h": 0, "reasoning": 0}
    expected = float(calc_price(Usage(input_tokens=1200, output_tokens=300), model,
                                provider_id=provider).total_price)
    cost, info = pricing.price(name, None, usage, None)
    assert cost == pytest.approx(expected) and expected > 0


def test_an_unknown_prefixed_name_stays_unpriced():
    usage = {"input": 10, "output": 1, "cache_read": 0, "cache_write": 0, "cache_write_1h": 0, "reasoning": 0}
    assert pricing.price("nosuch/model-x", None, usage, None) == (None, None)


# -- prices kept between processes ---------------------------------------------------------------
KEPT_USAGES = [{"input": 1200, "output": 300, "cache_read": 5000, "cache_write": 900, "cache_write_1h": 400,
                "reasoning": 0},
               {"input": 7, "output": 70_000, "cache_read": 0, "cache_write": 0, "cache_write_1h": 0, "reasoning": 0}]
DAY_MS = 1_760_000_000_000
PRICE_IN_A_PROCESS = f"""
import json, sys
from parsers.cook import pricing
out = [pricing.price(m, p, u, t) for m, p, t in json.loads(sys.argv[1]) for u in {KEPT_USAGES!r}]
print(json.dumps({{"prices": out, "package_imported": "genai_prices" in sys.modules}}))
"""


def price_in_a_process(cache: Path, calls: list) -> dict:
    """Price every usage of KEPT_USAGES for each (model, provider, time) in a new interpreter
    whose kept prices are in `cache`."""
    import os
    import subprocess
    import sys

    env = {**os.environ, pricing.CACHE_ENV: str(cache)}
    env.pop(pricing.PRICES_ENV, None)
    done = subprocess.run([sys.executable, "-c", PRICE_IN_A_PROCESS, json.dumps(calls)], env=env, check=True,
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[3])
    return json.loads(done.stdout)


def expected_costs(calls: list) -> list:
    return [package_price(m, p, **{k: u[k] for k in ("input", "output", "cache_read", "cache_write",
                                                          "cache_write_1h")}, when=pricing._when_day(t))
            for m, p, t in calls for u in KEPT_USAGES]


def test_prices_are_kept_between_processes_and_cost_what_the_package_says(tmp_path):
    """The first process asks the package and keeps what it gave; the next prices the same
    models, on that day and on others the kept price holds for (a model with one price: every
    day, today included), without importing it, to the package's own figures. A model the
    package does not know stays unpriced from the kept file too."""
    calls = [["claude-sonnet-4-20250514", "anthropic", DAY_MS], ["gpt-4o-mini", "openai", DAY_MS],
             ["my-local-llm", "openai", DAY_MS]]
    expected = expected_costs(calls)
    assert expected[-1] is None and all(c > 0 for c in expected[:-2])
    first = price_in_a_process(tmp_path, calls)
    second = price_in_a_process(tmp_path, calls)
    assert first["package_imported"] and not second["package_imported"]
    for run in (first, second):
        costs = [cost for cost, _ in run["prices"]]
        assert costs[-2:] == [None, None]
        assert costs[:-2] == pytest.approx(expected[:-2], rel=1e-9, abs=1e-12)
    assert second["prices"] == first["prices"]  # the descriptions too
    later = [["claude-sonnet-4-20250514", "anthropic", DAY_MS + 400 * 86_400_000],
             ["gpt-4o-mini", "openai", None], ["my-local-llm", "openai", DAY_MS - 86_400_000]]
    run = price_in_a_process(tmp_path, later)
    assert not run["package_imported"]
    expected = expected_costs(later)
    assert [c for c, _ in run["prices"]][:-2] == pytest.approx(expected[:-2], rel=1e-9, abs=1e-12)
    assert [c for c, _ in run["prices"]][-2:] == [None, None] == expected[-2:]


def conditional_model(kind: str):
    """(provider, model, start day or None) of a model in the package's data with two affine
    prices, the second from a start date (kind "start") or for a time of day (kind "time")."""
    from genai_prices import data

    for prov in data.providers:
        for m in prov.models:
            if not (isinstance(m.prices, list) and len(m.prices) == 2 and m.prices[0].constraint is None):
                continue
            c = m.prices[1].constraint
            if pricing._is_tiered(m.prices[0].prices) or pricing._is_tiered(m.prices[1].prices):
                continue
            if m.prices[0].prices.input_mtok == m.prices[1].prices.input_mtok:
                continue
            if kind == "start" and hasattr(c, "start_date"):
                return prov.id, m.id, (c.start_date - pricing.EPOCH).days
            if kind == "time" and hasattr(c, "start_time"):
                return prov.id, m.id, None
    pytest.skip(f"genai-prices has no model with a {kind}-conditional price")


def test_a_kept_price_holds_only_for_the_days_the_package_gives_it(tmp_path):
    """A model whose price changes on a start date: the price kept from a day before the
    change does not price the day of the change (the package is asked, and its new price
    kept); then both periods are priced without the package, each at its own price."""
    provider, model, start = conditional_model("start")
    name = f"{provider}/{model}"  # as routers name it: the prefix is the provider

    def calls(*days):
        return [[name, None, d * 86_400_000] for d in days]

    def package(*days):
        return [package_price(model, provider, **{k: u[k] for k in ("input", "output", "cache_read", "cache_write",
                                                                   "cache_write_1h")}, when=pricing._day_start(d))
                for d in days for u in KEPT_USAGES]

    before, on = price_in_a_process(tmp_path, calls(start - 1)), price_in_a_process(tmp_path, calls(start))
    assert before["package_imported"] and on["package_imported"]
    assert [c for c, _ in before["prices"]] == pytest.approx(package(start - 1), rel=1e-9)
    assert [c for c, _ in on["prices"]] == pytest.approx(package(start), rel=1e-9)
    assert package(start - 1) != pytest.approx(package(start), rel=1e-6)
    days = (start - 400, start - 1, start, start + 90)
    run = price_in_a_process(tmp_path, calls(*days))
    assert not run["package_imported"]
    assert [c for c, _ in run["prices"]] == pytest.approx(package(*days), rel=1e-9)


@pytest.mark.parametrize("kind", ["time", "tiered"])
def test_off_peak_and_tiered_prices_are_not_kept(tmp_path, kind):
    """A price that depends on the time of day, or on the tokens (tiers): the package prices
    every process's requests."""
    if kind == "time":
        provider, model, _ = conditional_model("time")
        name = f"{provider}/{model}"
    else:
        name, provider = "gemini-2.5-pro", "google"
    runs = [price_in_a_process(tmp_path, [[name, None, DAY_MS]]) for _ in range(2)]
    assert all(r["package_imported"] for r in runs)
    assert runs[0]["prices"] == runs[1]["prices"] and runs[0]["prices"][0][0] > 0


def test_a_damaged_or_unwritable_kept_file_only_costs_the_package_again(tmp_path):
    calls = [["claude-sonnet-4-20250514", "anthropic", DAY_MS]]
    expected = expected_costs(calls)
    price_in_a_process(tmp_path / "good", calls)
    [kept] = (tmp_path / "good").iterdir()
    key = json.loads(kept.read_text("utf-8").splitlines()[0])[0]
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / kept.name).write_bytes(b'\x00not json\n[1, 2]\n["only a key"]\n'
                                      + json.dumps([key, [None, None, {"x": 1}, [0.0, "a lot"]]]).encode() + b"\n"
                                      + json.dumps([key, [None, None, {"x": 1}, [0.0] * 6]]).encode() + b"\n"
                                      + json.dumps([key, [None, None, {}, [0.5] * 5]]).encode())  # one rate short, no newline
    run = price_in_a_process(damaged, calls)
    assert run["package_imported"]
    assert [c for c, _ in run["prices"]] == pytest.approx(expected, rel=1e-9)
    assert price_in_a_process(damaged, calls)["package_imported"] is False  # kept anew after the damage
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    run = price_in_a_process(blocked, calls)
    assert [c for c, _ in run["prices"]] == pytest.approx(expected, rel=1e-9)
