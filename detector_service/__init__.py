"""The detector service: a Kafka consumer group that turns frames into face-detection events.

One frame's path through the modules: ``consumer`` (poll, offsets) -> ``batcher`` (size and
deadline) -> ``preprocess`` (JPEG decode, letterbox) -> ``engine`` (batch buckets; normalisation
and fusions built into the graph by ``graph_rewrite``; sessions and providers from ``runtime``) with
a plugin from ``models`` (input transform, outputs to boxes) -> ``postprocess`` -> ``events``
(build, publish, dead letters) -> ``offsets`` (commit once the broker has the event).
``service`` wires them; ``cli`` is the command line.
"""
