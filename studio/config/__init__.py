"""Typed configuration: pydantic models loaded from a TOML file plus ``STUDIO_*`` variables."""

from studio.config.loader import default_database_hint, explain_errors, load_config
from studio.config.models import (
    BrokerSettings,
    ConsoleSecurity,
    DatabaseSettings,
    DeviceSettings,
    StudioConfig,
    TableSettings,
    TlsSettings,
    WebSettings,
)

__all__ = [
    "BrokerSettings",
    "ConsoleSecurity",
    "DatabaseSettings",
    "DeviceSettings",
    "StudioConfig",
    "TableSettings",
    "TlsSettings",
    "WebSettings",
    "default_database_hint",
    "explain_errors",
    "load_config",
]
