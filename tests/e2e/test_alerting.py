"""Alerts from real photos through the real broker: the detector with embeddings, the gallery, and
an alerting worker, each the command a deployment runs."""

import os
import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.alert import event, face, person
from helpers.http import free_port, get, scrape
from helpers.kafka import detector_config, photos_to, read_topic, run_service
from helpers.prometheus import check_metrics
from helpers.worker import (
    alert_record,
    alerting,
    alerts_of,
    alerts_until,
    documented_ids,
    ended,
    enrol,
    pipeline_names,
    scene,
    states,
    stop,
    wait_for,
)

from facestream import kafka_clients, kafka_reading, kafka_topics
from facestream.detector_service.config import detector_command
from facestream.producers.config import ProducerConfig, producer_command
from facestream.schemas import pack_detection, unpack_detection
from facestream.tools.cli import cli

FPS = 2.0


@pytest.fixture
def names(bootstrap: str) -> dict[str, str]:
    return pipeline_names("a", bootstrap)


def live_detector(names: dict, batch: int) -> subprocess.Popen:
    """A detector with embeddings following the footage as it comes. The test stops it once it has
    its alerts; the idle limit is only a safety net, long enough for a producer started after it on a
    loaded machine (an 8 s limit, counted from the assignment, once ended it before the first frame)."""
    config = detector_config(
        _detector_topics(names), embedder="sface", batch=batch, max_wait_ms=20.0, stop_after_idle_s=60.0
    )
    return subprocess.Popen(detector_command(config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def detect(names: dict) -> str:
    """A detector with embeddings over the footage already sent."""
    return run_service(detector_command(detector_config(_detector_topics(names), embedder="sface", batch=4)))


def _detector_topics(names: dict) -> dict:
    return {k: names[k] for k in ("frames", "detections", "dlq", "group")}


def reached(state: str, cameras: list[str]):
    """Whether every camera's stranger alert has been in ``state``."""
    return lambda alerts: all(state in states(alerts, camera, "stranger") for camera in cameras)


def test_one_stranger_alert_for_the_stranger_only(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    enrol(names, "Barack Obama", sample_dir / "obama.jpg")
    known = scene(tmp_path / "known", [(sample_dir / "obama2.jpg", 3), (sample_dir / "obama3.jpg", 3)], 12)
    stranger = scene(tmp_path / "stranger", [(sample_dir / "biden.jpg", 6)], 12)
    photos_to(names["frames"], {"porch": known, "gate": stranger}, fps=FPS, max_width=0)
    detect(names)
    worker = alerting(names, tmp_path / "alerting.log", rules="stranger")
    alerts = alerts_until(bootstrap, names, worker, tmp_path / "alerting.log", ended("gate", "stranger"))
    assert states(alerts, "porch", "stranger") == []
    gate = [a for a in alerts if a.camera_id == "gate"]
    assert [a.state for a in gate][0] == "new" and [a.state for a in gate][-1] == "end"
    assert len({a.alert_id for a in gate}) == 1 and gate[-1].count == 6
    assert all(s.similarity < 0.5 for s in gate[-1].evidence)
    events = [unpack_detection(r.value()) for r in kafka_reading.read_to_end(names["detections"], bootstrap)]
    assert gate[0].alert_id in documented_ids(gate[0], events)  # the contract's id, recomputed


def test_faces_the_detector_carries_by_track_alert_as_embedded_ones(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    """At 10 fps a face is embedded when its track starts (and when due again) and carried between: every
    track's first face in the events has its embedding, most faces have none, and the worker, lending
    them their track's, counts them as sightings of the stranger (it follows faces 5 times a second)."""
    stranger = scene(tmp_path / "stranger", [(sample_dir / "biden.jpg", 12)], 70)  # then 7 s without him: the end
    photos_to(names["frames"], {"gate": stranger}, fps=10.0, max_width=0)
    detect(names)
    events = [unpack_detection(r.value()) for r in kafka_reading.read_to_end(names["detections"], bootstrap)]
    faces = [f for e in sorted(events, key=lambda e: e.frame_seq) for f in e.faces]
    assert len(faces) == 12 and all(f.track is not None and f.sharpness is not None for f in faces)
    firsts = {f.track: f for f in reversed(faces)}  # each track's first face
    assert all(f.embedding is not None for f in firsts.values())
    carried = sum(f.embedding is None for f in faces)
    assert carried >= 6, f"only {carried} of 12 faces carried by their track (a loaded machine's gaps end tracks)"
    worker = alerting(names, tmp_path / "alerting.log", rules="stranger")
    alerts = alerts_until(bootstrap, names, worker, tmp_path / "alerting.log", ended("gate", "stranger"))
    gate = [a for a in alerts if a.camera_id == "gate"]
    assert len({a.alert_id for a in gate}) == 1 and gate[-1].state == "end" and gate[-1].count >= 3
    by_id = {e.event_id: e for e in events}
    assert any(by_id[s.event_id].faces[0].embedding is None for s in gate[-1].evidence)  # a carried face counted


def test_a_watched_person_on_a_camera_raises_one_person_seen_that_names_him(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    enrol(names, "Barack Obama", sample_dir / "obama.jpg")
    assert CliRunner().invoke(cli, ["gallery", "watch", "Barack Obama", "--topic", names["gallery"]]).exit_code == 0
    door = scene(tmp_path / "door", [(sample_dir / "obama2.jpg", 3), (sample_dir / "obama3.jpg", 3)], 24)
    gate = scene(tmp_path / "gate", [(sample_dir / "biden.jpg", 6)], 24)  # a stranger: no person_seen
    photos_to(names["frames"], {"door": door, "gate": gate}, fps=FPS, max_width=0)
    detect(names)
    worker = alerting(names, tmp_path / "alerting.log", rules="person_seen,stranger")
    alerts = alerts_until(bootstrap, names, worker, tmp_path / "alerting.log", ended("door", "person_seen"))
    seen = [a for a in alerts if a.kind == "person_seen"]
    assert [a.state for a in seen][0] == "new" and [a.state for a in seen][-1] == "end"
    assert {a.camera_id for a in seen} == {"door"} and len({a.alert_id for a in seen}) == 1
    assert {s.person for s in seen[-1].evidence} == {"Barack Obama"} and seen[-1].count == 6
    assert states(alerts, "door", "stranger") == [] and "new" in states(alerts, "gate", "stranger")


def test_nothing_a_record_or_a_rule_makes_stops_the_worker(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path, produce_raw
) -> None:
    """An unreadable record, a rule that fails, an alert the contract refuses (the throwaway rule of
    tests/helpers/faulty_rule, a kind added by its row alone): each goes to the dead-letter topic with
    why and is counted, and the stranger alert the same events make still opens and ends."""
    stranger = scene(tmp_path / "stranger", [(sample_dir / "biden.jpg", 6)], 12)
    photos_to(names["frames"], {"gate": stranger}, fps=FPS, max_width=0)
    detect(names)
    produce_raw(names["detections"], b"gate", b"not msgpack")
    plugin = Path(__file__).resolve().parents[1] / "helpers" / "faulty_rule"
    path = os.pathsep.join(filter(None, [str(plugin), os.environ.get("PYTHONPATH")]))
    # The rules by environment: only the worker's process knows the throwaway kind.
    env = {**os.environ, "PYTHONPATH": path, "FACESTREAM_ALERTING_RULES": "stranger,tailgating"}
    log = tmp_path / "alerting.log"
    worker = alerting(names, log, env=env, http_port=(port := free_port()))
    try:
        wait_for(bootstrap, names, ended("gate", "stranger"))
        metrics = scrape(port)
    finally:
        stop(worker, log)
    alerts = alerts_of(bootstrap, names)
    assert [a.state for a in alerts if a.kind == "stranger"][0] == "new" and ended("gate", "stranger")(alerts)
    assert {a.kind for a in alerts} == {"stranger"}
    dead = kafka_reading.read_to_end(f"{names['alerting']}.dlq", bootstrap)
    said = [dict((k, v.decode()) for k, v in record.headers()) for record in dead]
    stages = Counter(h["facestream.stage"] for h in said)
    assert stages["read"] == 1 and stages["rule"] >= 2 and stages["send"] >= 4, stages
    refused = next(h for h in said if h["facestream.stage"] == "send")
    assert "zone" in refused["facestream.error"] and refused["facestream.source"].startswith(names["detections"])
    failed = next(h for h in said if h["facestream.stage"] == "rule")
    assert "the tailgating rule: RuntimeError" in failed["facestream.error"]
    assert re.search(r'facestream_alerting_dead_letters_total\{stage="send"\} [4-9]', metrics), metrics
    assert "dead letters read=1" in log.read_text()


def test_a_face_outside_the_zone_raises_nothing_and_inside_alerts_naming_the_zone(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    # Biden's face is in the top fifth of his photo: in the "porch" camera's zone (the top half), not
    # in the "gate" camera's (the bottom half). Both run the stranger rule and loitering limited to them.
    top, bottom = [[0, 0], [1, 0], [1, 0.5], [0, 0.5]], [[0, 0.5], [1, 0.5], [1, 1], [0, 1]]
    footage = {camera: scene(tmp_path / camera, [(sample_dir / "biden.jpg", 6)], 12) for camera in ("porch", "gate")}
    photos_to(names["frames"], footage, fps=FPS, max_width=0)
    detect(names)
    limited = {"stranger": ["area"], "loitering": ["area"]}
    cameras = {
        "porch": {"zones": {"area": top}, "rule_zones": limited},
        "gate": {"zones": {"area": bottom}, "rule_zones": limited},
    }
    worker = alerting(
        names, tmp_path / "alerting.log", rules="stranger,loitering", loitering={"dwell_s": 1.5}, cameras=cameras
    )
    alerts = alerts_until(
        bootstrap,
        names,
        worker,
        tmp_path / "alerting.log",
        lambda seen: ended("porch", "stranger")(seen) and ended("porch", "loitering")(seen),
    )
    assert [a for a in alerts if a.camera_id == "gate"] == []
    for kind in ("stranger", "loitering"):
        porch = [a for a in alerts if a.kind == kind]
        assert porch[0].state == "new" and porch[-1].state == "end" and len({a.alert_id for a in porch}) == 1
        assert {a.zone for a in porch} == {"area"}


def test_a_crowd_held_on_a_camera_opens_one_alert_that_ends(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    footage = scene(tmp_path / "hall", [(sample_dir / "breakingbad.jpg", 8)], 24)  # 12 s of an empty hall
    photos_to(names["frames"], {"hall": footage}, fps=FPS, max_width=0)
    detect(names)
    worker = alerting(names, tmp_path / "alerting.log", rules="crowd", crowd={"min_faces": 2})
    alerts = alerts_until(bootstrap, names, worker, tmp_path / "alerting.log", ended("hall", "crowd"))
    crowd = [a for a in alerts if a.kind == "crowd"]
    assert crowd[0].state == "new" and crowd[-1].state == "end" and len({a.alert_id for a in crowd}) == 1
    assert crowd[-1].count == 2 and crowd[-1].ended_ts_ns > crowd[0].started_ts_ns
    events = [unpack_detection(r.value()) for r in kafka_reading.read_to_end(names["detections"], bootstrap)]
    assert crowd[0].alert_id in documented_ids(crowd[0], events)  # the contract's id, recomputed


def test_replayed_events_make_no_new_alerts(names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path) -> None:
    footage = scene(tmp_path / "gate", [(sample_dir / "biden.jpg", 4)], 12)
    photos_to(names["frames"], {"gate": footage}, fps=FPS, max_width=0)
    detect(names)
    events = read_topic(bootstrap, names["detections"], 16)
    producer = kafka_clients.producer("test-replay")
    for record in events:  # the same events again, as at-least-once delivery may bring them
        producer.produce(names["detections"], key=record.key(), value=record.value())
    assert producer.flush(30) == 0
    worker = alerting(names, tmp_path / "alerting.log", rules="stranger")
    alerts = alerts_until(bootstrap, names, worker, tmp_path / "alerting.log", ended("gate", "stranger"))
    assert [a.state for a in alerts][0] == "new" and [a.state for a in alerts].count("new") == 1
    assert [a.state for a in alerts].count("end") == 1 and len({a.alert_id for a in alerts}) == 1


def test_enrolling_the_stranger_while_his_camera_streams_stops_his_alerts(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "alerting.log"
    worker = alerting(names, log, rules="stranger")
    detector = live_detector(names, batch=2)
    camera = scene(tmp_path / "gate", [(sample_dir / "biden.jpg", 1)], 0)
    config = ProducerConfig(fps=FPS, loop=True, max_frames=80, max_width=0, frames_topic=names["frames"])
    producer = subprocess.Popen(producer_command([("gate", camera)], config), stdout=subprocess.DEVNULL)
    try:
        wait_for(bootstrap, names, lambda found: "new" in states(found, "gate", "stranger"))
        enrol(names, "Joe Biden", sample_dir / "biden.jpg")
        enrolled_ns = time.time_ns()  # the gallery record is acknowledged
        alerts = wait_for(bootstrap, names, ended("gate", "stranger"))
    finally:
        producer.terminate()
        detector.terminate()
        producer.wait(30), detector.wait(60)
        stop(worker, log)
    assert states(alerts, "gate", "stranger")[0] == "new" and states(alerts, "gate", "stranger")[-1] == "end"
    assert len({a.alert_id for a in alerts}) == 1
    # The gallery reaches the worker within moments: frames captured 2 s after the enrolment are his.
    late = [a for a in alerts if a.state != "end" and a.updated_ts_ns > enrolled_ns + 2_000_000_000]
    assert late == []


def test_a_worker_killed_and_started_again_keeps_its_cameras_state(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    # Live footage: the stranger's alert opens under the first worker, which is then killed (no
    # goodbye); the next worker of the group takes the camera's state from the table's changelog and
    # ends the same alert, instead of opening another under a new id. A worker of another group reads
    # the same events undisturbed: the output is idempotent end to end when the killed pair published
    # exactly its records (the same ids and states), some perhaps twice.
    camera = scene(tmp_path / "gate", [(sample_dir / "biden.jpg", 16)], 24)
    twin = {**names, "alerts": f"{names['alerts']}.twin", "alerting": f"{names['alerting']}.twin"}
    undisturbed = alerting(twin, tmp_path / "twin.log", rules="stranger")
    detector = live_detector(names, batch=2)
    config = ProducerConfig(fps=FPS, max_width=0, frames_topic=names["frames"])
    producer = subprocess.Popen(producer_command([("gate", camera)], config), stdout=subprocess.DEVNULL)
    first = alerting(names, tmp_path / "first.log", rules="stranger")
    try:
        wait_for(bootstrap, names, lambda found: "update" in states(found, "gate", "stranger"))
        first.kill()
        first.wait(30)
        second = alerting(names, tmp_path / "second.log", rules="stranger")
        alerts = alerts_until(bootstrap, names, second, tmp_path / "second.log", ended("gate", "stranger"), 120.0)
        calm = alerts_until(bootstrap, twin, undisturbed, tmp_path / "twin.log", ended("gate", "stranger"), 60.0)
    finally:
        producer.wait(60)
        detector.terminate(), detector.wait(60)
        undisturbed.kill()
    assert states(alerts, "gate", "stranger")[0] == "new" and states(alerts, "gate", "stranger")[-1] == "end"
    assert states(alerts, "gate", "stranger").count("new") == 1 and len({a.alert_id for a in alerts}) == 1
    assert {alert_record(a) for a in alerts} == {alert_record(a) for a in calm}, (alerts, calm)


def test_two_workers_one_killed_the_other_takes_its_cameras_with_their_state(
    names: dict, bootstrap: str, sample_dir: Path, tmp_path: Path
) -> None:
    # gate-0 and gate-7 hash to the two partitions of the detections topic (murmur2, as every
    # facestream producer places keys), so each worker of two holds one of them; the one killed held one.
    footage = scene(tmp_path / "footage", [(sample_dir / "biden.jpg", 16)], 24)
    cameras = [("gate-0", footage), ("gate-7", footage)]
    detector = live_detector(names, batch=4)
    workers = [alerting(names, tmp_path / f"worker-{i}.log", rules="stranger") for i in range(2)]
    time.sleep(10)  # both in the group before the footage starts
    config = ProducerConfig(fps=FPS, max_width=0, frames_topic=names["frames"])
    producer = subprocess.Popen(producer_command(cameras, config), stdout=subprocess.DEVNULL)
    try:
        wait_for(bootstrap, names, reached("update", [c for c, _ in cameras]))
        workers[0].kill()
        workers[0].wait(30)
        ended_everywhere = reached("end", [c for c, _ in cameras])
        alerts = alerts_until(bootstrap, names, workers[1], tmp_path / "worker-1.log", ended_everywhere, 120.0)
    finally:
        producer.wait(60)
        detector.terminate(), detector.wait(60)
    for camera, _ in cameras:
        seen = states(alerts, camera, "stranger")
        assert seen[:1] == ["new"] and seen[-1] == "end" and seen.count("new") == 1, (camera, seen)
        assert len({a.alert_id for a in alerts if a.camera_id == camera}) == 1


@pytest.mark.prometheus  # promtool checks the exposition
def test_a_worker_is_ready_once_its_gallery_is_loaded_and_it_owns_partitions(
    names: dict, bootstrap: str, tmp_path: Path
) -> None:
    port = free_port()
    log = tmp_path / "alerting.log"
    worker = alerting(names, log, http_port=port, rules="crowd")
    try:
        deadline = time.monotonic() + 60
        while get(port, "/readyz")[0] != 200:
            assert time.monotonic() < deadline and worker.poll() is None, log.read_text()[-3000:]
            time.sleep(0.2)
        assert get(port, "/healthz") == (200, {"alive": True})
        assert get(port, "/readyz")[1]["checks"] == {"gallery_loaded": True, "partitions_assigned": True}
        assert "facestream_alerting_detection_events_total 0.0" in scrape(port)
        producer = kafka_clients.producer("test-latency", bootstrap)
        crowd = [face(person(seed)) for seed in range(6)]
        for seq in range(8):
            kafka_clients.send(producer, names["detections"], pack_detection(event(seq, time.time(), *crowd)), b"gate")
        assert producer.flush(30) == 0
        while not re.search(r"^facestream_event_to_alert_seconds_count [1-9]", text := scrape(port), re.M):
            assert time.monotonic() < deadline + 60 and worker.poll() is None, log.read_text()[-3000:]
            time.sleep(0.5)
        lag = re.compile(r'^facestream_consumer_lag\{group="[^"]+",partition="\d+"', re.M)  # measured every 5 s
        while not lag.search(text := scrape(port)):
            assert time.monotonic() < deadline + 90 and worker.poll() is None, text
            time.sleep(0.5)
        check_metrics(text)
    finally:
        stop(worker, log)


def test_a_new_group_started_an_hour_back_raises_nothing_for_older_events(
    names: dict, bootstrap: str, tmp_path: Path
) -> None:
    producer = kafka_clients.producer("test-start-at", bootstrap)
    two_hours_ago_ms = int(time.time() * 1000) - 2 * 3600 * 1000
    crowd = [face(person(seed)) for seed in range(6)]
    for camera, timestamp_ms in (("old", two_hours_ago_ms), ("recent", None)):
        for seq in range(8):
            value = pack_detection(event(seq, 1000.0 + seq * 0.5, *crowd, camera=camera))
            when = {"timestamp": timestamp_ms + seq} if timestamp_ms else {}
            producer.produce(names["detections"], key=camera.encode(), value=value, **when)
    assert producer.flush(30) == 0
    worker = alerting(names, tmp_path / "alerting.log", rules="crowd", start_at="1h")
    alerts = alerts_until(bootstrap, names, worker, tmp_path / "alerting.log", lambda found: bool(found))
    assert {a.camera_id for a in alerts} == {"recent"}, alerts
    sent = [event(seq, 1000.0 + seq * 0.5, *crowd, camera="recent") for seq in range(8)]
    assert alerts[0].alert_id in documented_ids(alerts[0], sent)
    assert "no commit of this group yet, starting at offset" in (tmp_path / "alerting.log").read_text()


def test_a_worker_refuses_topics_that_would_split_a_camera_s_state(names: dict, tmp_path: Path) -> None:
    # A real defect: the poses topic was made with 4 partitions whatever the detections topic had, so
    # with another count one camera's events reached two partitions of the table that holds its state.
    poses = f"{names['alerting']}.poses"
    kafka_topics.ensure_topics({poses: 3})  # detections has 2
    worker = alerting({**names, "poses": poses}, tmp_path / "worker.log")
    assert worker.wait(timeout=60) != 0
    said = (tmp_path / "worker.log").read_text()
    assert f"{names['detections']} has 2, {poses} has 3" in said and "--alter --partitions 3" in said
