"""Card-shoe scanner driver: cards on ``shoe/cards``, everything else on ``shoe/events``.

A protocol whose card frames name no shoe (ACME-STX, ``Codec.cards_name_shoe`` false)
gets each card stamped here with the shoe of the last load published before it, in the
device's order (a card held behind a lost load frame takes the load once it is fetched).
That shoe id is saved with the driver's state, so a driver restarted mid-shoe goes on
stamping it instead of ``unknown``, which the controller does not check.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from drivers.codecs import Event
from drivers.codecs.sdl1_shoe import CardDrawn, ShoeEmpty, ShoeLoaded
from drivers.device import DeviceDriver, Publication
from studio.contract import UNKNOWN_SHOE, ShoeCard


class ShoeDriver(DeviceDriver):
    kind: ClassVar[str] = "shoe"

    # The shoe loaded, as the last load published said (None: not seen, or emptied since),
    # and the bus seq of the event that said so. Used only when card frames name no shoe.
    # One attribute: the state is saved from another thread, which must never see a new
    # shoe with the old seq.
    _loaded: tuple[str | None, int] = (None, 0)

    @property
    def loaded_shoe(self) -> str | None:
        return self._loaded[0]

    def publication(self, event: Event, seq: int, ts: datetime) -> Publication:
        if isinstance(event, CardDrawn):
            shoe = event.shoe
            if not self.codec.cards_name_shoe:
                shoe = self.loaded_shoe or UNKNOWN_SHOE
            return Publication(
                self.topics.shoe_cards,
                ShoeCard(
                    device=self.device_id,
                    seq=seq,
                    ts=ts,
                    card=event.card.code,
                    shoe=shoe,
                    serial=event.serial,
                ),
            )
        # shoe_loaded, misread, double_pull, shoe_empty, jam(_cleared), tamper(_cleared)
        return self._device_event(self.topics.shoe_events, event, seq, ts)

    def follow(self, event: Event, seq: int) -> None:
        # Older than the load or empty that set the shoe: the first contact's reference,
        # fetched after newer events went out live, must not take the shoe back.
        if self.codec.cards_name_shoe or seq < self._loaded[1]:
            return
        if isinstance(event, ShoeLoaded):  # a new shoe, replacing any other
            self._loaded = (event.shoe, seq)
        elif isinstance(event, ShoeEmpty):  # its cards are out: the next shoe needs a load
            self._loaded = (None, seq)

    def device_restarted(self) -> str | None:
        # A reset (a power cycle, a reboot) may have come with a new shoe loaded while the
        # driver or the link was away. Its load frame is fetched with the new numbering if
        # the device still has it; but none fetched does not mean the same shoe (the buffer
        # may no longer hold it, and ACME-STX cannot be asked which shoe it holds), so the
        # cards are 'unknown' until the next load rather than claimed for the old shoe.
        shoe = self.loaded_shoe
        self._loaded = (None, self._loaded[1])
        if shoe is None:
            return None
        return (
            f"shoe {shoe!r} no longer taken as loaded: cards '{UNKNOWN_SHOE}' until the next load"
        )

    def state_fields(self) -> dict[str, Any]:
        if self.codec.cards_name_shoe:
            return {}
        shoe, since = self._loaded
        return {"shoe": shoe, "shoe_seq": since}

    def restore_state_fields(self, state: dict[str, Any], resume_after: int) -> None:
        if self.codec.cards_name_shoe:
            return
        # Absent in a state file saved before the shoe was (or by an SDL/1 driver): unknown.
        shoe, since = state.get("shoe"), state.get("shoe_seq")
        if not isinstance(shoe, str) or not shoe or type(since) is not int:
            return
        if since > resume_after:
            # The load is fetched again (not acknowledged before the stop), and the cards
            # before it in the device's order belong to the shoe before, which is not saved.
            return
        self._loaded = (shoe, since)
