"""Blackjack rules engine (pure: no I/O, no asyncio, no clock, no randomness).

See docs/rules-engine.md. The full API summary is filled in below as modules land.
"""
