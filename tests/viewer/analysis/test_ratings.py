"""Ratings from arena votes against hand-checked numbers (FastChat's conventions)."""
from __future__ import annotations

import math

import pytest

from viewer.analysis import ratings as R
from viewer.analysis.ratings import Battle as B


def test_online_elo_by_hand():
    battles = [B("A", "B", "model_a"), B("A", "B", "tie"), B("B", "C", "model_b"), B("C", "A", "tie (bothbad)")]
    # 1. A beats B, both at 1000: E_A = 1/(1 + 10^0) = 0.5; A += 4 (1 - 0.5) = +2 -> A 1002, B 998.
    # 2. A ties B: E_A = 1/(1 + 10^((998 - 1002)/400)) = 1/(1 + 10^-0.01) = 1/1.977237 = 0.505756;
    #    A += 4 (0.5 - 0.505756) = -0.023024 -> 1001.976976; B += 4 (0.5 - 0.494244) -> 998.023024.
    # 3. B (model_a) loses to C: E_B = 1/(1 + 10^((1000 - 998.023024)/400)) = 1/(1 + 10^0.0049424)
    #    = 1/2.011445 = 0.497155; B += 4 (0 - 0.497155) = -1.988621 -> 996.034403;
    #    C += 4 (1 - 0.502845) = +1.988621 -> 1001.988621.
    # 4. C ties A (both bad counts as a tie): E_C = 1/(1 + 10^((1001.976976 - 1001.988621)/400))
    #    = 0.5000168; C += 4 (0.5 - 0.5000168) = -0.0000670 -> 1001.988554; A += 0.0000670 -> 1001.977043.
    elo = R.online_elo(battles)
    assert elo == pytest.approx({"A": 1001.977043, "B": 996.034403, "C": 1001.988554}, abs=1e-5)
    # the order matters (it is an online rating): the same votes the other way round differ
    assert R.online_elo(battles[::-1]) != pytest.approx(elo, abs=1e-3)


def test_online_elo_parameters_and_unknown_winner():
    # K = 32 from 1500: a single win moves each side by K/2
    assert R.online_elo([B("A", "B", "model_b")], k=32, init=1500) == {"A": 1484.0, "B": 1516.0}
    with pytest.raises(ValueError, match="unexpected winner"):
        R.online_elo([B("A", "B", "draw")])


def test_bradley_terry_two_models_closed_form():
    # A beats B 3 times, B beats A once: weights 6 vs 2, so p_A / p_B = 3 and
    # R_A - R_B = 400 log10 3 = 190.848; centred on 1000 -> 1095.424 / 904.576.
    bt = R.bradley_terry([B("A", "B", "model_a")] * 3 + [B("B", "A", "model_a")])
    assert bt == pytest.approx({"A": 1095.4243, "B": 904.5757}, abs=1e-3)
    # A beats B once, two ties (one "both bad"): weights 2 + 2 = 4 vs 2, ratio 2,
    # R_A - R_B = 400 log10 2 = 120.412 -> 1060.206 / 939.794.
    bt = R.bradley_terry([B("A", "B", "model_a"), B("A", "B", "tie"), B("B", "A", "tie (bothbad)")])
    assert bt == pytest.approx({"A": 1060.2060, "B": 939.7940}, abs=1e-3)


def test_bradley_terry_solves_the_likelihood_equations():
    battles = ([B("A", "B", "model_a")] * 5 + [B("A", "B", "model_b")] * 2 + [B("B", "C", "model_a")] * 3
               + [B("C", "B", "model_a")] + [B("A", "C", "tie")] * 2 + [B("C", "A", "model_a")])
    bt = R.bradley_terry(battles)
    assert sum(bt.values()) / 3 == pytest.approx(1000.0)
    w = R.bt_weights(battles)
    # at the maximum, each model's expected weighted wins equal its observed ones
    for m in "ABC":
        observed = sum(x for (a, _), x in w.items() if a == m)
        expected = 0.0
        for o in "ABC":
            n = w.get((m, o), 0) + w.get((o, m), 0)
            if o != m and n:
                expected += n / (1 + 10 ** ((bt[o] - bt[m]) / 400))
        assert expected == pytest.approx(observed, abs=1e-6)
    assert bt["A"] > bt["B"] and bt["A"] > bt["C"]


def test_bradley_terry_without_a_maximum_uses_the_stated_prior():
    battles = [B("A", "B", "model_a")] * 2
    assert not R.mle_exists(["A", "B"], R.bt_weights(battles))
    # 0.1 virtual ties each way: weights 4.1 vs 0.1, ratio 41, difference 400 log10 41 = 645.113
    bt = R.bradley_terry(battles, prior=None)
    assert bt["A"] - bt["B"] == pytest.approx(400 * math.log10(41), abs=1e-3)
    assert R.mle_exists(["A", "B", "C"], R.bt_weights(battles + [B("B", "A", "model_a"), B("C", "A", "tie")]))
    assert R.bradley_terry([]) == {}


def test_bradley_terry_centres_each_group_of_models_that_met():
    # two separate pairs: ratings compare within a pair only, each pair is centred on 1000
    bt = R.bradley_terry([B("A", "B", "model_a")] * 3 + [B("A", "B", "model_b"), B("C", "D", "tie")])
    assert bt == pytest.approx({"A": 1095.4243, "B": 904.5757, "C": 1000.0, "D": 1000.0}, abs=1e-3)


def test_bootstrap_interval():
    one = [B("A", "B", "model_a")]
    iv = R.bootstrap(one, R.online_elo, rounds=20)
    # every resample is that same battle: no spread
    assert iv["A"] == R.Interval(1002.0, 1002.0, 1002.0, 1002.0)
    mixed = [B("A", "B", "model_a")] * 6 + [B("A", "B", "model_b")] * 4
    iv = R.bootstrap(mixed, lambda b: R.bradley_terry(b, prior=None), rounds=100, seed=1)
    assert iv["A"].lower < iv["A"].median < iv["A"].upper
    assert iv["A"].lower < iv["A"].rating < iv["A"].upper
    assert R.bootstrap(mixed, R.online_elo, rounds=50, seed=3) == R.bootstrap(mixed, R.online_elo, rounds=50, seed=3)
    assert R._quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5


def test_win_fraction_and_pair_counts():
    battles = [B("A", "B", "model_a"), B("B", "A", "model_b"), B("A", "B", "model_b"), B("A", "B", "tie"),
               B("A", "C", "model_a")]
    counts = R.pair_counts(battles)
    assert counts == {("A", "B"): 4, ("B", "A"): 4, ("A", "C"): 1, ("C", "A"): 1}
    wf = R.win_fraction(battles)
    assert wf[("A", "B")] == 0.5 and wf[("B", "A")] == 0.25  # the tie counts as played only
    assert wf[("A", "C")] == 1.0 and wf[("C", "A")] == 0.0


def test_battles_from_groups_maps_votes_and_sorts_by_time():
    groups = [
        {"kind": "battle", "id": "s2", "sides": ["x", "y"], "models": ["m1", "m2"],
         "votes": [{"winner": "bothbad", "tstamp": 300}, {"winner": "left", "tstamp": 100}]},
        {"kind": "battle", "id": "s1", "sides": ["x", "y"], "models": ["m2", "m3"],
         "votes": [{"winner": "right", "tstamp": 200}, {"winner": "abstain", "tstamp": 250}]},
        {"kind": "battle", "id": "s3", "sides": ["x", "y"], "models": ["m1", None], "votes": [{"winner": "tie"}]},
        {"kind": "battle", "id": "s4", "sides": ["x", "y"], "models": ["m1", "m1"], "votes": [{"winner": "tie"}]},
        {"kind": "note", "id": "n"},
    ]
    battles, skipped = R.battles_from_groups(groups)
    assert [(b.model_a, b.model_b, b.winner) for b in battles] == [
        ("m1", "m2", "model_a"), ("m2", "m3", "model_b"), ("m1", "m2", "tie (bothbad)")]
    assert len(skipped) == 3 and any("abstain" in s for s in skipped)


def test_leaderboard_rows():
    battles = [B("A", "B", "model_a")] * 3 + [B("A", "B", "model_b"), B("B", "C", "tie"), B("C", "A", "model_b")]
    rows = R.leaderboard(battles, rounds=30)
    assert rows[0]["model"] == "A" and sorted(r["model"] for r in rows) == ["A", "B", "C"]
    a = rows[0]
    assert (a["rank"], a["battles"], a["wins"], a["losses"], a["ties"]) == (1, 5, 4, 1, 0)
    assert a["bt_lower"] <= a["bt"] <= a["bt_upper"] and a["elo_lower"] <= a["elo"] <= a["elo_upper"]


def test_one_model_under_differently_cased_or_spaced_names_is_one_row():
    def g(i, a, b, winner="left"):
        return {"kind": "battle", "id": f"s{i}", "sides": ["x", "y"], "models": [a, b], "rounds": 1,
                "votes": [{"winner": winner, "tstamp": i}]}
    groups = [g(1, "GPT-4", "claude"), g(2, "gpt-4", "claude", "right"), g(3, "claude", " gpt 4"),
              g(4, "gpt-4", "Claude"), g(5, "GPT-4", "gpt-4")]
    battles, skipped = R.battles_from_groups(groups)
    # "gpt-4" is written 3 times, "GPT-4" twice, " gpt 4" once; "claude" 3 times, "Claude" once
    assert R.models_of(battles) == ["claude", "gpt-4"]
    assert [(b.model_a, b.model_b) for b in battles] == [("gpt-4", "claude"), ("gpt-4", "claude"),
                                                         ("claude", "gpt-4"), ("gpt-4", "claude")]
    assert skipped == ["battle s5: gpt-4 against itself"]
    rows = R.leaderboard(battles, rounds=5)
    assert sorted(r["model"] for r in rows) == ["claude", "gpt-4"]
    assert {r["model"]: r["battles"] for r in rows} == {"claude": 4, "gpt-4": 4}


def test_display_names_pick_the_most_common_spelling():
    names = R.display_names(["Llama 3", "llama-3", "LLAMA_3", "llama-3", "other", None, ""])
    assert names == {"Llama 3": "llama-3", "llama-3": "llama-3", "LLAMA_3": "llama-3", "other": "other"}


def test_a_battle_with_no_conversation_is_not_rated():
    groups = [{"kind": "battle", "id": "empty", "sides": ["x", "y"], "models": ["m1", "m2"], "rounds": 0,
               "votes": [{"winner": "left", "tstamp": 1}]},
              {"kind": "battle", "id": "ok", "sides": ["x", "y"], "models": ["m1", "m2"], "rounds": 1,
               "votes": [{"winner": "right", "tstamp": 2}]}]
    battles, skipped = R.battles_from_groups(groups)
    assert [b.battle_id for b in battles] == ["ok"]
    assert skipped == ["battle empty: no conversation was recorded"]
