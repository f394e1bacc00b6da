"""Recurring strangers scored against the truth: stranger alerts (visits) whose true person is known,
kept by the alert store's own writer in a database of its own, which groups them as a store does
(``facestream.alertdb.strangers``); then how pure the groups are (the share of visits in a group whose
person is the group's most common one) and how complete (the share of a person's visits in the group
holding most of them), and each person's journey (the cameras of that group's visits of theirs, in order).
"""

import tempfile

from facestream.alertdb import open_database, strangers
from facestream.alertdb.writer import AlertWriter, Received
from facestream.schemas import Alert, pack_alert


def grouped(visits: list[tuple[str, Alert]], same_stranger: float = strangers.SAME_STRANGER) -> dict:
    """{"visits", "strangers", "purity", "completeness", "journeys": {person: [camera, ...]}} for
    ``visits`` (true person, alert), kept in the order they started."""
    with tempfile.TemporaryDirectory() as folder:
        writer = AlertWriter(open_database(f"sqlite:///{folder}/alerts.db"), "bench", same_stranger)
        ordered = sorted(visits, key=lambda v: v[1].started_ts_ns)
        writer.write([Received("alerts", 0, i, pack_alert(alert), alert) for i, (_, alert) in enumerate(ordered)])
        groups = strangers.listed(writer.engine, limit=len(visits) + 1)
        writer.engine.dispose()
    person_of = {alert.alert_id: person for person, alert in visits}
    members = [[person_of[v.alert_id] for v in group.visits] for group in groups]
    majority = sum(max(people.count(p) for p in people) for people in members)
    complete, journeys = 0, {}
    for person in sorted(set(person_of.values())):
        best = max(groups, key=lambda g: sum(person_of[v.alert_id] == person for v in g.visits))
        mine = [v for v in best.visits if person_of[v.alert_id] == person]
        complete += len(mine)
        journeys[person] = [v.camera_id for v in mine]
    return {
        "visits": len(visits),
        "strangers": len(groups),
        "purity": round(majority / max(len(visits), 1), 4),
        "completeness": round(complete / max(len(visits), 1), 4),
        "journeys": journeys,
    }
