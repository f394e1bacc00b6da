"""The placement list: each camera on its line's partition, so partitions carry equal numbers of
cameras, through a real broker; a camera the list does not name is placed by its key and said so."""

import logging
import uuid
from collections import Counter
from pathlib import Path

import pytest
from helpers.kafka import read_topic

from facestream import kafka_clients, kafka_topics
from facestream.errors import ConfigError
from facestream.producers.config import ProducerConfig
from facestream.producers.placement import Placement, by_key
from facestream.producers.streamer import Streamer
from facestream.schemas import unpack_frame


def test_a_list_gives_each_camera_its_line_modulo_the_partitions(tmp_path: Path) -> None:
    listed = tmp_path / "cameras.txt"
    listed.write_text("# the lobby first\nlobby\n\ndoor  # the front door\ngate\n")
    placement = Placement.read(listed)
    assert [placement.partition(c, 2) for c in ("lobby", "door", "gate", "yard")] == [0, 1, 0, None]
    placement.write(tmp_path / "again.txt")
    assert Placement.read(tmp_path / "again.txt") == placement


def test_a_camera_listed_twice_or_a_missing_list_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="door more than once"):
        Placement.of(["door", "lobby", "door"])
    with pytest.raises(ConfigError, match="cannot read the placement list .*nothing.txt"):
        Placement.read(tmp_path / "nothing.txt")


def test_twenty_cameras_fill_eight_partitions_evenly(
    bootstrap: str, sample_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    frames = f"t-{uuid.uuid4().hex[:10]}.frames"
    kafka_topics.ensure_topics({frames: 8}, bootstrap)
    cameras = [f"cam-{i:02d}" for i in range(20)]
    Placement.of(cameras).write(tmp_path / "cameras.txt")
    photo = str(sample_dir / "obama.jpg")
    config = ProducerConfig(
        fps=0.0, frames_topic=frames, max_frames=1, stats_interval_s=60.0, placement=tmp_path / "cameras.txt"
    )
    caplog.set_level(logging.INFO)
    streamer = Streamer([(c, photo) for c in [*cameras, "unlisted"]], config, bootstrap=bootstrap)
    assert streamer.run().acked == 21
    records = read_topic(bootstrap, frames, 21)
    where = {unpack_frame(r.value()).camera_id: r.partition() for r in records}
    assert all(where[c] == i % 8 for i, c in enumerate(cameras)), where
    per_partition = Counter(where[c] for c in cameras)
    assert sorted(per_partition.values()) == [2, 2, 2, 2, 3, 3, 3, 3]
    assert "unlisted not in the placement list" in caplog.text
    assert "20 of 21 cameras placed over 8 partitions" in caplog.text
    assert [c.partition for c in streamer.cameras][-1] == -1


def test_without_a_list_the_key_hash_places_a_camera_as_schemas_readme_says(bootstrap: str) -> None:
    # murmur2 of the key, as Java's clients place keys (bench e2e counts each replica's cameras of a
    # --placement hash run with it).
    frames = f"t-{uuid.uuid4().hex[:10]}.frames"
    kafka_topics.ensure_topics({frames: 10}, bootstrap)
    producer = kafka_clients.producer("test-placement", bootstrap)
    cameras = [f"cam-{i:02d}" for i in range(30)]
    for camera in cameras:
        kafka_clients.send(producer, frames, b"x", camera.encode())
    assert producer.flush(30) == 0
    where = {r.key().decode(): r.partition() for r in read_topic(bootstrap, frames, len(cameras))}
    assert where == {camera: by_key(camera, 10) for camera in cameras}
