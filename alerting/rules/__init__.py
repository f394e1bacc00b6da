"""The alert rules, each a pure function of (camera state, event) -> (camera state, alerts), with no
Kafka and no clock but the events' capture times, so each is tested alone and replays identically."""
