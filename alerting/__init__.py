"""The alerting service: detection events in, alerts people act on out.

A faust-streaming worker group of its own (scale it by starting more workers), beside the detector
service and never on its GPUs. ``rules`` holds the decisions as pure functions of (state, event);
``app`` wires them to Kafka: the ``detections`` topic in, per-camera state in a faust table backed
by a changelog topic (so a camera's state moves with its partition), alerts out on ``alerts``.
"""
