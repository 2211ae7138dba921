"""Simulated players: bet, vote and decide through the game platform's REST API.

Mostly by best strategy, sometimes letting the timer expire so the rule set's
defaults are exercised. Seeded: the same seed gives the same choices.
"""

from __future__ import annotations

import asyncio
import logging
import random
from decimal import Decimal
from typing import Any

import httpx

from studio.cards import parse_card
from studio.rules import voting
from studio.rules.ruleset import DecisionMode, RuleSet
from studio.rules.strategy import Action, best_action, strategy_for

_LOGGER = logging.getLogger(__name__)
# The bots read their table's state over REST at most this often (seconds): at 0.1 s four
# tables made 40 requests a second of the demo's own web server, the busiest thing on its
# event loop.
POLL_MIN = 0.25


class PlayerBots:
    def __init__(
        self,
        client: httpx.AsyncClient,
        table: str,
        ruleset: RuleSet,
        *,
        seed: int,
        pace: float,
        skip_rate: float = 0.08,
    ) -> None:
        self.client = client
        self.table = table
        self.rules = ruleset
        self.rng = random.Random(seed)
        self.pace = pace
        self.skip_rate = skip_rate
        self._bet_round: str | None = None
        self._answered: set[str] = set()
        self._counter = 0
        self.commands = 0
        self.rejected = 0

    async def run(self) -> None:
        while True:
            try:
                state = (await self.client.get(f"/api/tables/{self.table}")).json()
                await self.step(state)
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                _LOGGER.debug("players at %s: %s", self.table, exc)
            await asyncio.sleep(max(self.pace / 2, POLL_MIN))

    async def step(self, state: dict[str, Any]) -> None:
        round_id = state.get("round_id")
        if state.get("paused") or round_id is None:
            return
        if state["phase"] == "betting" and (self._bet_round != round_id or not state["boxes"]):
            # Bet once per round, and again if the window was extended because nobody did.
            self._bet_round = round_id
            await self.place_bets(round_id)
        prompt = state.get("prompt") or {}
        if state["phase"] == "dealing" and prompt.get("action") == "wait_decisions":
            await self.decide(round_id, state, prompt.get("target") or {})

    async def send(self, path: str, body: dict[str, Any]) -> bool:
        self._counter += 1
        body = {"id": f"{body.get('round', '')}-{self._counter}", **body}
        body.pop("round", None)
        response = await self.client.post(f"/api/tables/{self.table}/{path}", json=body)
        self.commands += 1
        if response.status_code != 200:
            self.rejected += 1
            return False
        return True

    def stake(self, low: Decimal, high: Decimal) -> str:
        units = self.rng.choice([1, 1, 2, 2, 5, 10])
        return str(min(high, low * units).quantize(Decimal("0.01")))

    async def place_bets(self, round_id: str) -> None:
        table = self.rules.table
        side_kinds = [kind.value for kind in self.rules.side_bets]
        seats = [seat for seat in range(1, table.seats + 1) if self.rng.random() < 0.7]
        for seat in seats or [self.rng.randint(1, table.seats)]:
            majority = table.decision_mode is DecisionMode.MAJORITY_RULES
            players = self.rng.randint(1, 5) if majority else 1
            for n in range(players):
                player = f"{self.table}-s{seat}-p{n + 1}"
                side = {
                    kind: self.stake(Decimal("1.00"), Decimal("5.00"))
                    for kind in side_kinds
                    if self.rng.random() < 0.25
                }
                await self.send(
                    "bets",
                    {
                        "round": round_id,
                        "seat": seat,
                        "player": player,
                        "stake": self.stake(table.min_bet, table.max_bet),
                        "side_bets": side,
                        "consent_auto": self.rng.random() < 0.7,
                    },
                )
            if table.bet_behind and self.rng.random() < 0.3:
                await self.send(
                    "bets",
                    {
                        "round": round_id,
                        "seat": seat,
                        "player": f"{self.table}-behind-{seat}",
                        "stake": self.stake(table.min_bet, table.max_bet),
                        "behind": True,
                        "behind_split": self.rng.choice(["follow", "first_hand"]),
                    },
                )

    async def _surrenders(self, state: dict[str, Any], seat: int) -> bool:
        """Best strategy's early-surrender answer for the seat's two cards."""
        box = next((b for b in state.get("boxes", []) if b["seat"] == seat), None)
        dealer_cards = state.get("dealer", {}).get("cards", [])
        if box is None or not dealer_cards or len(box["hands"][0]["cards"]) != 2:
            return False
        cards = [parse_card(c) for c in box["hands"][0]["cards"]]
        up = parse_card(dealer_cards[0])
        # Off the event loop, like best_action: the first look at an up card is slow.
        return await asyncio.to_thread(
            strategy_for(self.rules).early_surrender,
            sum(c.value for c in cards),
            any(c.is_ace for c in cards),
            up.value,
            cards[0].value == cards[1].value,
        )

    async def decide(self, round_id: str, state: dict[str, Any], pending: dict[str, Any]) -> None:
        kind = pending.get("kind")
        # One answer per decision point: the same pending decision with the same cards out.
        cards_out = sum(len(h["cards"]) for b in state.get("boxes", []) for h in b["hands"])
        key = f"{round_id}:{kind}:{pending.get('seat')}:{pending.get('hand')}:{cards_out}"
        if key in self._answered:
            return
        self._answered.add(key)
        if self.rng.random() < self.skip_rate:
            return  # let the timer apply the default
        if kind == "insurance":
            surrendered = set()
            for seat in pending.get("surrender_seats", []):
                take = await self._surrenders(state, seat)
                player = f"{self.table}-s{seat}-p1"  # the seated player (place_bets' names)
                body = {"round": round_id, "seat": seat, "player": player, "take": take}
                if await self.send("early-surrender", body) and take:
                    surrendered.add(seat)
            for seat, player in pending.get("insurance_players", []):
                if seat in surrendered:
                    continue  # surrender and insurance are alternatives
                await self.send(
                    "insurance",
                    {
                        "round": round_id,
                        "seat": seat,
                        "player": player,
                        "take": self.rng.random() < 0.1,
                    },
                )
            return
        if kind != "action":
            return
        seat, hand_index = pending["seat"], pending.get("hand") or 0
        box = next((b for b in state["boxes"] if b["seat"] == seat), None)
        dealer_cards = state.get("dealer", {}).get("cards", [])
        if box is None or not dealer_cards:
            return
        cards = [parse_card(c) for c in box["hands"][hand_index]["cards"]]
        legal = [Action(a) for a in pending.get("legal", [])]
        if not legal or len(cards) < 2:
            return
        # Off the event loop: a strategy's first look at an up card computes the dealer's
        # exact distribution (18-52 ms here), which stalled every table's controller,
        # camera and stream for as long in the first rounds.
        choice = await asyncio.to_thread(
            best_action,
            self.rules,
            cards,
            parse_card(dealer_cards[0]),
            legal,
            after_split=len(box["hands"]) > 1,
        )
        mode = pending.get("mode")
        if mode == "majority":
            # Only those with money on the hand vote on it (a split's second hand).
            voters = pending.get("voters") or box["players"]
            eligible = pending.get("eligible_voters") or len(voters)
            votes = {p: Action(a) for p, a in (pending.get("votes") or {}).items()}
            for player in voters:
                if voting.decided_now(votes, eligible) is not None:
                    # The seat has decided (an action has won at once): the controller has
                    # applied it, and a vote still sent would be refused as too late.
                    break
                if player in votes:
                    continue
                vote = choice if self.rng.random() < 0.8 else self.rng.choice(legal)
                if await self.send(
                    "votes",
                    {"round": round_id, "seat": seat, "player": player, "action": vote.value},
                ):
                    votes[player] = vote
        elif mode == "player":
            # The seated player (place_bets' p1) decides, not whoever bets behind the box
            # (listed with the box's players, and sorted first): the controller refuses them.
            player = f"{self.table}-s{seat}-p1"
            await self.send(
                "decisions",
                {"round": round_id, "seat": seat, "player": player, "action": choice.value},
            )
