"""More round rules: side bets in play, H17, even money, bet-behind splits, Charlie,
the dealer not drawing, EU second card, withdrawing a bet."""

from __future__ import annotations

import pytest

from studio.rules.errors import IllegalActionError, WagerError
from studio.rules.round import CardFor, NextCard, Phase, Round
from studio.rules.ruleset import RuleSet, preset

EU = {"dealer": {"hole_card": "eu", "peek": "none"}}


def start(rules: RuleSet, *wagers: tuple[int, str, str, dict[str, str]]) -> Round:
    rnd = Round(rules)
    rnd.open_betting()
    for seat, player, stake, sides in wagers:
        rnd.place_wager(seat, player, stake, sides)
    rnd.close_betting()
    return rnd


def lines(rnd: Round) -> dict[tuple[str, str], tuple[str, str]]:
    out = {}
    for w in rnd.settle().wagers:
        for line in w.lines:
            out[(w.player, line.bet)] = (f"{line.payout:f}", line.reason)
    return out


def test_all_majority_side_bets_in_one_round() -> None:
    sides = {
        "21+3": "1.00",
        "players_pair": "1.00",
        "dealers_pair": "1.00",
        "buster_blackjack": "1.00",
        "lucky_lucky": "1.00",
    }
    rnd = start(preset("majority_speed"), (1, "solo", "10.00", sides))
    for code in ["7H", "7D", "7H", "7S"]:  # player 7H 7H; dealer up 7D, hole 7S
        rnd.deal(code)
    assert rnd.boxes[1].hands[0].actions == ["split (best strategy)"]  # 7,7 v 7: split
    for code in ["TC", "TD", "8C"]:  # 17 and 17 stand; dealer 14 + 8 = 22
        rnd.deal(code)
    assert rnd.phase is Phase.COMPLETE
    got = lines(rnd)
    assert got[("solo", "21+3")][0] == "31.00" and "three of a kind" in got[("solo", "21+3")][1]
    assert got[("solo", "players_pair")][0] == "26.00"
    assert "perfect pair" in got[("solo", "players_pair")][1]
    assert got[("solo", "dealers_pair")][0] == "7.00"
    assert "mixed pair" in got[("solo", "dealers_pair")][1]
    assert got[("solo", "lucky_lucky")][0] == "51.00"
    assert got[("solo", "buster_blackjack")][0] == "3.00"
    assert "dealer busts with 3 cards" in got[("solo", "buster_blackjack")][1]
    # no consent to automatic split/double: the wager follows the right-hand (first) hand only
    assert got[("solo", "hand 1")][0] == "20.00" and ("solo", "hand 2") not in got


def test_h17_dealer_hits_soft_17_and_s17_stands() -> None:
    rnd = start(preset("classic6"), (1, "p", "10", {}))
    for code in ["TC", "6D", "9C", "AS"]:  # classic6: hole 6D first, up AS: soft 17
        rnd.deal(code)
    rnd.timeout()  # insurance round
    rnd.act(1, "stand", player="p")
    assert rnd.next_card() == NextCard(CardFor.DEALER_DRAW)
    rnd = start(preset("clubhouse"), (1, "p", "10", {}))
    for code in ["TC", "AS", "9C", "6D"]:
        rnd.deal(code)
    rnd.timeout()
    rnd.act(1, "stand", player="p")
    assert rnd.phase is Phase.COMPLETE


def test_even_money_declined_by_timeout_pays_3_to_2() -> None:
    rnd = start(preset("classic6"), (1, "p", "10", {}))
    for code in ["AC", "7D", "KC", "AS"]:
        rnd.deal(code)
    decision = rnd.pending_decision()
    assert decision is not None and decision.insurance_players == ((1, "p"),)
    assert rnd.is_even_money_offer(rnd.boxes[1].wagers[0])
    rnd.timeout()
    assert rnd.phase is Phase.COMPLETE  # soft 18 stands even under H17
    assert lines(rnd)[("p", "main")] == ("25.00", "blackjack pays 3:2")


def test_bet_behind_split_first_hand_or_follow() -> None:
    rnd = Round(preset("clubhouse"))
    rnd.open_betting()
    rnd.place_wager(2, "seated", "10")
    rnd.place_wager(2, "first", "4", behind=True, behind_split="first_hand")
    rnd.place_wager(2, "all", "6", behind=True, behind_split="follow")
    rnd.close_betting()
    for code in ["8S", "6D", "8C", "TC"]:
        rnd.deal(code)
    rnd.act(2, "split", player="seated")
    for code in ["TD", "TH"]:  # 18 and 18 (stands needed)
        rnd.deal(code)
        rnd.act(2, "stand", player="seated")
    rnd.deal("9D")  # dealer 25
    res = {w.player: w for w in rnd.settle().wagers}
    assert (res["first"].stake, res["first"].payout) == (4, 8)
    assert (res["all"].stake, res["all"].payout) == (12, 24)
    assert (res["seated"].stake, res["seated"].payout) == (20, 40)


def test_five_card_charlie_override_and_no_draw_when_all_surrendered() -> None:
    rules = preset("clubhouse").with_overrides({"charlie_cards": 5, "surrender": "late"})
    rnd = start(rules, (1, "p", "10", {}))
    for code in ["2C", "TD", "3C", "9D", "2D", "2H", "3H"]:  # 2 3 2 2 3 = 12, five cards
        rnd.deal(code)
        if rnd.pending_decision() is not None:
            rnd.act(1, "hit", player="p")
    assert rnd.boxes[1].hands[0].stood and len(rnd.boxes[1].hands[0].cards) == 5
    assert lines(rnd)[("p", "main")][1] == "5-card Charlie (12) wins"
    rnd = start(rules, (1, "p", "10", {}))
    for code in ["TC", "TD", "6C", "6D"]:
        rnd.deal(code)
    rnd.act(1, "surrender", player="p")
    assert rnd.phase is Phase.COMPLETE and len(rnd.dealer_cards) == 2
    assert lines(rnd)[("p", "main")][0] == "5.00"


def test_eu_second_card_only_when_something_depends_on_it() -> None:
    rules = preset("majority_speed").with_overrides(EU)
    rnd = start(rules, (1, "p", "10", {}))
    for code in ["TC", "TD", "6C", "9S"]:  # 16 v T: best strategy hits, 9 -> 25
        rnd.deal(code)
    assert rnd.phase is Phase.COMPLETE and len(rnd.dealer_cards) == 1
    rnd = start(rules, (1, "p", "10", {"dealers_pair": "1"}))
    for code in ["TC", "TD", "6C", "9S"]:
        rnd.deal(code)
    assert rnd.next_card() == NextCard(CardFor.DEALER_HOLE)
    rnd.deal("TH")
    assert rnd.phase is Phase.COMPLETE
    assert lines(rnd)[("p", "dealers_pair")][0] == "13.00"  # TD TH: coloured pair, 12:1


def test_withdraw_and_seat_limits() -> None:
    rnd = Round(preset("clubhouse"))
    rnd.open_betting()
    rnd.place_wager(1, "p", "10")
    with pytest.raises(WagerError, match="seat 1 is taken"):
        rnd.place_wager(1, "q", "10")
    rnd.withdraw(1, "p")
    rnd.place_wager(1, "q", "10")
    with pytest.raises(WagerError, match="no bet"):
        rnd.withdraw(1, "p")
    rnd.close_betting()
    assert rnd.playing_seats == [1]


def test_early_surrender_and_insurance_are_alternatives() -> None:
    rnd = Round(preset("clubhouse"))
    rnd.open_betting()
    rnd.place_wager(1, "p", "10")
    rnd.place_wager(1, "b", "10", behind=True)
    rnd.place_wager(2, "q", "10")
    rnd.close_betting()
    for code in ["TC", "9C", "AS", "6D", "7C", "8H"]:
        rnd.deal(code)
    rnd.early_surrender(1, True, player="p")
    decision = rnd.pending_decision()
    assert decision is not None
    assert decision.insurance_players == ((1, "b"), (2, "q"))  # the behind player still chooses
    rnd.insurance("q", True)
    with pytest.raises(IllegalActionError, match="alternatives"):
        rnd.early_surrender(2, True, player="q")


def test_early_surrender_keeps_half_even_against_a_dealer_blackjack() -> None:
    rnd = start(preset("clubhouse"), (1, "p", "10", {}), (2, "q", "10", {}))
    for code in ["TC", "9C", "AS", "6D", "9D", "KH"]:  # dealer AS KH: blackjack
        rnd.deal(code)
    rnd.early_surrender(1, True, player="p")
    rnd.timeout()  # q: no insurance, no surrender
    assert rnd.phase is Phase.COMPLETE  # the peek ends the round
    got = lines(rnd)
    assert got[("p", "main")] == ("5.00", "early surrender against an ace: half the stake back")
    assert got[("q", "main")] == ("0.00", "18 against dealer blackjack")


def test_a_split_ace_dealt_another_ace_may_only_stand_or_split_again() -> None:
    rules = RuleSet.model_validate(
        {**preset("classic6").model_dump(), "split": {"max_hands": 4, "resplit_aces": True}}
    )
    assert rules.split.aces_one_card
    rnd = start(rules, (1, "p1", "10.00", {}))
    for code in ["AS", "6H", "AD", "9C"]:  # player A,A; dealer 6 up, 9 in the hole
        rnd.deal(code)
    rnd.act(1, "split", player="p1")
    rnd.deal("AH")  # the first split ace draws an ace: it may be split again, not hit
    assert rnd.legal_actions(1) == ["stand", "split"]
    with pytest.raises(IllegalActionError):
        rnd.act(1, "hit", player="p1")
    rnd.act(1, "stand", player="p1")
    rnd.deal("7D")  # the second split ace takes its one card and is done
    hands = rnd.boxes[1].hands
    assert [[c.code for c in h.cards] for h in hands] == [["AS", "AH"], ["AD", "7D"]]
    assert rnd.phase is not Phase.PLAYERS


def test_best_strategy_splits_a_split_hand_again_up_to_max_hands() -> None:
    rules = preset("majority_speed").with_overrides({"split": {"max_hands": 3}})
    rnd = start(rules, (1, "solo", "10.00", {}))  # one player: Best Strategy
    for code in ["8H", "6D", "8C", "9S"]:  # player 8,8; dealer 6 up, 9 in the hole
        rnd.deal(code)
    rnd.deal("8D")  # the first split hand draws another 8: split again (three hands)
    hands = rnd.boxes[1].hands
    assert hands[0].actions == ["split (best strategy)", "split (best strategy)"]
    assert [[c.code for c in h.cards] for h in hands] == [["8H"], ["8D"], ["8C"]]
    rnd.deal("8S")  # another 8, but three hands is the limit: 16 v 6 stands
    assert rnd.boxes[1].hands[0].actions[-1] == "stand (best strategy)"
    assert [[c.code for c in h.cards] for h in rnd.boxes[1].hands] == [
        ["8H", "8S"],
        ["8D"],
        ["8C"],
    ]
