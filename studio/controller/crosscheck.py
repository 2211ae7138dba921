"""Two sources for every card: pair shoe-scanner cards with camera sightings.

Either source may arrive first. A sighting waits up to ``window`` seconds for
its partner; what happens then is a verdict the table controller turns into an
alert or not. A card dealt face down (the dealer's hole card under US rules) shows
the camera its back: its window starts when it is turned over (:meth:`CrossCheck.reveal`),
though a camera that does see it pairs with it before. A shoe card whose window ended
unseen stays known for the round, so that the camera's late sighting of it is that card
(:attr:`Verdict.LATE_MATCH`), not one the shoe never scanned. A card dealt on the camera's own
sighting (a manager accepted a card the shoe did not scan) is confirmed already; the shoe's
read of it arriving within the window after it was dealt, or from table logic 16 at any
time in its round unless the shoe has since read a card drawn before it, is that card
(:meth:`CrossCheck.late_shoe_read`), not a second one. A confirmed card the camera saw leave
its spot (``removed``) and then laid again is that card moved (:meth:`CrossCheck.on_camera_removed`).
From table logic 16 a card corrected is that card as corrected (:meth:`CrossCheck.recode`), and
a card voided stays known for the round: the camera's sighting of it is ``Verdict.VOIDED``.
From table logic 17 (``pairs_waiting``) a face-up card whose window ends unseen in the zone of a
card still face down is settled against a sighting there that waits for the turn (the up card
misread: one mismatch), and a sighting that waited, left unpaired after the turn, is paired
with a card of its zone whose window ended unseen, not taken for one the shoe never scanned.
From table logic 25 the windows stop while the controller is down and start again in full
once its start has checked the devices (:attr:`CrossCheck.restarted`).
Pure: times are passed in, so a replay from the log decides the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    MATCH = "match"
    CAMERA_UNREADABLE = "camera_unreadable"  # same place, camera could not read it: accepted
    MISMATCH = "mismatch"  # same place, different card
    WRONG_BOX = "wrong_box"  # same card, different place
    CAMERA_MISSED = "camera_missed"  # shoe card never seen on the layout
    LATE_MATCH = "late_match"  # seen after its window ended (already a missed scan)
    MOVED = "moved"  # a confirmed card the camera saw leave its spot, laid again in its zone
    VOIDED = "voided"  # a card voided from its round, seen (again) where it was dealt
    SHOE_MISSED = "shoe_missed"  # card on the layout never scanned by the shoe


def zone_of(target: dict[str, Any]) -> str:
    """The layout zone where a card for ``target`` lands (``dealer``, ``seat:N``, ``seat:N:hK``)."""
    if target.get("kind", "").startswith("dealer"):
        return "dealer"
    hand = int(target.get("hand", 0))
    seat = int(target["seat"])
    return f"seat:{seat}" if hand == 0 else f"seat:{seat}:h{hand + 1}"


def zones_match(expected: str, seen: str) -> bool:
    """Equal zones, or the same seat when one side cannot tell split hands apart."""
    if expected == seen:
        return True
    e, s = expected.split(":"), seen.split(":")
    return e[0] == s[0] == "seat" and e[1] == s[1] and (len(e) == 2 or len(s) == 2)


@dataclass
class Sighting:
    source: str  # "shoe" or "camera"
    code: str | None
    zone: str
    at: datetime
    ref: dict[str, Any]  # device and seq, and for shoe cards the card's index in the round
    face_down: bool = False  # a shoe card the camera cannot see until it is turned over
    # A card dealt on the camera's sighting of it in another zone than the one it is dealt
    # to: that sighting. Unless the camera sees it where it is dealt (the dealer moved it),
    # its window ends in a wrong box, not a missed scan: the camera did see it.
    elsewhere: Sighting | None = None
    # A camera sighting that waited for a face-down card of its zone to be turned over (set
    # at the turn): left unpaired after it, it is paired with a card of its zone whose window
    # ended unseen (table logic 17, ``CrossCheck.pairs_waiting``).
    waited: bool = False


@dataclass
class Outcome:
    verdict: Verdict
    shoe: Sighting | None
    camera: Sighting | None


@dataclass
class CrossCheck:
    window: float = 3.0
    shoe_waiting: list[Sighting] = field(default_factory=list)
    camera_waiting: list[Sighting] = field(default_factory=list)
    # Shoe cards whose window ended unseen (each already a missed scan), kept for the round:
    # the camera's late sighting of one is that card, not a second card the shoe never
    # scanned, and must not raise an alert whose "accept" would deal it twice.
    missed: list[Sighting] = field(default_factory=list)
    # Cards dealt on the camera's own sighting (a card the shoe did not scan, accepted by a
    # manager), each at the time it was dealt: the shoe's late read of one is that card.
    accepted: list[Sighting] = field(default_factory=list)
    # From table logic 16 a card dealt on the camera's sighting stays matchable by the shoe's
    # late read for its whole round (a lost event asked for again may come long after the
    # accept), not only for ``window`` seconds; a read is a new card when the same shoe has
    # read, since the accept, a card with a lower seq (see :meth:`late_shoe_read`).
    keeps_accepted: bool = False
    # A shoe card decided as a wrong box or a mismatch is kept in ``missed`` too: the camera
    # seeing it later in its own zone (the dealer moved it there, or the camera read it again
    # and now agrees) is that card, not one the shoe never scanned, whose accept would deal
    # it twice. The table sets it by its logic (5 on; before, such a sighting was a misscan).
    keeps_alerted: bool = True
    # Shoe cards the camera confirmed, each with the sighting that did (``seen``), and those
    # the camera then saw leave their spot (``lifted``, its ``removed``): a card slid or laid
    # again elsewhere (a split's second card to its new hand, a card pushed into line) is
    # reported ``removed`` there and ``placed`` anew. That new sighting is the card moved,
    # not one the shoe never scanned: in its own zone it is confirmed again, in another box
    # it is a wrong box. Only the table's logic 5 on reports removals.
    seen: list[Outcome] = field(default_factory=list)
    lifted: list[Outcome] = field(default_factory=list)
    # A card face down is not compared with the camera until it is turned over (logic 13):
    # no sighting is paired with it, and a sighting in its zone waits for the turn. Before, a
    # camera that saw its face confirmed it at once (`card_confirmed`: a lifted and re-laid up
    # card of the same code confirmed the hole card, telling it), and one that misread it
    # raised a misscan naming the misread code when its window ended.
    hole_waits: bool = False
    # Shoe cards voided from the round (table logic 16), each with its ``index`` None and the
    # one it had as ``voided``: the camera's sighting of one where it was dealt (a camera
    # lagging behind the void of a card it "did not see") is that card, not one the shoe
    # never scanned, whose accept would deal the voided card again. Kept for the round.
    voided: list[Sighting] = field(default_factory=list)
    # From table logic 17 a sighting waiting for the turn (logic 13) is compared with the
    # face-up cards of its zone when their windows end, and once more after the turn. The
    # camera sees the hole card's back, which it does not take for a card: a sighting in the
    # dealer's zone while the hole card lies face down is the up card's. Up to 16 the up card
    # misread (the shoe 6H, the camera 5H) was a misscan, "camera did not see 6H" (no
    # correction offered), and its sighting, left after the turn, "a card the shoe never
    # scanned", whose accept dealt 5H, a card never in the shoe, as the dealer's draw (or, when
    # the hole card's window ended with it, a mismatch pinned on the hole card). Now the up
    # card's window ending is a mismatch naming both reads (the table conceals the camera's
    # while the hole card lies face down: it may be a misread of the hole card), and a
    # sighting that waited and is left unpaired after the turn is the late read of a card of
    # its zone whose window ended (its code: a late match; another: a mismatch).
    pairs_waiting: bool = False
    # From table logic 25 the windows stop while the controller is down: the table asks for
    # no verdict while a start checks the devices, and from the check's end (``restarted``)
    # every window begun before it starts again in full. The camera's sightings sent while
    # the controller was down are lost (it answers no replay); up to 24 the windows ran on
    # through the outage and ended at the start's first timer, before the shoe's tail came:
    # misscans paused the table, and the card dealt meanwhile, the one due, was held as
    # drawn while the round is paused.
    restarted: datetime | None = None

    def _start(self, sighting: Sighting) -> datetime:
        """When the window of ``sighting`` began: its time, or the last restart's check end."""
        if self.restarted is not None and sighting.at < self.restarted:
            return self.restarted
        return sighting.at

    def on_shoe(self, sighting: Sighting) -> Outcome | None:
        if sighting.face_down and self.hole_waits:
            self.shoe_waiting.append(sighting)
            return None
        sure = self._sure_partner(sighting, self.camera_waiting)
        if sure is None:
            self.shoe_waiting.append(sighting)
            return None
        verdict, camera = sure
        self.camera_waiting.remove(camera)
        return self._seen(Outcome(verdict, sighting, camera))

    def on_camera(self, sighting: Sighting) -> Outcome | None:
        partners = [s for s in self.shoe_waiting if not (s.face_down and self.hole_waits)]
        sure = self._sure_partner(sighting, partners)
        if sure is not None:
            verdict, shoe = sure
            self.shoe_waiting.remove(shoe)
            return self._seen(Outcome(verdict, shoe, sighting))
        waits = self._waits_for_turn(sighting)
        # A sighting that waits for the hole card's turn may be that card (its face, or its
        # back unread): not the late read of a card missed there (logic 13), nor, unread, a
        # lifted card laid again (it "confirmed" the up card with the hole card's back).
        late = None if waits else self._sure_partner(sighting, self.missed)
        if late is not None:
            _, shoe = late
            self.missed.remove(shoe)
            return self._seen(Outcome(Verdict.LATE_MATCH, shoe, sighting))
        voided = None if waits else self._voided_one(sighting)
        if voided is not None:
            self.voided.remove(voided)
            return Outcome(Verdict.VOIDED, voided, sighting)
        moved = None if waits and sighting.code is None else self._moved(sighting)
        if moved is not None:
            return moved
        self.camera_waiting.append(sighting)
        return None

    def _voided_one(self, camera: Sighting) -> Sighting | None:
        """The voided card ``camera`` is a sighting of: the same code, where it was dealt."""
        return next(
            (
                v
                for v in self.voided
                if camera.code and v.code == camera.code and zones_match(v.zone, camera.zone)
            ),
            None,
        )

    def _seen(self, outcome: Outcome) -> Outcome:
        self.seen.append(outcome)
        return outcome

    def on_confirmed(self, shoe: Sighting, camera: Sighting) -> None:
        """A card dealt confirmed by a sighting the cross-check did not pair (an accepted one)."""
        self.seen.append(Outcome(Verdict.MATCH, shoe, camera))

    def on_camera_removed(self, sighting: Sighting) -> Outcome | None:
        """The camera saw a card leave its spot (``removed``: the card and zone of its
        ``placed``). A sighting still waiting is withdrawn: that card lies there no more.
        A confirmed card is lifted; if its new ``placed`` came first (the camera's messages
        are not held in order), it is paired now."""
        for waiting in self.camera_waiting:
            if waiting.zone == sighting.zone and waiting.code == sighting.code:
                self.camera_waiting.remove(waiting)
                return None
        for pair in self.seen:
            assert pair.camera is not None
            if pair.camera.zone == sighting.zone and pair.camera.code == sighting.code:
                self.seen.remove(pair)
                self.lifted.append(pair)
                for waiting in self.camera_waiting:
                    moved = self._moved(waiting)
                    if moved is not None:
                        self.camera_waiting.remove(waiting)
                        return moved
                return None
        return None

    def _moved(self, new: Sighting, *, here: bool = True) -> Outcome | None:
        """A card lifted from its spot, laid again: ``new`` is its sighting, if any, in its
        own zone (``here``) or in another box. Laid in another box it is decided only when
        the window of ``new`` ends unpaired: a shoe read of a new card of that code, due
        there, may still come for it."""

        def fits(pair: Outcome) -> bool:
            shoe = pair.shoe
            assert shoe is not None
            if here != zones_match(shoe.zone, new.zone):
                return False
            return new.code == shoe.code if new.code is not None else here

        pair = next((p for p in self.lifted if fits(p)), None)
        if pair is None or pair.shoe is None:
            return None
        self.lifted.remove(pair)
        if here:
            return self._seen(Outcome(Verdict.MOVED, pair.shoe, new))
        self.missed.append(pair.shoe)  # moved back, it is that card
        return Outcome(Verdict.WRONG_BOX, pair.shoe, new)

    @staticmethod
    def _sure_partner(new: Sighting, others: list[Sighting]) -> tuple[Verdict, Sighting] | None:
        # Only a sure pairing is decided at once: the same card in the same place, or a
        # card the camera saw but could not read in that place. Anything else waits for
        # the window to end, because two cards bound for one zone may be seen in either
        # order (the camera reports a card when it has settled, not when it was drawn), and
        # the camera's own re-reading (its audit: ``removed`` then ``placed``) may still fix
        # a misread within it. The round plays on meanwhile: what players decide on a read
        # contradicted later is kept safe by the table refusing a correction under it
        # (table logic 21), not by deciding here sooner (docs/controller.md, step 8).
        for other in others:
            if zones_match(other.zone, new.zone) and other.code == new.code and new.code:
                return Verdict.MATCH, other
        for other in others:
            if zones_match(other.zone, new.zone) and (other.code is None or new.code is None):
                return Verdict.CAMERA_UNREADABLE, other
        return None

    def on_accepted_camera_card(self, sighting: Sighting) -> None:
        """A card was dealt on the camera's sighting (``sighting.at``: when it was dealt;
        ``ref["serial"]``: its serial, if known). Nothing waits for it: the camera saw it."""
        ref = {**sighting.ref, "this_round": True, "read_since": {}}
        self.accepted.append(replace(sighting, ref=ref))

    def on_shoe_read(self, device: str, seq: int) -> None:
        """A shoe read that is no late read of an accepted card (a new card): each card
        accepted before it keeps the lowest seq its shoe read since (logic 16)."""
        for sighting in self.accepted:
            since: dict[str, int] = sighting.ref.setdefault("read_since", {})
            since[device] = min(seq, since.get(device, seq))

    def late_shoe_read(
        self,
        code: str,
        serial: str | None,
        now: datetime,
        *,
        device: str | None = None,
        seq: int | None = None,
    ) -> Sighting | None:
        """The card dealt on the camera's sighting that this shoe read is, if any: the same
        code, the same serial when both carry one, dealt at most ``window`` seconds before
        ``now``. It is taken (one read per card); older ones are forgotten.

        From table logic 16 (``keeps_accepted``) a card of the round in progress is not
        forgotten after its window: the read comes when it comes (a lost event asked for
        again). The rule for another card of that code (eight decks hold eight): cards leave
        the shoe in its order, numbered by its ``seq``, and are dealt in the order drawn. A
        card the shoe read after the accept was dealt after the accepted one, so drawn after
        it: a read whose seq is above that card's was drawn later still, a new card, not the
        accepted one's read. A read with the same serial as the accepted card's is that
        card whatever its seq; with another serial it is never."""
        limit = now - timedelta(seconds=self.window)
        self.accepted = [
            s
            for s in self.accepted
            if s.at >= limit or (self.keeps_accepted and s.ref.get("this_round"))
        ]
        for sighting in self.accepted:
            theirs = sighting.ref.get("serial")
            if sighting.code != code or not (serial is None or theirs is None or theirs == serial):
                continue
            if self.keeps_accepted and not (serial is not None and theirs == serial):
                since = (sighting.ref.get("read_since") or {}).get(device)
                if isinstance(since, int) and isinstance(seq, int) and seq > since:
                    continue  # drawn after a card dealt after it: a new card
            self.accepted.remove(sighting)
            return sighting
        return None

    def undecided(self) -> bool:
        """Is any sighting, of either source, still waiting for its partner or its verdict?"""
        return bool(self.shoe_waiting or self.camera_waiting)

    def _waits_for_turn(self, camera: Sighting) -> bool:
        """A camera sighting in the zone of a card still face down waits for it (logic 13)."""
        return self.hole_waits and any(
            s.face_down and zones_match(s.zone, camera.zone) for s in self.shoe_waiting
        )

    def next_deadline(self) -> datetime | None:
        times = [self._start(s) for s in self.shoe_waiting if not s.face_down] + [
            self._start(c) for c in self.camera_waiting if not self._waits_for_turn(c)
        ]
        return min(times) + timedelta(seconds=self.window) if times else None

    def reveal(self, now: datetime) -> list[Outcome]:
        """The face-down cards were turned over: their windows start ``now``; a sighting
        that waited for one (logic 13) is paired with it now if it is surely that card."""
        # In place: the order of the waiting cards decides the order of their alerts (and
        # so their ids) when several windows end at once; a replay must keep it.
        turned: list[Sighting] = []
        waiting: list[Sighting] = []
        for sighting in self.shoe_waiting:
            if sighting.face_down:
                sighting = replace(sighting, at=now, face_down=False)
                turned.append(sighting)
            waiting.append(sighting)
        self.shoe_waiting = waiting
        out: list[Outcome] = []
        if not self.hole_waits or not turned:
            return out
        # A sighting that waited for the turn gets a window of its own from it: the camera
        # may still be reading the card turned over (a misread of it was alerted at once).
        self.camera_waiting = [
            replace(c, at=now, waited=True)
            if any(zones_match(t.zone, c.zone) for t in turned)
            else c
            for c in self.camera_waiting
        ]
        for camera in list(self.camera_waiting):
            sure = self._sure_partner(camera, turned)
            if sure is not None:
                verdict, shoe = sure
                turned.remove(shoe)
                self.shoe_waiting.remove(shoe)
                self.camera_waiting.remove(camera)
                out.append(self._seen(Outcome(verdict, shoe, camera)))
        return out

    def expire(self, now: datetime) -> list[Outcome]:
        """Decide every sighting whose window has ended: a disagreement or a missed card."""
        limit = now - timedelta(seconds=self.window)
        out: list[Outcome] = []
        for shoe in [s for s in self.shoe_waiting if self._start(s) <= limit and not s.face_down]:
            self.shoe_waiting.remove(shoe)
            # Not against a sighting that waits for the hole card's turn (logic 13): a wrong
            # box with it ("AS was due in seat:1 but landed in dealer") told the hole card.
            # From logic 17 a face-up card of its zone is (a mismatch: the up card misread).
            free = [
                c
                for c in self.camera_waiting
                if not self._waits_for_turn(c)
                or (self.pairs_waiting and zones_match(shoe.zone, c.zone))
            ]
            outcome = self._settle(shoe, free, shoe_side=True)
            if outcome.camera is not None:
                self.camera_waiting.remove(outcome.camera)
            if outcome.verdict is Verdict.CAMERA_MISSED:
                self.missed.append(shoe)
                if shoe.elsewhere is not None:
                    outcome = Outcome(Verdict.WRONG_BOX, shoe, shoe.elsewhere)
            elif self.keeps_alerted:
                self.missed.append(shoe)  # a mismatch or a wrong box
            out.append(outcome)
        # A camera sighting is never settled against a card still face down: pairing them
        # (a mismatch "shoe read ..." or a wrong box "... was due in dealer") would publish
        # the hole card. That card is compared once it is turned over.
        for camera in [
            c
            for c in self.camera_waiting
            if self._start(c) <= limit and not self._waits_for_turn(c)
        ]:
            self.camera_waiting.remove(camera)
            face_up = [s for s in self.shoe_waiting if not s.face_down]
            outcome = self._settle(camera, face_up, shoe_side=False)
            if outcome.verdict is Verdict.SHOE_MISSED:
                outcome = self._moved(camera, here=False) or self._missed_here(camera) or outcome
            elif outcome.shoe is not None:
                self.shoe_waiting.remove(outcome.shoe)
                if self.keeps_alerted:
                    self.missed.append(outcome.shoe)  # a mismatch or a wrong box
            out.append(outcome)
        return out

    def _missed_here(self, camera: Sighting) -> Outcome | None:
        """A sighting that waited for the turn (logic 17), left unpaired after it: the late
        read of a card of its zone whose window ended (kept in ``missed``), not a card the
        shoe never scanned. Its code: a late match; another: a mismatch (the card stays kept,
        as any card alerted as a mismatch). An unread one confirms no card (it may be a back).
        The code of a card of its zone the camera confirmed already stays a card the shoe
        never scanned (a manager looks): the same card seen again and a second card of that
        code (a multi-deck shoe) look alike here, and taking it for the first hid the second
        (a review; the sightings carry no serial to tell them apart)."""
        if not (self.pairs_waiting and camera.waited and camera.code):
            return None
        here = [s for s in self.missed if zones_match(s.zone, camera.zone)]
        same = next((s for s in here if s.code == camera.code), None)
        if same is not None:
            self.missed.remove(same)
            return self._seen(Outcome(Verdict.LATE_MATCH, same, camera))
        return Outcome(Verdict.MISMATCH, here[0], camera) if here else None

    @staticmethod
    def _settle(item: Sighting, others: list[Sighting], *, shoe_side: bool) -> Outcome:
        def pair(verdict: Verdict, other: Sighting) -> Outcome:
            others.remove(other)
            return Outcome(verdict, item, other) if shoe_side else Outcome(verdict, other, item)

        for other in others:
            if zones_match(other.zone, item.zone):
                return pair(Verdict.MISMATCH, other)
        for other in others:
            if item.code is not None and other.code == item.code:
                return pair(Verdict.WRONG_BOX, other)
        if shoe_side:
            return Outcome(Verdict.CAMERA_MISSED, item, None)
        return Outcome(Verdict.SHOE_MISSED, None, item)

    def forget_shoe(self, ref_index: int, *, keep_voided: bool = False) -> None:
        """Drop a waiting shoe card (it was voided or the round was cancelled).
        ``keep_voided`` (table logic 16): the camera's later sighting of it is that card
        (:attr:`voided`); before, a sighting of it was a card the shoe never scanned."""
        if keep_voided:
            pairs = [p.shoe for p in self.seen + self.lifted if p.shoe is not None]
            mine = self.shoe_waiting + self.missed + pairs
            card = next((s for s in mine if s.ref.get("index") == ref_index), None)
            if card is not None:
                ref = {**card.ref, "index": None, "voided": ref_index}
                self.voided.append(replace(card, ref=ref, face_down=False, elsewhere=None))
        self.shoe_waiting = [s for s in self.shoe_waiting if s.ref.get("index") != ref_index]
        self.missed = [s for s in self.missed if s.ref.get("index") != ref_index]
        self.seen = [p for p in self.seen if p.shoe is None or p.shoe.ref.get("index") != ref_index]
        self.lifted = [
            p for p in self.lifted if p.shoe is None or p.shoe.ref.get("index") != ref_index
        ]

    def recode(self, ref_index: int, code: str) -> list[Outcome]:
        """A dealt card was corrected to ``code`` (table logic 16): its kept sighting takes it,
        so that the camera's sighting of the card as corrected is that card (a late match),
        not one the shoe never scanned. A camera sighting waiting now is paired at once."""
        pairs = [p.shoe for p in self.seen + self.lifted if p.shoe is not None]
        for sighting in self.shoe_waiting + self.missed + pairs:
            if sighting.ref.get("index") == ref_index:
                sighting.code = code
        out: list[Outcome] = []
        for camera in list(self.camera_waiting):
            if self._waits_for_turn(camera):
                continue
            late = self._sure_partner(camera, [s for s in self.missed if s.code == code])
            if late is not None and camera.code == code:
                _, shoe = late
                self.missed.remove(shoe)
                self.camera_waiting.remove(camera)
                out.append(self._seen(Outcome(Verdict.LATE_MATCH, shoe, camera)))
        return out

    def renumber(self, numbers: dict[int, int]) -> None:
        """The round's cards were numbered anew (one was voided): ``numbers`` old -> new."""
        pairs = [p.shoe for p in self.seen + self.lifted if p.shoe is not None]
        every = {id(s): s for s in self.shoe_waiting + self.missed + pairs}  # each once
        for sighting in every.values():
            index = sighting.ref.get("index")
            if isinstance(index, int) and index in numbers:
                sighting.ref = {**sighting.ref, "index": numbers[index]}

    def clear(self, *, keep_accepted: bool = False) -> None:
        """Forget the round's sightings. ``keep_accepted``: not the cards dealt on the
        camera's sighting, whose shoe read may still come within the window after the round
        (they are forgotten when a shoe is loaded: :meth:`forget_accepted`)."""
        self.shoe_waiting.clear()
        self.camera_waiting.clear()
        self.missed.clear()
        self.seen.clear()
        self.lifted.clear()
        self.voided.clear()
        if not keep_accepted:
            self.accepted.clear()
        # Those of the round that ended are the late read's for their window only.
        self.accepted = [replace(s, ref={**s.ref, "this_round": False}) for s in self.accepted]

    def forget_accepted(self) -> None:
        """A shoe was loaded: no read from now on is the late read of an earlier shoe's card
        (a shoe's events are taken in its order, so every read of the old shoe came first)."""
        self.accepted.clear()
