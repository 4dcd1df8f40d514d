"""What the library keeps of each run: its scores, read as their frameworks read them."""
from __future__ import annotations

from viewer.analysis import per_run


def trace(tid, scores=()):
    return {"id": tid, "scorecard": {"scores": [dict(s) for s in scores]}}


def test_scores_are_read_as_their_frameworks_read_them_and_averaged_over_epochs():
    t = trace("a", [{"scorer": "match", "value": "C", "epoch": 1}, {"scorer": "match", "value": "I", "epoch": 2},
                    {"scorer": "judge", "value": 0.8}, {"scorer": "note", "value": "see the log"}])
    assert per_run.scores_of(t) == {"match": 0.5, "judge": 0.8}  # C is 1, I is 0; text that is no number left out
    assert per_run.scores_of({"id": "x"}) == {}
    assert per_run.headline({"judge": 0.8, "overall": 0.3}) == 0.3 and per_run.headline({"judge": 0.8}) == 0.8
    names = per_run.scorer_names([per_run.scores_of(t), per_run.scores_of(trace("b", [{"scorer": "overall", "value": 1}]))])
    assert names == ["overall", "match", "judge"]
