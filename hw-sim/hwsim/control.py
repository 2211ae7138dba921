"""The simulator's HTTP control API (FastAPI), served in the simulator's event loop.

GET  /tables                                   tables, devices, ports, shoe state
POST /tables/{table}/deal        {"count": 1, "fault": null|"misread"|"double_pull"|"wrong_order"}
POST /tables/{table}/shoe                      load a new shoe (shuffle, count, eject, load)
POST /tables/{table}/cut                       the cut card comes out
POST /tables/{table}/devices/{device}/faults   {"fault": "unplug", "params": {}}
POST /scenario                                 a scenario document (JSON), run to completion
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

from hwsim.scenario import Scenario
from hwsim.table import DEVICE_FAULTS, LINE_FAULTS, SimTable, Simulator
from studio.errors import ConfigError, DeviceError
from studio.web.server import WebServer


class DealRequest(BaseModel):
    count: int = Field(1, ge=1, le=1000)
    fault: str | None = None


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

    @app.post("/tables/{table_id}/deal")
    async def deal(table_id: str, request: DealRequest) -> dict[str, Any]:
        t = table(table_id)
        try:
            cards = [c.code for _ in range(request.count) for c in t.deal(fault=request.fault)]
        except DeviceError as exc:
            raise HTTPException(409, str(exc)) from exc
        return {"cards": cards, "remaining": t.shoe.remaining, "cut_out": t.cutcard.cut_out}

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
