"""Hardware simulators for the studio."""
