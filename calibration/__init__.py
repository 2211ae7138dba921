"""The vision library: card detection and recognition, and the camera, deck and table
calibration tools (``studio calibrate``, ``studio recognise``)."""
