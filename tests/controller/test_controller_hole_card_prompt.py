"""A US table's dealer is told to turn the hole card over when the round waits for it.

A review of the dealer's prompts: when the dealer's turn began without a draw (the dealer
stands, every hand bust, a dealer blackjack found by the peek) the prompt said "Wait: camera
confirming the cards", while the camera can confirm the hole card only face up (its window
runs from the turn; left down, it ends in a missed scan that pauses the table). The demo's
simulated dealer got past it only because it turned the card at any wait.
"""

from __future__ import annotations

from test_controller_table import Driver, start_round

TURN = "Turn the dealer's hole card face up"


def dealt(d: Driver, *cards: tuple[str, str]) -> None:
    """Each card read by the shoe and seen by the camera where it lies."""
    for code, zone in cards:
        d.card(code)
        d.camera(code, zone)


def us_round(hole: str, up: str = "7C", seat: tuple[str, str] = ("TH", "9D")) -> Driver:
    """Clubhouse (US hole card, dealt second): seat 1's two cards and the up card seen, the
    hole card dealt face down (the camera sees its back: nothing)."""
    d = Driver()
    start_round(d, 1)
    dealt(d, (seat[0], "seat:1"), (up, "dealer"), (seat[1], "seat:1"))
    d.card(hole)
    return d


def test_a_dealer_who_stands_is_told_to_turn_the_hole_card_not_to_wait() -> None:
    d = us_round("KS")  # 7 + K = 17: the dealer stands
    assert d.table.prompt().action == "wait_decisions"  # face down while the player decides
    d.decide(1, "stand", "c1")
    prompt = d.table.prompt()
    assert (prompt.action, prompt.text, prompt.target) == ("reveal", TURN, None)
    d.camera("KS", "dealer")  # turned over: the camera confirms it, the round settles
    assert d.table.phase == "settled" and d.table.prompt().text == "Collect the cards"
    assert not d.alerts


def test_every_hand_bust_asks_for_the_hole_card_too() -> None:
    # Seed 000: all players bust, the dealer deals no card and opens the face-down card.
    d = us_round("5S", seat=("TH", "6D"))
    d.decide(1, "hit", "c1")
    dealt(d, ("KC", "seat:1"))  # 26: bust
    assert d.table.prompt().action == "reveal"


def test_a_dealer_blackjack_found_by_the_peek_asks_for_the_hole_card() -> None:
    d = us_round("AS", up="TC")  # clubhouse peeks under a ten: blackjack, the round is over
    prompt = d.table.prompt()
    assert (prompt.action, prompt.text) == ("reveal", TURN)


def test_a_dealer_who_draws_turns_the_hole_card_first() -> None:
    d = us_round("5S")  # 12: the dealer draws
    d.decide(1, "stand", "c1")
    first = d.table.prompt()
    assert first.action == "deal" and first.target is not None
    assert first.target["kind"] == "dealer_draw"
    assert first.text == "Turn the dealer's hole card face up, then draw"
    d.camera("5S", "dealer")
    then = d.table.prompt()
    # The same card asked for (a dealer keyed on the target deals it once), now only drawn.
    assert then.text == "Dealer draws" and then.target == first.target


def test_only_a_wait_for_the_camera_once_the_hole_card_is_seen() -> None:
    d = us_round("5S")
    d.decide(1, "stand", "c1")
    d.camera("5S", "dealer")
    d.card("KD")  # 22: the dealer busts; the camera has not seen the draw yet
    assert d.table.prompt().action == "wait_camera"
