import dataclasses

import msgpack
import pytest

from facestream.schemas import Alert, SchemaError, Sighting, alert_id_for, pack_alert, unpack_alert

SIGHTING = Sighting("e1", 7, 1_000, box=(1.0, 2.0, 30.0, 40.0), similarity=0.12, score=0.93, track="e0#1")
NEW = Alert(
    alert_id=alert_id_for("gate", "stranger", "e1"),
    kind="stranger",
    state="new",
    camera_id="gate",
    started_ts_ns=1_000,
    updated_ts_ns=2_000,
    evidence=(SIGHTING, Sighting("e2", 8, 2_000)),
    count=2,
)


def test_round_trip_and_end() -> None:
    assert unpack_alert(pack_alert(NEW)) == NEW
    ended = dataclasses.replace(NEW, state="end", ended_ts_ns=9_000)
    assert unpack_alert(pack_alert(ended)) == ended


def test_alert_ids_are_deterministic_and_distinct() -> None:
    assert alert_id_for("gate", "stranger", "e1") == NEW.alert_id
    assert len({NEW.alert_id, alert_id_for("gate", "crowd", "e1"), alert_id_for("door", "stranger", "e1")}) == 3


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"kind": "fire"}, "kind"),
        ({"state": "open"}, "state"),
        ({"state": "end"}, "ended_ts_ns"),
        ({"ended_ts_ns": 5}, "ended_ts_ns"),
        ({"evidence": [SIGHTING.fields()] * 11}, "evidence"),
        ({"evidence": [{**SIGHTING.fields(), "similarity": 3.0}]}, "evidence[0].similarity"),
        ({"evidence": [{**SIGHTING.fields(), "score": 1.5}]}, "evidence[0].score"),
        ({"evidence": [{"event_id": "e2", "frame_seq": 8, "capture_ts_ns": 1, "score": 0.9}]}, "evidence[0].score"),
        ({"count": -1}, "count"),
        ({"evidence": [{**SIGHTING.fields(), "track": ""}]}, "evidence[0].track"),
    ],
)
def test_bad_alerts_name_the_field(changes: dict, field: str) -> None:
    payload = msgpack.packb({"schema_version": 1, **NEW.fields(), **changes}, use_bin_type=True)
    with pytest.raises(SchemaError) as caught:
        unpack_alert(payload)
    assert caught.value.field == field
