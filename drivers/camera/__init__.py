"""Overhead camera: frame sources and the card recognition service."""
