"""Ratings from arena votes, following FastChat's `elo_analysis.py` (pure Python, no UI).

A rating battle is `(model_a, model_b, winner)` with winner one of `model_a`, `model_b`, `tie`,
`tie (bothbad)`; a logged vote left / right / tie / bothbad maps to them, `model_a` being the
left side. Every vote is one battle (as FastChat counts them), in time order.

Conventions (FastChat's):
- Online Elo: K=4, base 10, scale 400, every model starts at 1000; for each battle in time
  order, `E_a = 1 / (1 + 10 ** ((R_b - R_a) / 400))`, `S_a` is 1 for a win, 0 for a loss and
  0.5 for both kinds of tie; `R_a += K (S_a - E_a)`, `R_b += K (1 - S_a - E_b)`.
- Bradley-Terry: the maximum-likelihood fit of `P(a beats b) = 1 / (1 + 10 ** ((R_b - R_a) / 400))`
  with FastChat's weights: a win counts twice for the winner, a tie (either kind) once for each
  side. FastChat fits this as an unpenalised logistic regression; here the same likelihood is
  maximised by Hunter's MM iteration. Ratings are centred so that their mean is 1000 within
  each group of models linked by battles (the regression's coefficients start at zero and its
  gradient keeps each group's sum at zero). FastChat's final shift that pins one reference
  model to a fixed score is not applied.
  When the maximum does not exist (a model that never lost, or never won, against the rest),
  `prior` virtual ties are added to every pair of models that met, which keeps every rating
  finite; `prior=None` adds `FALLBACK_PRIOR` only in that case.
- Bootstrap: resample the battles with replacement (order as drawn, as pandas' `sample` does),
  refit, and report the median and the 2.5 / 97.5 percentiles per model.
- Win fraction of a over b: battles a won against b over all battles between them (ties count
  in the denominator only), FastChat's `compute_pairwise_win_fraction`.

One model logged under names that differ only in case or spacing ("GPT-4", "gpt-4", "gpt 4")
is one model, shown under its most common spelling (`display_names`). A battle whose
conversations hold no round (nothing was asked) is not rated.
"""
from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable

K, SCALE, BASE, INIT = 4.0, 400.0, 10.0, 1000.0
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
VOTE_TO_WINNER = {"left": "model_a", "right": "model_b", "tie": "tie", "bothbad": "tie (bothbad)"}
FALLBACK_PRIOR = 0.1


@dataclass(frozen=True)
class Battle:
    model_a: str
    model_b: str
    winner: str  # one of WINNERS
    tstamp: float | None = None
    battle_id: str | None = None


_SEPARATORS = re.compile(r"[\s_\-]+")


def model_key(name: str) -> str:
    """What names of one model share: lower case, any run of spaces, `-` and `_` as one `-`."""
    return _SEPARATORS.sub("-", name.strip().lower())


def display_names(names: Iterable) -> dict[str, str]:
    """Each spelling met -> the name its model is shown under: the most common spelling of its
    `model_key` (the first met on a tie)."""
    counts = Counter(n for n in names if isinstance(n, str) and n.strip())
    best: dict[str, str] = {}
    for n, c in counts.items():  # insertion order: the first met wins a tie
        k = model_key(n)
        if k not in best or c > counts[best[k]]:
            best[k] = n
    return {n: best[model_key(n)] for n in counts}


def _battle_groups(groups) -> list[dict]:
    return [g for g in groups or () if isinstance(g, dict) and g.get("kind") == "battle"]


def battles_from_groups(groups: Iterable[dict]) -> tuple[list[Battle], list[str]]:
    """Rating battles from the document's battle groups, in time order, and why any vote was left out."""
    out: list[Battle] = []
    skipped: list[str] = []
    groups = _battle_groups(groups)
    names = display_names(m for g in groups for m in g.get("models") or ())
    for g in groups:
        models = [names.get(m) for m in g.get("models") or []]
        a = models[0] if len(models) > 0 else None
        b = models[1] if len(models) > 1 else None
        for v in g.get("votes") or ():
            winner = VOTE_TO_WINNER.get(v.get("winner")) if isinstance(v, dict) else None
            if winner is None:
                skipped.append(f"battle {g.get('id')}: unknown vote {v!r}")
            elif g.get("rounds") == 0:
                skipped.append(f"battle {g.get('id')}: no conversation was recorded")
            elif not a or not b:
                skipped.append(f"battle {g.get('id')}: the models are not named")
            elif a == b:
                skipped.append(f"battle {g.get('id')}: {a} against itself")
            else:
                ts = v.get("tstamp")
                out.append(Battle(str(a), str(b), winner, ts if isinstance(ts, (int, float)) else None,
                                  str(g.get("id"))))
    order = sorted(range(len(out)), key=lambda i: (out[i].tstamp is None, out[i].tstamp or 0, i))
    return [out[i] for i in order], skipped


def models_of(battles: Iterable[Battle]) -> list[str]:
    return sorted({m for bt in battles for m in (bt.model_a, bt.model_b)})


def _score_a(winner: str) -> float:
    if winner == "model_a":
        return 1.0
    if winner == "model_b":
        return 0.0
    if winner in ("tie", "tie (bothbad)"):
        return 0.5
    raise ValueError(f"unexpected winner {winner!r}; expected one of {', '.join(WINNERS)}")


def online_elo(battles: Iterable[Battle], k: float = K, scale: float = SCALE, base: float = BASE,
               init: float = INIT) -> dict[str, float]:
    """FastChat's `compute_elo`: one pass over the battles in the order given."""
    rating: dict[str, float] = defaultdict(lambda: init)
    for bt in battles:
        ra, rb = rating[bt.model_a], rating[bt.model_b]
        ea = 1.0 / (1.0 + base ** ((rb - ra) / scale))
        eb = 1.0 / (1.0 + base ** ((ra - rb) / scale))
        sa = _score_a(bt.winner)
        rating[bt.model_a] = ra + k * (sa - ea)
        rating[bt.model_b] = rb + k * (1.0 - sa - eb)
    return dict(rating)


def bt_weights(battles: Iterable[Battle]) -> dict[tuple[str, str], float]:
    """FastChat's Bradley-Terry weights: w[(a, b)] = 2 x wins of a over b + ties between them."""
    w: dict[tuple[str, str], float] = Counter()
    for bt in battles:
        s = _score_a(bt.winner)
        if s == 1.0:
            w[(bt.model_a, bt.model_b)] += 2
        elif s == 0.0:
            w[(bt.model_b, bt.model_a)] += 2
        else:
            w[(bt.model_a, bt.model_b)] += 1
            w[(bt.model_b, bt.model_a)] += 1
    return dict(w)


def mle_exists(models: list[str], weights: dict[tuple[str, str], float]) -> bool:
    """The BT maximum exists iff the graph "a beat b at least partly" is strongly connected."""
    if len(models) <= 1:
        return True
    out: dict[str, set] = defaultdict(set)
    back: dict[str, set] = defaultdict(set)
    for (a, b), n in weights.items():
        if n > 0:
            out[a].add(b)
            back[b].add(a)

    def reach(start: str, edges) -> set:
        seen, todo = {start}, [start]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    everyone = set(models)
    return reach(models[0], out) >= everyone and reach(models[0], back) >= everyone


def bradley_terry(battles: Iterable[Battle], scale: float = SCALE, base: float = BASE, init: float = INIT,
                  prior: float | None = 0.0, tol: float = 1e-10, max_iter: int = 10_000) -> dict[str, float]:
    """Bradley-Terry ratings on the Elo scale (FastChat's weights; mean rating = `init`).

    `prior`: virtual ties added to every pair that met (0 = the plain maximum likelihood;
    None = 0 when the maximum exists, else `FALLBACK_PRIOR`)."""
    battles = list(battles)
    models = models_of(battles)
    if not models:
        return {}
    w = bt_weights(battles)
    if prior is None:
        prior = 0.0 if mle_exists(models, w) else FALLBACK_PRIOR
    if prior:
        w = dict(w)
        for a, b in {tuple(sorted((bt.model_a, bt.model_b))) for bt in battles}:
            w[(a, b)] = w.get((a, b), 0.0) + prior
            w[(b, a)] = w.get((b, a), 0.0) + prior
    idx = {m: i for i, m in enumerate(models)}
    n = len(models)
    wins = [0.0] * n
    games: dict[tuple[int, int], float] = Counter()  # unordered pair -> total weight
    for (a, b), x in w.items():
        wins[idx[a]] += x
        i, j = sorted((idx[a], idx[b]))
        games[(i, j)] += x
    opp: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for (i, j), x in games.items():
        opp[i].append((j, x))
        opp[j].append((i, x))
    parts = _components(n, opp)
    p = [1.0] * n
    for _ in range(max_iter):
        new = []
        for i in range(n):
            denom = sum(x / (p[i] + p[j]) for j, x in opp[i])
            new.append(max(wins[i], 1e-300) / denom if denom else p[i])
        for part in parts:  # keep each connected part's geometric mean at 1
            g = math.exp(sum(math.log(new[i]) for i in part) / len(part))
            for i in part:
                new[i] /= g
        change = max(abs(math.log(a) - math.log(b)) for a, b in zip(new, p))
        p = new
        if change < tol:
            break
    return {m: scale * math.log(p[idx[m]], base) + init for m in models}


def _components(n: int, opp: list[list[tuple[int, float]]]) -> list[list[int]]:
    """Groups of models linked by battles: ratings compare only within one, so each is centred."""
    seen: set[int] = set()
    out = []
    for start in range(n):
        if start in seen:
            continue
        seen.add(start)
        part, todo = [], [start]
        while todo:
            i = todo.pop()
            part.append(i)
            for j, _ in opp[i]:
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        out.append(part)
    return out


@dataclass(frozen=True)
class Interval:
    rating: float  # the fit on all battles
    median: float
    lower: float  # 2.5th percentile of the bootstrap
    upper: float  # 97.5th percentile


def _quantile(sorted_vals: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's and pandas' default)."""
    if not sorted_vals:
        return float("nan")
    pos = (len(sorted_vals) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def bootstrap(battles: list[Battle], fit: Callable[[list[Battle]], dict[str, float]], rounds: int = 200,
              seed: int = 0) -> dict[str, Interval]:
    """`fit` on all battles, and its median and 95% interval over `rounds` resamples.

    A model missing from a resample (it drew none of its battles) is skipped for that round."""
    battles = list(battles)
    full = fit(battles)
    rng = random.Random(seed)
    samples: dict[str, list[float]] = defaultdict(list)
    if battles:
        for _ in range(rounds):
            for m, r in fit(rng.choices(battles, k=len(battles))).items():
                samples[m].append(r)
    out = {}
    for m, r in full.items():
        vals = sorted(samples.get(m) or [r])
        out[m] = Interval(r, _quantile(vals, 0.5), _quantile(vals, 0.025), _quantile(vals, 0.975))
    return out


def pair_counts(battles: Iterable[Battle]) -> dict[tuple[str, str], int]:
    """Battles per pair, both orders filled (symmetric)."""
    c: Counter = Counter()
    for bt in battles:
        c[(bt.model_a, bt.model_b)] += 1
        c[(bt.model_b, bt.model_a)] += 1
    return dict(c)


def win_fraction(battles: Iterable[Battle]) -> dict[tuple[str, str], float]:
    """(a, b) -> fraction of the battles between a and b that a won; ties count as played, not won."""
    battles = list(battles)
    won: Counter = Counter()
    for bt in battles:
        if bt.winner == "model_a":
            won[(bt.model_a, bt.model_b)] += 1
        elif bt.winner == "model_b":
            won[(bt.model_b, bt.model_a)] += 1
    return {pair: won.get(pair, 0) / n for pair, n in pair_counts(battles).items()}


def leaderboard(battles: list[Battle], rounds: int = 200, seed: int = 0) -> list[dict]:
    """One row per model, best Bradley-Terry rating first."""
    elo = bootstrap(battles, online_elo, rounds, seed)
    bt = bootstrap(battles, lambda b: bradley_terry(b, prior=None), rounds, seed)
    played: Counter = Counter()
    wins: Counter = Counter()
    ties: Counter = Counter()
    for b in battles:
        played[b.model_a] += 1
        played[b.model_b] += 1
        if b.winner == "model_a":
            wins[b.model_a] += 1
        elif b.winner == "model_b":
            wins[b.model_b] += 1
        else:
            ties[b.model_a] += 1
            ties[b.model_b] += 1
    rows = []
    for m in models_of(battles):
        rows.append({"model": m, "bt": bt[m].rating, "bt_lower": bt[m].lower, "bt_upper": bt[m].upper,
                     "elo": elo[m].rating, "elo_lower": elo[m].lower, "elo_upper": elo[m].upper,
                     "battles": played[m], "wins": wins[m], "ties": ties[m],
                     "losses": played[m] - wins[m] - ties[m]})
    rows.sort(key=lambda r: (-r["bt"], r["model"]))
    for n, r in enumerate(rows, 1):
        r["rank"] = n
    return rows
