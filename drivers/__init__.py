"""Serial device drivers: card shoe, counting shuffler, cut-card sensor.

``drivers.codecs`` holds the sans-I/O protocol codecs (bytes in, typed messages
out); ``drivers.transport`` opens ports; ``drivers.device`` is the common driver
lifecycle; ``drivers.runner`` runs many drivers in one process.
"""
