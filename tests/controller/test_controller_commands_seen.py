"""Every game command's id and answer is kept for the table's life (rebuilt from the log at a
start), so that a command sent again under its id, however late, is never applied twice. A
soak review measured about 480 bytes an id; most answers are a bare acceptance (decisions,
votes, insurance), which now share one read-only answer."""

from __future__ import annotations

from test_controller_table import Driver, start_round


def test_bare_acceptances_share_one_answer_and_bets_keep_theirs() -> None:
    d = Driver(single_source=True)
    start_round(d, 1, 2)
    for code in ["TH", "9C", "7D", "8S", "TS", "6H"]:
        d.card(code)
    d.decide(1, "stand", "stand-1", player="p1")
    d.decide(2, "stand", "stand-2", player="p2")
    seen = d.table.commands_seen
    assert seen["stand-1"] == {"accepted": True} == seen["stand-2"]
    assert seen["stand-1"] is seen["stand-2"]
    bets = [answer for cid, answer in seen.items() if "taken" in answer]
    assert len(bets) == 2 and bets[0] is not bets[1]
