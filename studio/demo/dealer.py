"""A simulated dealer: follows the table's dealer prompt, as a person at the table would.

It reads the retained ``dealer/prompt`` over MQTT and acts on the simulated
hardware: shuffles and loads shoes, deals the next card (which the shoe scans and
the camera sees landing in the right zone), and collects cards at round end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from hwsim.camera.sim_camera import landing_zone, lands_face_down, turns_hole_over
from hwsim.table import SimTable
from studio.bus import MessageBus
from studio.bus.client import Subscription
from studio.contract import DealerPrompt, Topics
from studio.errors import StudioError

_LOGGER = logging.getLogger(__name__)

PlaceCard = Callable[[str, str, bool], None]  # code, zone, face down


async def _newest(
    sub: Subscription[DealerPrompt], latest: DealerPrompt | None
) -> DealerPrompt | None:
    """The last of the prompts already received (``latest`` if none is waiting)."""
    while True:
        try:
            # A deadline already passed cancels only a read that has to wait: one waiting
            # in the queue is returned at once.
            async with asyncio.timeout(0):
                latest = (await sub.get()).payload
        except TimeoutError:
            return latest


class DealerBot:
    def __init__(
        self,
        bus: MessageBus,
        table: SimTable,
        *,
        pace: float,
        place_card: PlaceCard | None = None,
        clear_layout: Callable[[], None] | None = None,
        turn_over: Callable[[], None] | None = None,
    ) -> None:
        self.bus = bus
        self.sim = table
        self.pace = pace
        self.place_card = place_card
        self.clear_layout = clear_layout
        self.turn_over = turn_over
        self.cards_dealt = 0
        self.shoes = 0
        self._handled: tuple[Any, ...] | None = None
        # A new shoe is made and loaded in one step here (shuffle, eject into the shoe), but
        # the controller prompts "shuffle", then "load_shoe" once it has seen the count, and
        # only then sees the shoe loaded: that second prompt asks for the shoe already made.
        self._shoe_made = False
        # Where the shoe stood after the dealer's own last draw or load: a card out since
        # was drawn by someone else (the demo's misread or double-pull fault), and the
        # prompt held, sent before that card, may be overtaken by the pause it brings.
        self._shoe_left: tuple[str, int] | None = None

    def _shoe_at(self) -> tuple[str, int]:
        return self.sim.shoe.shoe_id, self.sim.shoe.position

    async def run(self) -> None:
        latest: DealerPrompt | None = None
        async with self.bus.subscribe(Topics(self.sim.id).dealer_prompt, DealerPrompt) as sub:
            while True:
                # asyncio.timeout, not wait_for: on 3.11 wait_for drops a cancellation that
                # lands as a prompt arrives, and the dealer would never stop.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(self.pace, 0.05)):
                        latest = (await sub.get()).payload
                # Only the latest prompt counts, as on the dealer's screen: the prompts that
                # came while the dealer acted or waited are gone by now. Taken one at a time,
                # a "deal" sent just before "Paused: call manager" was dealt after the pause
                # (a demo review: after a double pull the dealer drew three more cards, each
                # an alert, and the camera's sighting of one became a card "not scanned").
                latest = await _newest(sub, latest)
                if latest is None:
                    continue
                key = (latest.round_id, latest.action, json.dumps(latest.target, sort_keys=True))
                if key == self._handled:
                    continue
                self._handled = key
                try:
                    if not await self.act(latest):
                        self._handled = None  # the prompt again, after the pace
                except StudioError as exc:
                    # A device fault the simulator refuses (e.g. count mismatch): the
                    # controller raises the alert; the dealer waits for the next prompt.
                    _LOGGER.info("dealer at %s: %s", self.sim.id, exc)
                    if self.sim.shuffler.can_run() is not None:
                        # No shoe made (shuffler jammed, door open): asked again once it
                        # can run. A manager who resolved the alert before the jam was
                        # cleared left the same prompt, and the table waited on it for good.
                        self._handled = None
                if self.pace:
                    await asyncio.sleep(self.pace)

    async def act(self, prompt: DealerPrompt) -> bool:
        """Do what ``prompt`` asks; False when the dealer looks at the prompt again first."""
        if prompt.action == "deal" and self._shoe_left not in (None, self._shoe_at()):
            # A card left the shoe since the dealer's last draw that the dealer did not
            # deal: the prompt, sent before it, may be overtaken by a pause on its way (a
            # review at --pace 0.2: the dealer drew 3 ms after a misread's alert, "7H drawn
            # while the round is paused"). Look again after the pace, as a dealer would.
            self._shoe_left = self._shoe_at()
            return False
        if self.turn_over is not None and turns_hole_over(prompt):
            self.turn_over()  # the dealer's turn: the hole card face up
        if prompt.action in ("shuffle", "change_shoe", "load_shoe"):
            if self._shoe_made:
                # Made for a shoe prompt already; a second one would be loaded during the
                # round the first opens (an integrity alert). Any other prompt ends this.
                return True
            if self.clear_layout:
                self.clear_layout()
            self.sim.new_shoe()
            self._shoe_left = self._shoe_at()
            self._shoe_made = True
            self.shoes += 1
            return True
        self._shoe_made = False
        if prompt.action == "deal":
            target = prompt.target or {}
            try:
                cards = self.sim.deal()
            finally:
                self._shoe_left = self._shoe_at()
            for card in cards:
                self.cards_dealt += 1
                zone = landing_zone(target) if self.place_card is not None else None
                if self.place_card is not None and zone is not None:
                    self.place_card(card.code, zone, lands_face_down(target))
        elif prompt.action == "collect" and self.clear_layout:
            self.clear_layout()
        return True
