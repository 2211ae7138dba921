"""Live-dealer blackjack studio controller."""

__version__ = "0.1.0"
