"""``studio demo``: a live studio on one machine (simulated hardware, players and faults)."""

from studio.demo.run import DemoOptions, run_demo

__all__ = ["DemoOptions", "run_demo"]
