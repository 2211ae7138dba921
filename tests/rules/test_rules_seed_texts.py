"""Whole rounds against the words of the three rule texts (/work/shared/seeds/*.txt).

Every expected amount below is worked out by hand from the quoted sentence, not
read off the engine: a stake of 10 comes back as 25 on a 3:2 blackjack, 20 on an
even-money win, and so on.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from studio.rules.errors import RoundStateError
from studio.rules.hand import total_and_soft
from studio.rules.round import LOGIC, CardFor, NextCard, Phase, Round
from studio.rules.ruleset import RuleSet, preset

EU = {"dealer": {"hole_card": "eu", "peek": "none"}}


def table(rules: RuleSet, *wagers: tuple[int, str, str], consent: bool = True) -> Round:
    rnd = Round(rules)
    rnd.open_betting()
    for seat, player, stake in wagers:
        rnd.place_wager(seat, player, stake, auto_consent=consent)
    rnd.close_betting()
    return rnd


def paid(rnd: Round) -> dict[tuple[str, str], Decimal]:
    """(player, bet) -> what came back, stake included."""
    return {(w.player, line.bet): line.payout for w in rnd.settle().wagers for line in w.lines}


def test_004_blackjack_win_and_push_amounts_of_the_text() -> None:
    """004: "you have Blackjack and win 1.5 times your bet (if your bet was 10, you
    receive 25) ... closer to 21 than the dealer's, you win your bet amount (if your bet
    was 10, you receive 20) ... the same card total (17 and up) ... returned"."""
    rules = preset("majority_speed")
    rnd = table(rules, (1, "p", "10"))
    for code in ["AS", "9D", "KC", "7H", "5C"]:  # BJ; dealer 9+7 = 16 draws 5: 21
        rnd.deal(code)
    assert paid(rnd)[("p", "main")] == Decimal("25.00")
    rnd = table(rules, (1, "p", "10"))
    for code in ["TC", "7D", "9C", "TH"]:  # 19 (stands by best strategy) v 17
        rnd.deal(code)
    assert paid(rnd)[("p", "main")] == Decimal("20.00")
    rnd = table(rules, (1, "p", "10"))
    for code in ["TC", "7D", "7C", "TH"]:  # 17 v 17
        rnd.deal(code)
    assert paid(rnd)[("p", "main")] == Decimal("10.00")


def test_000_blackjack_beats_a_drawn_21_and_pushes_a_dealer_blackjack() -> None:
    """000: "a BJ ... beats a 21-sum hand which was not a result of the first two cards";
    "A blackjack pays 3 to 2 ... unless the dealer and player both have a blackjack, in
    which case, the result will push"."""
    rules = preset("clubhouse")
    rnd = table(rules, (1, "p", "10"))
    for code in ["AS", "6D", "KD", "5H", "TC"]:  # dealer 6+5 draws T: 21 in three cards
        rnd.deal(code)
    assert rnd.phase is Phase.COMPLETE and rnd.dealer_cards[-1].code == "TC"
    assert paid(rnd)[("p", "main")] == Decimal("25.00")
    rnd = table(rules, (1, "p", "10"))
    for code in ["AS", "AD", "KD", "KH"]:  # both blackjack
        rnd.deal(code)
    rnd.timeout()  # insurance / surrender offer: no to both
    assert paid(rnd)[("p", "main")] == Decimal("10.00")


def test_001_21_on_split_aces_pays_even_money() -> None:
    """001: "If you split aces ... If a ten-value card is dealt to either ace, the hand is
    counted as 21, not blackjack"; a normal win pays 1:1."""
    rnd = table(preset("classic6"), (1, "p", "10"))
    for code in ["AS", "9C", "AD", "6H"]:  # hole 9C first, up 6H
        rnd.deal(code)
    rnd.act(1, "split", player="p")
    for code in ["KD", "QH", "5S"]:  # 21 and 21; dealer 15 draws 5: 20
        rnd.deal(code)
    assert rnd.phase is Phase.COMPLETE
    got = paid(rnd)
    assert got[("p", "hand 1")] == got[("p", "hand 2")] == Decimal("20.00")


def test_000_insurance_is_half_the_stake_and_pays_2_to_1() -> None:
    """000: "Insurance bet- This bet is half the player's stake. In the event that the
    dealer has a blackjack this bet will pay at 2 to 1"."""
    rnd = table(preset("clubhouse"), (1, "p", "10"))
    for code in ["TS", "AD", "9S", "KH"]:  # 19 v A + K
        rnd.deal(code)
    rnd.insurance("p", True)
    rnd.early_surrender(1, False, player="p")
    assert rnd.boxes[1].wagers[0].insurance == Decimal("5.00")
    got = paid(rnd)
    assert got[("p", "main")] == Decimal("0.00")
    assert got[("p", "insurance")] == Decimal("15.00")  # 5 back + 10


def test_001_even_money_is_paid_1_to_1_before_the_check() -> None:
    """001: "If the player chooses the EVEN MONEY button, he/she is automatically paid 1:1
    before the dealer checks for blackjack"."""
    for hole in ("KC", "7C"):  # dealer blackjack, or soft 18 (stands even under H17)
        rnd = table(preset("classic6"), (1, "p", "10"))
        for code in ["AC", hole, "KD", "AS"]:  # hole first, up AS
            rnd.deal(code)
        rnd.insurance("p", True)  # on a blackjack the offer is even money
        assert rnd.phase is Phase.COMPLETE
        assert paid(rnd)[("p", "main")] == Decimal("20.00")


def test_004_eu_ten_up_blackjack_returns_doubles_and_split_stakes() -> None:
    """004 (EU): "If dealer's first card's value is 10, and the dealer gets Blackjack, your
    Double bet is returned to you"; GAME-FACTS: "with ten up the extra stakes are returned".
    Split 8s, double 8+3 on the first hand: 10 (hand 1) + 10 (double) + 10 (hand 2) staked,
    only the original 10 is lost."""
    rules = preset("majority_speed").with_overrides(EU)
    rnd = table(rules, (1, "a", "10"), (1, "b", "10"))
    for code in ["8S", "TD", "8C"]:
        rnd.deal(code)
    for action, card in (("split", "3H"), ("double", "5C")):
        rnd.vote(1, "a", action)
        rnd.vote(1, "b", action)
        rnd.deal(card)
    rnd.deal("9D")  # hand 2: 8 + 9
    rnd.vote(1, "a", "stand")
    rnd.vote(1, "b", "stand")
    rnd.deal("AS")  # dealer T + A: blackjack found after play
    res = {w.player: w for w in rnd.settle().wagers}
    for player in ("a", "b"):
        assert (res[player].stake, res[player].payout) == (Decimal(30), Decimal(20))


def test_004_ten_card_charlie_wins_unless_the_dealer_has_blackjack() -> None:
    """004: "draw 10 cards without going bust ... your hand automatically wins, except when
    the dealer has Blackjack" (EU: the dealer's second card comes after the players)."""
    rules = preset("majority_speed").with_overrides(EU)
    hits = ["AS", "AH", "AD", "AC", "2D", "2H", "3D", "3C"]  # 2 2 A A A A 2 2 3 3: hard 18
    for second, expected in (("KH", Decimal("20.00")), ("AH", Decimal("0.00"))):
        rnd = table(rules, (1, "a", "10"), (1, "b", "10"))
        for code in ["2C", "TD", "2S"]:
            rnd.deal(code)
        for card in hits:
            rnd.vote(1, "a", "hit")
            rnd.vote(1, "b", "hit")
            rnd.deal(card)
        hand = rnd.boxes[1].hands[0]
        assert len(hand.cards) == 10 and hand.total == 18 and hand.stood
        rnd.deal(second)  # T + K = 20 beats 18, but not a Charlie; T + A is blackjack
        assert paid(rnd)[("a", "main")] == expected


def test_all_players_bust_the_dealer_does_not_draw_on_either_004_seat() -> None:
    """004: "If every player at the table busts ..., the round is over. The dealer does not
    draw additional cards" -- every player at the table: both seats."""
    rnd = table(preset("majority_speed"), (1, "a", "10"), (2, "b", "10"))
    for code in ["TC", "TD", "TH", "6C", "6D", "5H"]:  # 16 and 16 v T + 5: both hit
        rnd.deal(code)
    rnd.deal("9S")  # seat 1: 25
    assert rnd.next_card() == NextCard(CardFor.SEAT_HAND, 2, 0)
    rnd.deal("8S")  # seat 2: 24
    assert rnd.phase is Phase.COMPLETE and len(rnd.dealer_cards) == 2  # T + 5, no draw
    rnd = table(preset("majority_speed"), (1, "a", "10"), (2, "b", "10"))
    for code in ["TC", "TD", "TH", "6C", "9D", "5H"]:  # seat 2 stands on 19
        rnd.deal(code)
    rnd.deal("9S")  # seat 1 busts; seat 2 still live: the dealer draws
    assert rnd.next_card() == NextCard(CardFor.DEALER_DRAW)


def _buster_table(rules: RuleSet, logic: int = LOGIC) -> Round:
    """Seat 1 with a Buster Blackjack bet of 5, seat 2 without; both will bust."""
    rnd = Round(rules, logic=logic)
    rnd.open_betting()
    rnd.place_wager(1, "a", "10", side_bets={"buster_blackjack": "5"}, auto_consent=True)
    rnd.place_wager(2, "b", "10", auto_consent=True)
    rnd.close_betting()
    return rnd


@pytest.mark.parametrize(("draw", "dealer", "buster"), [("8C", 23, "15.00"), ("2C", 17, "0")])
def test_the_dealer_plays_out_for_a_live_buster_bet_when_every_hand_is_bust(
    draw: str, dealer: int, buster: str
) -> None:
    """004's Buster Blackjack "awards you whenever the dealer busts", by the number of her
    cards; GAME-FACTS' 93.866% has her play out. With every hand bust she would not draw
    (the test above), and the bet could not win: while one rides, she plays out (engine
    logic 3). 3 cards bust pays 2 to 1: 5 + 10 back."""
    rnd = _buster_table(preset("majority_speed"))
    for code in ["TC", "TD", "TH", "6C", "6D", "5H", "9S", "8S"]:  # both bust v T + 5
        rnd.deal(code)
    assert not rnd.any_live_hand() and rnd.next_card() == NextCard(CardFor.DEALER_DRAW)
    rnd.deal(draw)
    assert rnd.phase is Phase.COMPLETE and total_and_soft(rnd.dealer_cards)[0] == dealer
    pays = paid(rnd)
    assert pays[("a", "buster_blackjack")] == Decimal(buster)
    assert pays[("a", "main")] == pays[("b", "main")] == Decimal("0")


def test_engine_logic_2_rounds_keep_the_dealer_stopping_with_a_buster_bet() -> None:
    """A round opened under logic 2 (before the rule above) plays and replays as it did."""
    rnd = _buster_table(preset("majority_speed"), logic=2)
    for code in ["TC", "TD", "TH", "6C", "6D", "5H", "9S", "8S"]:
        rnd.deal(code)
    assert rnd.phase is Phase.COMPLETE and len(rnd.dealer_cards) == 2
    assert paid(rnd)[("a", "buster_blackjack")] == Decimal("0")
    assert rnd.events[0] == {"type": "open_betting", "logic": 2}
    replayed = Round.replay(preset("majority_speed"), [dict(e) for e in rnd.events])
    assert replayed.events == rnd.events and len(replayed.dealer_cards) == 2


def test_eu_dealer_takes_her_second_card_and_plays_out_for_a_buster_bet() -> None:
    """EU: with every hand bust the dealer's second card is not dealt, unless something
    still depends on it; a live Buster bet does (logic 3)."""
    rules = preset("majority_speed").with_overrides(EU)
    rnd = _buster_table(rules)
    for code in ["TC", "TD", "TH", "6C", "6D", "9S", "8S"]:  # no hole card: both bust v T
        rnd.deal(code)
    assert rnd.next_card() == NextCard(CardFor.DEALER_HOLE)
    rnd.deal("6H")  # T + 6 = 16: she draws
    assert rnd.next_card() == NextCard(CardFor.DEALER_DRAW)
    rnd.deal("KD")
    assert rnd.phase is Phase.COMPLETE
    assert paid(rnd)[("a", "buster_blackjack")] == Decimal("15.00")
    old = _buster_table(rules, logic=2)
    for code in ["TC", "TD", "TH", "6C", "6D", "9S", "8S"]:
        old.deal(code)
    assert old.phase is Phase.COMPLETE and len(old.dealer_cards) == 1


def test_004_a_vote_that_no_other_action_can_surpass_is_taken_at_once() -> None:
    """004: "The most popular action is immediately taken ... when no action can exceed the
    50% threshold and votes given to any other action cannot surpass the score of the most
    popular action" (GAME-FACTS: "cannot overtake it").

    Eight players on 11 against a 6: hit 3, stand 2, double 2, one vote to come. Hit can
    reach 4 of 8 (50%, not more), stand 3 at best: a tie, never more than hit. Hit is
    taken at once, before the eighth vote (which could only tie it)."""
    players = [f"p{n}" for n in range(1, 9)]
    rnd = table(preset("majority_speed"), *[(1, p, "10") for p in players])
    for code in ["5H", "6C", "6D", "7S"]:
        rnd.deal(code)
    for player, action in zip(
        players[:7], ["hit", "hit", "hit", "stand", "stand", "double", "double"], strict=True
    ):
        rnd.vote(1, player, action)
    assert rnd.boxes[1].hands[0].actions == ["hit (majority vote)"]
    assert rnd.next_card() == NextCard(CardFor.SEAT_HAND, 1, 0)


def _tie_capable_vote(logic: int) -> Round:
    players = [f"p{n}" for n in range(1, 9)]
    rnd = Round(preset("majority_speed"), logic=logic)
    rnd.open_betting()
    for p in players:
        rnd.place_wager(1, p, "10", auto_consent=True)
    rnd.close_betting()
    for code in ["5H", "6C", "6D", "7S"]:  # 11 v 6
        rnd.deal(code)
    for player, action in zip(
        players[:7], ["hit", "hit", "hit", "stand", "stand", "double", "double"], strict=True
    ):
        rnd.vote(1, player, action)
    return rnd


def test_a_round_replays_through_the_logic_it_was_played_with() -> None:
    """A log written by engine logic 1 (before the vote rule above) rebuilds what was
    played: there the eighth vote tied hit 3 - stand 3 and best strategy doubled."""
    old = _tie_capable_vote(logic=1)
    assert old.boxes[1].hands[0].actions == []
    old.vote(1, "p8", "stand")
    assert old.boxes[1].hands[0].actions == ["double (tied vote, best strategy)"]
    events = [dict(e) for e in old.events]
    assert events[0] == {"type": "open_betting", "logic": 1}
    assert Round.replay(preset("majority_speed"), events).boxes[1].hands[0].actions == [
        "double (tied vote, best strategy)"
    ]
    del events[0]["logic"]  # a log from before the engine recorded its logic: logic 1
    assert Round.replay(preset("majority_speed"), events).events == old.events
    new = _tie_capable_vote(logic=2)
    assert Round.from_dict(new.to_dict()).boxes[1].hands[0].actions == ["hit (majority vote)"]
    with pytest.raises(RoundStateError, match=f"unknown engine logic {LOGIC + 1}"):
        Round(preset("majority_speed"), logic=LOGIC + 1)
