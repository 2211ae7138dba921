"""The round controller: validates every card, cross-checks shoe and camera, alerts, recovers."""

from studio.controller.service import ControllerService, UnknownTable
from studio.controller.table import Input, Output, TableController

__all__ = ["ControllerService", "Input", "Output", "TableController", "UnknownTable"]
