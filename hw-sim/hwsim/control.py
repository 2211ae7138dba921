"""The simulator's HTTP control API (FastAPI), served in the simulator's event loop.

GET  /tables                                   tables, devices, ports, shoe state
POST /tables/{table}/deal        {"count": 1, "fault": null|"misread"|"double_pull"|"wrong_order",
                                  "zone": null|"seat:3"|"dealer"|...}
POST /tables/{table}/shoe                      load a new shoe (shuffle, count, eject, load)
POST /tables/{table}/cut                       the cut card comes out
POST /tables/{table}/devices/{device}/faults   {"fault": "unplug", "params": {}}
POST /scenario                                 a scenario document (JSON), run to completion

With ``hwsim run --camera`` (hwsim.camera.sim_camera), each table's overhead camera:

GET  /tables/{table}/camera                    the cards on its layout, where the next lands
GET  /tables/{table}/camera.jpg                one frame
GET  /tables/{table}/camera.mjpg?fps=10        the live stream (MJPEG), for `studio camera run`
POST /tables/{table}/camera/place  {"card": "QH", "zone": "seat:3"}   a card the shoe never dealt
POST /tables/{table}/camera/remove {"card": "QH"}   the dealer takes a (voided) card back
POST /tables/{table}/camera/clear              the cards are collected
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from hwsim.scenario import Scenario
from hwsim.table import DEVICE_FAULTS, LINE_FAULTS, SimTable, Simulator
from studio.errors import ConfigError, DeviceError, StudioError, VisionError

if TYPE_CHECKING:
    from hwsim.camera.sim_camera import SimCamera
from studio.web.server import WebServer


class DealRequest(BaseModel):
    count: int = Field(1, ge=1, le=1000)
    fault: str | None = None
    zone: str | None = Field(None, description="where the cards land on the camera's layout")


class PlaceRequest(BaseModel):
    card: str
    zone: str


class RemoveRequest(BaseModel):
    card: str


MJPEG_BOUNDARY = "frame"


class FaultRequest(BaseModel):
    fault: str
    params: dict[str, Any] = Field(default_factory=dict)


def _table_state(table: SimTable) -> dict[str, Any]:
    return {
        "id": table.id,
        "shoe": table.shoe.shoe_id,
        "position": table.shoe.position,
        "remaining": table.shoe.remaining,
        "cut_index": table.cut_index,
        "cut_out": table.cutcard.cut_out,
        "devices": {
            kind: {
                "id": dev.device_id,
                "port": dev.port,
                "tcp": dev.tcp.url if dev.tcp is not None else None,
                "plugged": dev.plugged,
                "seq": dev.seq,
                "faults": {**vars(dev.faults)},
                "status": dev.status(),
            }
            for kind, dev in table.devices.items()
        },
    }


def create_app(sim: Simulator) -> FastAPI:
    app = FastAPI(title="hwsim control", version="1")

    def table(table_id: str) -> SimTable:
        try:
            return sim.table(table_id)
        except DeviceError as exc:
            raise HTTPException(404, str(exc)) from exc

    @app.get("/tables")
    async def tables() -> list[dict[str, Any]]:
        return [_table_state(t) for t in sim.tables.values()]

    @app.get("/faults")
    async def faults() -> dict[str, Any]:
        return {"any_device": list(LINE_FAULTS), **{k: list(v) for k, v in DEVICE_FAULTS.items()}}

    def camera(table_id: str) -> SimCamera:
        cam = table(table_id).camera
        if cam is None:
            raise HTTPException(404, f"table {table_id} has no camera (hwsim run --camera)")
        return cam

    def known_zone(cam: SimCamera, zone: str) -> None:
        try:
            cam.virtual.layout.zone(zone)
        except VisionError as exc:
            raise HTTPException(400, str(exc)) from exc

    @app.post("/tables/{table_id}/deal")
    async def deal(table_id: str, request: DealRequest | None = None) -> dict[str, Any]:
        request = request or DealRequest()  # a bare POST deals one card
        t = table(table_id)
        if request.zone is not None:
            known_zone(camera(table_id), request.zone)  # refused before a card leaves the shoe
        cards: list[str] = []
        landed: list[dict[str, Any]] = []
        try:
            for _ in range(request.count):
                dealt, where = t.deal_onto_layout(request.fault, request.zone)
                cards += [c.code for c in dealt]
                landed += where
        except DeviceError as exc:
            raise HTTPException(409, str(exc)) from exc
        answer = {"cards": cards, "remaining": t.shoe.remaining, "cut_out": t.cutcard.cut_out}
        if t.camera is not None:
            answer["landed"] = landed
        return answer

    @app.post("/tables/{table_id}/shoe")
    async def new_shoe(table_id: str) -> dict[str, Any]:
        try:
            return {"shoe": table(table_id).new_shoe()}
        except DeviceError as exc:
            raise HTTPException(409, str(exc)) from exc

    @app.post("/tables/{table_id}/cut")
    async def cut(table_id: str) -> dict[str, Any]:
        table(table_id).trigger_cut()
        return {"cut_out": True}

    @app.post("/tables/{table_id}/devices/{device}/faults")
    async def fault(table_id: str, device: str, request: FaultRequest) -> dict[str, Any]:
        t = table(table_id)
        try:
            await t.fault(device, request.fault, **request.params)
        except (DeviceError, ValueError) as exc:
            raise HTTPException(400, str(exc)) from exc
        kind = next(k for k, d in t.devices.items() if d is t.device(device))
        state: dict[str, Any] = _table_state(t)["devices"][kind]
        return state

    @app.get("/tables/{table_id}/camera")
    async def camera_state(table_id: str) -> dict[str, Any]:
        return camera(table_id).state()

    @app.get("/tables/{table_id}/camera.jpg")
    async def camera_frame(table_id: str) -> Response:
        jpeg = await asyncio.to_thread(camera(table_id).jpeg)
        return Response(jpeg, media_type="image/jpeg")

    @app.get("/tables/{table_id}/camera.mjpg")
    async def camera_stream(
        table_id: str, request: Request, fps: float = Query(10.0, ge=1, le=30)
    ) -> StreamingResponse:
        cam = camera(table_id)

        async def frames() -> AsyncIterator[bytes]:
            period = 1.0 / fps
            due = time.monotonic()
            # Ends with the server (stop_streams), or when the client goes.
            while not getattr(request.app.state, "streams_stopped", False):
                jpeg = await asyncio.to_thread(cam.jpeg)
                yield (
                    (
                        f"--{MJPEG_BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                        f"Content-Length: {len(jpeg)}\r\n\r\n"
                    ).encode()
                    + jpeg
                    + b"\r\n"
                )
                due = max(due + period, time.monotonic())
                await asyncio.sleep(due - time.monotonic())

        return StreamingResponse(
            frames(), media_type=f"multipart/x-mixed-replace; boundary={MJPEG_BOUNDARY}"
        )

    @app.post("/tables/{table_id}/camera/place")
    async def camera_place(table_id: str, request: PlaceRequest) -> dict[str, Any]:
        cam = camera(table_id)
        known_zone(cam, request.zone)
        try:
            return cam.place(request.card, request.zone)
        except StudioError as exc:  # not a card code
            raise HTTPException(400, str(exc)) from exc

    @app.post("/tables/{table_id}/camera/remove")
    async def camera_remove(table_id: str, request: RemoveRequest) -> dict[str, Any]:
        cam = camera(table_id)
        try:
            removed = cam.remove(request.card)
        except StudioError as exc:  # not a card code
            raise HTTPException(400, str(exc)) from exc
        if not removed:
            raise HTTPException(404, f"{request.card} is not on the layout of table {table_id}")
        return cam.state()

    @app.post("/tables/{table_id}/camera/clear")
    async def camera_clear(table_id: str) -> dict[str, Any]:
        cam = camera(table_id)
        cam.clear()
        return cam.state()

    @app.post("/scenario")
    async def scenario(document: dict[str, Any]) -> dict[str, Any]:
        try:
            parsed = Scenario.parse(document)
            return {"name": parsed.name, "log": await parsed.run(sim)}
        except (ConfigError, DeviceError, ValueError) as exc:
            raise HTTPException(400, str(exc)) from exc

    return app


class ControlServer(WebServer):
    """``async with ControlServer(sim, port=8700)``: the HTTP API on a real socket.

    The studio's own in-loop uvicorn runner: a port already taken is a clear error.
    """

    def __init__(self, sim: Simulator, host: str = "127.0.0.1", port: int = 8700) -> None:
        super().__init__(create_app(sim), host, port)
