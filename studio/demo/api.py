"""Demo-only REST: inject a fault on a simulated table (managers only).

``POST /api/demo/tables/{table}/faults`` with ``{"fault": "misread"}``; faults are
those of :data:`studio.demo.faults.FAULTS`. Only the demo mounts this router: a
studio with real hardware has no simulator to break.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, ConfigDict

from studio.console.auth import require_role
from studio.console.users import Role, User
from studio.demo.faults import FaultInjector


class FaultBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fault: Literal["misread", "camera_mismatch", "double_pull", "shuffler_count", "unplug"]


def build_router(injector: FaultInjector) -> APIRouter:
    router = APIRouter(prefix="/api/demo")
    manager = require_role(Role.MANAGER)

    @router.post("/tables/{table}/faults")
    async def inject(table: str, body: FaultBody, user: User = Depends(manager)) -> dict[str, Any]:
        sim = next((t for t in injector.tables if t.id == table), None)
        if sim is None:
            raise HTTPException(404, f"no simulated table {table!r}")
        if body.fault == "camera_mismatch" and (
            injector.camera_mismatch is None or not injector.camera_mismatch(table)
        ):
            raise HTTPException(409, f"table {table} has no camera (single source)")
        if body.fault != "camera_mismatch":
            await injector.inject(sim, body.fault)
        return {"table": table, "fault": body.fault, "by": user.username}

    return router
