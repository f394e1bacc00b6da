"""The alerting service: detection events in, alerts people act on out.

A consumer group of its own (scale it by starting more workers), beside the detector service and
never on its GPUs. ``rules`` holds the decisions as pure functions of (state, event); ``app`` wires
them to Kafka: the ``detections`` topic in, per-camera state in a table backed by a changelog topic
(``table``: a camera's state moves with its partition), alerts out on ``alerts``.
"""
