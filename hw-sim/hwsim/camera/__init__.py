"""Virtual overhead camera: synthetic card/layout frames in step with the simulated shoe."""
