"""One process owns the GPU (server.py); Kafka-facing fronts hand it batches through shared memory
(payloads.py) and build the events from its answers (remote.py). ``launch`` starts the owner."""
