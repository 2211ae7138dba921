"""The demo's Majority Rules players stop voting once their seat has decided.

An action that has more than half of the seat's votes (or that the votes still to come
cannot overtake) wins at once (GAME-FACTS §1); the controller applies it and refuses
any later vote. The bots used to send every player's vote regardless, so a demo table
logged a stream of refused votes ("a card is due before any decision", "it is seat 2
hand 1's turn", "illegal decision 'double' ... legal: hit, stand"): moves the game did
not allow. Here the platform is an in-process stand-in that records what the bots send.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from studio.demo.players import PlayerBots
from studio.rules import voting
from studio.rules.ruleset import ruleset_from_spec
from studio.rules.strategy import Action

PLAYERS = [f"maj-s1-p{n}" for n in range(1, 6)]


def _state(votes: dict[str, str], voters: list[str] | None = None) -> dict[str, Any]:
    pending = {
        "kind": "action",
        "seat": 1,
        "hand": 0,
        "mode": "majority",
        "legal": ["hit", "stand", "double"],
        "votes": votes,
        "eligible_voters": len(voters or PLAYERS),
        "voters": voters or PLAYERS,
    }
    return {
        "round_id": "maj-R1",
        "phase": "dealing",
        "paused": False,
        "prompt": {"action": "wait_decisions", "target": pending},
        "boxes": [{"seat": 1, "players": PLAYERS, "hands": [{"cards": ["TH", "6C"]}]}],
        "dealer": {"cards": ["9D"]},
    }


async def _votes_sent(
    seed: int, earlier: dict[str, str], voters: list[str] | None = None
) -> list[tuple[str, Action]]:
    sent: list[tuple[str, Action]] = []

    def platform(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert request.url.path == "/api/tables/maj/votes", request.url
        sent.append((body["player"], Action(body["action"])))
        return httpx.Response(200, json={"ok": True})

    rules = ruleset_from_spec({"preset": "majority_speed"})
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(platform), base_url="http://platform"
    ) as client:
        bots = PlayerBots(client, "maj", rules, seed=seed, pace=0.1, skip_rate=0.0)
        await bots.step(_state(earlier, voters))
    return sent


async def test_no_vote_is_sent_after_the_seat_has_decided() -> None:
    for seed in range(20):
        sent = await _votes_sent(seed, {})
        votes: dict[str, Action] = {}
        for index, (player, action) in enumerate(sent):
            assert voting.decided_now(votes, len(PLAYERS)) is None, (seed, sent[index:])
            votes[player] = action
        # The bots voted until the seat decided (or everyone had voted).
        assert voting.decided_now(votes, len(PLAYERS)) or len(votes) == len(PLAYERS), sent


async def test_votes_already_cast_count_and_their_players_do_not_vote_again() -> None:
    earlier = {"maj-s1-p1": "hit", "maj-s1-p2": "hit"}
    for seed in range(10):
        sent = await _votes_sent(seed, earlier)
        assert not {player for player, _ in sent} & set(earlier), sent
        votes = {p: Action(a) for p, a in earlier.items()}
        for player, action in sent:
            assert voting.decided_now(votes, len(PLAYERS)) is None, (seed, sent)
            votes[player] = action
    # A seat already decided by the votes cast gets no vote at all.
    decided = {p: "hit" for p in PLAYERS[:3]}
    assert await _votes_sent(0, decided) == []


async def test_only_the_players_with_money_on_the_hand_vote_on_it() -> None:
    """A split's second hand: the players who did not take the split have nothing on it
    and may not vote (their votes were sent and refused)."""
    voters = PLAYERS[:2]
    for seed in range(10):
        sent = await _votes_sent(seed, {}, voters)
        assert sent and {player for player, _ in sent} <= set(voters), sent


async def test_the_bots_answer_early_surrender_and_skip_insurance_where_they_surrendered() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    def platform(request: httpx.Request) -> httpx.Response:
        sent.append((request.url.path.rsplit("/", 1)[1], json.loads(request.content)))
        return httpx.Response(200, json={"ok": True})

    pending = {
        "kind": "insurance",
        "insurance_players": [[1, "club-s1-p1"], [2, "club-s2-p1"]],
        "surrender_seats": [1, 2],
    }
    state = {
        "round_id": "club-R1",
        "phase": "dealing",
        "paused": False,
        "prompt": {"action": "wait_decisions", "target": pending},
        "boxes": [
            {"seat": 1, "players": ["club-s1-p1"], "hands": [{"cards": ["TH", "6C"]}]},
            {"seat": 2, "players": ["club-s2-p1"], "hands": [{"cards": ["TD", "QS"]}]},
        ],
        "dealer": {"cards": ["AS", "??"]},
    }
    rules = ruleset_from_spec({"preset": "clubhouse"})
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(platform), base_url="http://platform"
    ) as client:
        await PlayerBots(client, "club", rules, seed=1, pace=0.1, skip_rate=0.0).step(state)
    answers = {body["seat"]: body["take"] for path, body in sent if path == "early-surrender"}
    # 16 against an ace is surrendered early; 20 is not. Before, nobody answered, and the
    # round waited for the decision timer at every ace up.
    assert answers == {1: True, 2: False}
    assert {body["player"] for path, body in sent if path == "early-surrender"} == {
        "club-s1-p1",
        "club-s2-p1",
    }
    assert [body["seat"] for path, body in sent if path == "insurance"] == [2]
