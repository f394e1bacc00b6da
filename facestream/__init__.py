"""facestream: Kafka-based, event-driven face detection for many camera streams.

The services live in their own top-level packages, in the order a frame travels:
``producers`` -> ``frames`` topic -> ``detector_service`` -> ``detections`` topic -> ``alerting``.
``schemas`` is the one contract they share. This package holds what they all use: the CLI,
configuration, errors, the local Kafka broker and the fetching of verified assets.
"""

__version__ = "0.1.0"
