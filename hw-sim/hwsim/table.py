"""Simulated tables: shoe + shuffler + cut-card sensor driven by one seeded multi-deck shoe.

This is the Python API for tests, the demo and the round controller::

    async with Simulator(tables=2, seed=7, base_dir=Path("var/hwsim")) as sim:
        config = sim.studio_config(broker_url)      # what the drivers should open
        table = sim.table("t1")
        table.new_shoe()                           # shuffler: count + census; shoe: shoe id
        cards = table.deal()                       # next card (list: a double pull gives two)
        table.deal(fault="misread")
        table.fault("shoe", "unplug"); await table.replug("shoe")
        table.trigger_cut()
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import time
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from hwsim.cutcard import SimCutCard
from hwsim.device import SimDevice
from hwsim.framing import MAX_NUMBER, check_field, check_time
from hwsim.shoe import SimShoe
from hwsim.shuffler import SimShuffler
from studio.cards import Card, full_deck
from studio.config.models import BrokerSettings, DeviceSettings, StudioConfig, TableSettings
from studio.errors import DeviceError, VisionError

if TYPE_CHECKING:  # OpenCV and the recogniser load only for a table with a camera
    from hwsim.camera.sim_camera import SimCamera

DEFAULT_SKEW_MS = 60_000  # a clock_skew fault without ms: a minute ahead

# Faults every device accepts (see docs/devices.md).
LINE_FAULTS = (
    "unplug",
    "replug",
    "power_cycle",
    "garbage",
    "garble_next",
    "reorder_next",
    "slow",
    "fast",
    "heartbeat_stop",
    "heartbeat_start",
    "mute",
    "unmute",
    "clock_skew",
)
DEVICE_FAULTS: dict[str, tuple[str, ...]] = {
    "shoe": ("misread", "double_pull", "wrong_order", "jam", "jam_clear", "tamper", "tamper_clear"),
    "shuffler": (
        "missing_card",
        "extra_card",
        "foreign_card",
        "jam",
        "jam_clear",
        "door_open",
        "door_close",
    ),
    "cutcard": ("sensor_fault", "sensor_ok"),
}
# Every table's devices: kind -> device id.
DEVICE_IDS = {"shoe": "shoe-1", "shuffler": "shuffler-1", "cutcard": "cutcard-1"}


def wire_id(table_id: str, device_id: str) -> str:
    """A simulated device's serial number, the id its frames carry: unique across tables
    (until 2026-12-03 every simulated shoe said ``shoe-1``, so a driver could not tell
    table A's shoe from table B's on a renumbered port). An SDL/1 id has at most 32
    characters: a longer one is ``SIM-`` and a digest of both ids (until 2026-12-05 a
    table id of 18 characters or more gave frames the driver refused as malformed)."""
    plain = f"SIM-{table_id}-{device_id}"
    if len(plain) <= WIRE_ID_MAX:
        return plain
    return f"SIM-{hashlib.sha256(f'{table_id}/{device_id}'.encode()).hexdigest()[:24]}"


WIRE_ID_MAX = 32  # SDL/1's device id (docs/devices.md, section 1)


# The parameters a fault takes (any other is refused by scenario validation).
FAULT_PARAMS: dict[str, dict[str, type]] = {
    "garbage": {"size": int, "data": str},
    "garble_next": {"count": int},
    "slow": {"chunk": int, "delay": float},
    "clock_skew": {"ms": int},
    "sensor_fault": {"detail": str},
}


def check_fault(device: str, fault: str, params: dict[str, Any]) -> None:
    """ValueError unless ``device`` (kind or id) takes ``fault`` with these ``params``."""
    kind = next((k for k, i in DEVICE_IDS.items() if device in (k, i)), None)
    if kind is None:
        known = ", ".join(f"{k} ({i})" for k, i in DEVICE_IDS.items())
        raise ValueError(f"no device {device!r}; a table has {known}")
    faults = (*LINE_FAULTS, *DEVICE_FAULTS[kind])
    if fault not in faults:
        raise ValueError(f"unknown {kind} fault {fault!r}; known: {', '.join(faults)}")
    allowed = FAULT_PARAMS.get(fault, {})
    for name, value in params.items():
        wanted = allowed.get(name)
        if wanted is None:
            takes = ", ".join(allowed) or "no parameters"
            raise ValueError(f"fault {fault!r} takes {takes}; not {name!r}")
        if wanted is str:
            ok = isinstance(value, str)
        elif wanted is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok:
            raise ValueError(f"{fault} {name} must be {wanted.__name__}, not {value!r}")
        if name in ("size", "count", "chunk") and value < 1:
            raise ValueError(f"{fault} {name} must be at least 1, not {value!r}")
        if name == "delay" and value < 0:
            raise ValueError(f"{fault} {name} must not be negative, not {value!r}")
        if name == "detail":
            check_field(value)
        if name == "data":
            value.encode("latin-1")  # UnicodeEncodeError is a ValueError
    if fault == "clock_skew":
        check_skew(params.get("ms", DEFAULT_SKEW_MS))


def check_skew(ms: int) -> None:
    """ValueError unless a device clock ``ms`` off the host's stamps frames SDL/1 allows
    (times of 1 to 15 digits): before, ``ms=10**16`` put 17 digits in every frame, and
    a negative time a sign."""
    now = int(time.time() * 1000)
    try:
        check_time(now + ms)
    except ValueError as exc:
        raise ValueError(
            f"clock_skew ms {ms} would stamp frames with a time of {now + ms} ms, which SDL/1 "
            f"does not allow (0 to {MAX_NUMBER}, ms since 1970): give ms from {-now} to "
            f"{MAX_NUMBER - now}"
        ) from exc


class SimTable:
    def __init__(
        self,
        table_id: str,
        *,
        seed: int = 0,
        decks: int = 8,
        penetration: float | None = 0.75,
        base_dir: Path = Path("var/hwsim"),
        tcp_ports: dict[str, int] | None = None,
        pty: bool = True,
        heartbeat_interval: float = 0.5,
        barcoded: bool = False,
        record_write_times: bool = False,
    ) -> None:
        self.id = table_id
        self.decks = decks
        self.penetration = penetration
        self.seed = seed
        self.rng = random.Random(seed)
        self.shoes_loaded = 0
        self.cut_index: int | None = None
        tcp_ports = tcp_ports or {}
        common: dict[str, Any] = {
            "heartbeat_interval": heartbeat_interval,
            "seed": seed,
            "record_write_times": record_write_times,
        }
        folder = Path(base_dir) / table_id

        def link(name: str) -> Path | None:
            return folder / name if pty else None

        shoe, shuffler, cutcard = DEVICE_IDS["shoe"], DEVICE_IDS["shuffler"], DEVICE_IDS["cutcard"]
        self.shoe = SimShoe(
            shoe,
            link(shoe),
            tcp_port=tcp_ports.get("shoe"),
            barcoded=barcoded,
            wire_id=wire_id(table_id, shoe),
            **common,
        )
        self.shuffler = SimShuffler(
            shuffler,
            link(shuffler),
            tcp_port=tcp_ports.get("shuffler"),
            rng=self.rng,
            wire_id=wire_id(table_id, shuffler),
            **common,
        )
        self.cutcard = SimCutCard(
            cutcard,
            link(cutcard),
            tcp_port=tcp_ports.get("cutcard"),
            wire_id=wire_id(table_id, cutcard),
            **common,
        )
        self.shuffler.on_eject = self._load_shoe
        # The overhead camera (``hwsim run --camera``): dealt cards land on its layout.
        self.camera: SimCamera | None = None

    @property
    def devices(self) -> dict[str, SimDevice]:
        return {"shoe": self.shoe, "shuffler": self.shuffler, "cutcard": self.cutcard}

    def device(self, name: str) -> SimDevice:
        """By kind (``shoe``) or by device id (``shoe-1``)."""
        for kind, device in self.devices.items():
            if name in (kind, device.device_id):
                return device
        raise DeviceError(f"table {self.id} has no device {name!r}")

    async def start(self) -> None:
        for device in self.devices.values():
            await device.start()

    async def stop(self) -> None:
        for device in self.devices.values():
            await device.stop()

    # -- the dealing flow ------------------------------------------------------------
    def new_shoe(self) -> str:
        """Fresh decks into the shuffler, shuffle (count + census), eject into the shoe.

        DeviceError, and nothing shuffled, while the shuffler cannot run (jammed, door open),
        as its SHUFFLE and EJECT commands are refused (``NAK E06``); until 2026-12-06 it made a
        new shoe all the same."""
        why = self.shuffler.can_run()
        if why is not None:
            raise DeviceError(f"{self.id}: {self.shuffler.device_id} {why}; no new shoe")
        if self.camera is not None:
            self.camera.clear()  # the cards on the table go back before a shuffle
        cards = [card for _ in range(self.decks) for card in full_deck()]
        # A deck rejected by a bad count leaves the table: the new shoe is fresh decks only.
        self.shuffler.loaded.clear()
        self.shuffler.put(cards)
        if not self.shuffler.shuffle():
            raise DeviceError(f"{self.id}: shuffler count mismatch; shoe not loaded")
        self.shuffler.eject()
        return self.shoe.shoe_id

    def _load_shoe(self, cards: list[Card]) -> None:
        self.shoes_loaded += 1
        shoe_id = f"{self.id}-S{self.shoes_loaded:04d}"
        self.shoe.load(shoe_id, cards, max(1, len(cards) // 52))
        # No penetration: a shoe without a cut card (one reshuffled after every round).
        self.cut_index = None if self.penetration is None else int(len(cards) * self.penetration)
        if self.cutcard.cut_out:
            self.cutcard.clear()

    def deal(self, fault: str | None = None) -> list[Card]:
        """Deal the next card (``fault``: misread, double_pull or wrong_order)."""
        cards, _landed = self.deal_onto_layout(fault)
        return cards

    def deal_onto_layout(
        self, fault: str | None = None, zone: str | None = None
    ) -> tuple[list[Card], list[dict[str, Any]]]:
        """Deal the next card and put it on the camera's layout (:mod:`hwsim.camera.sim_camera`).

        ``zone``: where it lands, instead of where the dealer prompt asks; needs a camera.
        Returns the cards and where each landed (nothing without a camera).
        """
        if zone is not None:
            if self.camera is None:
                raise DeviceError(f"table {self.id} has no camera (hwsim run --camera)")
            try:
                self.camera.virtual.layout.zone(zone)
            except VisionError as exc:
                raise DeviceError(f"table {self.id}: {exc}") from exc
        cards = self.shoe.deal(fault)
        if (
            self.cut_index is not None
            and not self.cutcard.cut_out
            and self.shoe.position >= self.cut_index
        ):
            self.cutcard.cut()
        landed = self.camera.dealt(cards, zone) if self.camera is not None else []
        return cards, landed

    def trigger_cut(self) -> None:
        self.cutcard.cut()

    # -- faults ------------------------------------------------------------------------
    async def fault(self, device: str, name: str, **params: Any) -> None:
        """Inject a fault by name (the control API and scenarios come through here)."""
        dev = self.device(device)
        try:
            check_fault(device, name, params)
        except ValueError as exc:
            raise DeviceError(f"table {self.id}: {exc}") from exc
        faults = dev.faults
        if name == "unplug":
            await dev.unplug()
        elif name == "replug":
            await dev.plug()
        elif name == "power_cycle":
            await dev.power_cycle()
        elif name == "garbage":
            raw = params.get("data")
            dev.inject_garbage(
                raw.encode("latin-1") if isinstance(raw, str) else None, int(params.get("size", 32))
            )
        elif name == "garble_next":
            faults.garble_next = int(params.get("count", 1))
        elif name == "reorder_next":
            faults.reorder_next = True
        elif name == "slow":
            faults.chunk_size = int(params.get("chunk", 1))
            faults.chunk_delay = float(params.get("delay", 0.002))
        elif name == "fast":
            faults.chunk_size, faults.chunk_delay = 0, 0.0
        elif name in ("heartbeat_stop", "heartbeat_start"):
            faults.heartbeat_stopped = name == "heartbeat_stop"
        elif name in ("mute", "unmute"):
            faults.mute = name == "mute"
        elif name == "clock_skew":
            faults.clock_skew_ms = int(params.get("ms", DEFAULT_SKEW_MS))
        elif isinstance(dev, SimShoe):
            self._shoe_fault(dev, name)
        elif isinstance(dev, SimShuffler):
            self._shuffler_fault(dev, name)
        elif isinstance(dev, SimCutCard):
            self._cutcard_fault(dev, name, params)

    def _shoe_fault(self, shoe: SimShoe, name: str) -> None:
        if name in ("misread", "double_pull", "wrong_order"):
            self.deal(fault=name)
        elif name == "jam":
            shoe.jam()
        elif name == "jam_clear":
            shoe.clear_jam()
        elif name == "tamper":
            shoe.open_lid()
        elif name == "tamper_clear":
            shoe.close_lid()
        else:
            raise DeviceError(f"unknown shoe fault {name!r}")

    def _shuffler_fault(self, shuffler: SimShuffler, name: str) -> None:
        if name in ("missing_card", "extra_card", "foreign_card"):
            shuffler.arm(name)
        elif name == "jam":
            shuffler.jam()
        elif name == "jam_clear":
            shuffler.clear_jam()
        elif name == "door_open":
            shuffler.open_door()
        elif name == "door_close":
            shuffler.close_door()
        else:
            raise DeviceError(f"unknown shuffler fault {name!r}")

    def _cutcard_fault(self, cutcard: SimCutCard, name: str, params: dict[str, Any]) -> None:
        if name == "sensor_fault":
            cutcard.sensor_fault(str(params.get("detail", "optical sensor blocked")))
        elif name == "sensor_ok":
            cutcard.sensor_ok()
        else:
            raise DeviceError(f"unknown cutcard fault {name!r}")

    def device_settings(
        self, heartbeat_timeout: float = 5.0, via: str = "pty"
    ) -> list[DeviceSettings]:
        out = []
        for kind, device in self.devices.items():
            if via == "tcp":
                assert device.tcp is not None, "table was started without TCP ports"
                port = device.tcp.url
            else:
                port = device.port
            out.append(
                DeviceSettings(
                    id=device.device_id, kind=kind, port=port, heartbeat_timeout=heartbeat_timeout
                )
            )
        return out


class Simulator:
    """Any number of simulated tables in this event loop (``async with``)."""

    def __init__(
        self,
        tables: int | list[str] = 1,
        *,
        seed: int = 0,
        base_dir: Path = Path("var/hwsim"),
        tcp_base_port: int | None = None,
        pty: bool = True,
        load_shoes: bool = True,
        **table_options: Any,
    ) -> None:
        ids = [f"t{i + 1}" for i in range(tables)] if isinstance(tables, int) else list(tables)
        self.tables: dict[str, SimTable] = {}
        for index, table_id in enumerate(ids):
            tcp = None
            if tcp_base_port is not None:
                base = tcp_base_port + 3 * index if tcp_base_port else 0
                tcp = {
                    "shoe": base,
                    "shuffler": base + 1 if base else 0,
                    "cutcard": base + 2 if base else 0,
                }
            self.tables[table_id] = SimTable(
                table_id,
                seed=seed + index,
                base_dir=base_dir,
                tcp_ports=tcp,
                pty=pty,
                **table_options,
            )
        self.load_shoes = load_shoes
        self._started: list[SimTable] = []

    def table(self, table_id: str) -> SimTable:
        try:
            return self.tables[table_id]
        except KeyError as exc:
            raise DeviceError(f"no simulated table {table_id!r}") from exc

    async def start(self) -> None:
        for table in self.tables.values():
            await table.start()
            self._started.append(table)
            if self.load_shoes:
                table.new_shoe()

    async def stop(self) -> None:
        while self._started:
            with contextlib.suppress(Exception):
                await self._started.pop().stop()

    async def __aenter__(self) -> Simulator:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def table_settings(
        self, heartbeat_timeout: float = 5.0, via: str = "pty"
    ) -> list[TableSettings]:
        return [
            TableSettings(id=table.id, devices=table.device_settings(heartbeat_timeout, via))
            for table in self.tables.values()
        ]

    def studio_config(
        self, broker_url: str | None, heartbeat_timeout: float = 5.0, via: str = "pty"
    ) -> StudioConfig:
        return StudioConfig(
            broker=BrokerSettings(url=broker_url),
            tables=self.table_settings(heartbeat_timeout, via),
        )
