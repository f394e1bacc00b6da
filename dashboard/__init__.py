"""The live dashboard: one web page over what flows through Kafka (camera tiles with their latest
sampled frame and what was found in it, per-camera rate and latency, the alerts feed with evidence,
the consumer groups' members and lag). It only reads Kafka, through consumers of its own that never
commit, so it can neither slow nor steer the pipeline."""
