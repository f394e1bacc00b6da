"""The GPU owner design, run for real on the CPU: an owner process answers fronts through shared memory
and pipes, and the events the fronts build are the ones the processor makes in one process."""

import dataclasses
import functools
from pathlib import Path

import cv2
import numpy as np
import pytest

from facestream.detector_service.config import DetectorConfig
from facestream.detector_service.decoding.placements import Placed, Placements
from facestream.detector_service.events import Identity
from facestream.detector_service.models.base import Detections
from facestream.detector_service.owner.launch import start_owner
from facestream.detector_service.owner.merging import split
from facestream.detector_service.owner.remote import OwnerStopped, RemoteProcessor
from facestream.detector_service.processor import Answer, Candidates
from facestream.detector_service.service import build_processor
from facestream.schemas import Frame, pack_detection

CONFIG = DetectorConfig(model="yunet", provider="cpu", batch=4, embedder="sface", ort_threads=1, decode_threads=1)


def photo(sample_dir: Path, name: str, seq: int, camera: str = "cam") -> Frame:
    data = (sample_dir / name).read_bytes()
    height, width = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape[:2]
    return Frame(camera, seq, 1_000 + seq, width, height, data)


def events_of(processor, batches: list[list[Frame]]) -> list[bytes]:
    """Every batch through ``processor`` as the service drives it (the next begun before the last is
    finished); each outcome serialised (its time of detection left out, its faces' track ids, which
    each process starts at a random number, as the order they first came in), or the dead letter's reason."""
    found, pending, tracks = [], None, {}
    for frames in [*batches, None]:
        following = processor.begin(frames, [f.frame_seq for f in frames]) if frames else None
        if pending is not None:
            for outcome in sorted(processor.finish(pending), key=lambda o: o.tag):
                if outcome.error is None:
                    faces = tuple(
                        f if f.track is None else dataclasses.replace(f, track=tracks.setdefault(f.track, len(tracks)))
                        for f in outcome.event.faces
                    )
                    found.append(pack_detection(dataclasses.replace(outcome.event, detect_ts_ns=0, faces=faces)))
                else:
                    found.append(str(outcome.error))
        pending = following
    return found


@pytest.mark.slow
@pytest.mark.parametrize(
    ("owner_batch", "embedder"), [(4, "sface"), (8, "none")], ids=["apart-embedding", "merged-boxes-in-fronts"]
)
def test_fronts_get_the_events_one_process_makes(sample_dir: Path, owner_batch: int, embedder: str) -> None:
    # With room for 8 frames the owner merges the fronts' batches (3 and 4 frames) waiting together.
    # With an embedder the owner draws the boxes (it cuts the faces out); without, each front does.
    names = ["obama.jpg", "obama2.jpg", "biden.jpg", "einstein.jpg", "breakingbad.jpg", "obama3.jpg"]
    batches = [[photo(sample_dir, n, 10 * b + i, f"cam{b}") for i, n in enumerate(names[b : b + 3])] for b in range(4)]
    broken = Frame("cam9", 99, 0, 640, 480, b"\xff\xd8 not a jpeg")
    batches[1] = [*batches[1], broken]
    config = dataclasses.replace(CONFIG, embedder=embedder)
    alone = build_processor(config)
    try:
        expected = [events_of(alone, batches[f::2]) for f in range(2)]
    finally:
        alone.close()

    owner_config = dataclasses.replace(config, batch=owner_batch)
    owner, ends = start_owner(functools.partial(build_processor, owner_config), fronts=2)
    # The second front's slots are too small for one photo: they grow as its batches need.
    fronts = [RemoteProcessor(ends[0]), RemoteProcessor(ends[1], slot_bytes=1024)]
    try:
        got = [events_of(front, batches[f::2]) for f, front in enumerate(fronts)]
    finally:
        for front in fronts:
            front.close()
        owner.join(timeout=60)
    assert owner.exitcode == 0
    assert got == expected
    assert any("do not decode" in outcome for outcome in got[1] if isinstance(outcome, str))
    assert fronts[0].describe().startswith("yunet v2023mar on cpu, input 640x480")
    assert ("embeddings sface v2021dec" in fronts[0].describe()) == (embedder == "sface")
    stats = fronts[0].stats
    assert stats.batches == 2 and stats.infer_s > 0 and stats.postprocess_s > 0
    assert (stats.embed_s > 0) == (embedder == "sface")


def test_a_merged_answer_splits_back_into_each_batch_s_own() -> None:
    boxes = np.arange(20, dtype=np.float32).reshape(5, 4)
    merged = Answer(
        errors={1: "not a JPEG", 4: "truncated"},
        good=[0, 2, 3, 5, 6],
        faces=Detections(boxes, np.arange(5, dtype=np.float32)),
        counts=np.array([2, 0, 1, 1, 1]),
        identity=Identity(np.arange(10, dtype=np.float32).reshape(5, 2)),
        seconds={"infer_s": 0.5},
    )
    first, second, third = split(merged, [3, 2, 2])
    assert (first.errors, first.good, first.counts.tolist()) == ({1: "not a JPEG"}, [0, 2], [2, 0])
    assert first.faces.scores.tolist() == [0, 1] and first.identity.embeddings.tolist() == [[0, 1], [2, 3]]
    assert (second.errors, second.good, second.faces.boxes.tolist()) == ({1: "truncated"}, [0], [[8, 9, 10, 11]])
    assert (third.good, third.faces.scores.tolist()) == ([0, 1], [3, 4])
    assert sum(part.seconds["infer_s"] for part in (first, second, third)) == pytest.approx(0.5)  # shared by frames
    nothing = split(
        dataclasses.replace(merged, errors={0: "x", 1: "y"}, good=[], faces=None, counts=np.zeros(0, int)), [2]
    )
    assert nothing[0].faces is None and nothing[0].errors == {0: "x", 1: "y"}


def test_a_merged_answer_of_faces_embedded_per_track_gives_each_batch_its_own_rows() -> None:
    """Only the embedded faces have a row: each part gets the rows of its own embedded faces, and every
    face's track and sharpness."""
    embedded = np.array([True, False, False, True, True])
    tracks, sharp = np.array([7, 8, 9, 7, 10]), np.arange(5, dtype=np.float32)
    merged = Answer(
        errors={},
        good=[0, 1, 2, 3],
        faces=Detections(np.zeros((5, 4), np.float32), np.arange(5, dtype=np.float32)),
        counts=np.array([2, 1, 1, 1]),
        identity=Identity(np.array([[0.0], [3.0], [4.0]]), embedded, tracks, sharp),
        seconds={},
    )
    first, second = split(merged, [2, 2])  # faces 0-2 and 3-4
    assert first.identity.embeddings.tolist() == [[0.0]] and first.embedded.tolist() == [True, False, False]
    assert second.identity.embeddings.tolist() == [[3.0], [4.0]] and second.identity.tracks.tolist() == [7, 10]
    assert second.identity.sharpness.tolist() == [3.0, 4.0]


def test_a_merged_answer_of_candidates_splits_by_frame() -> None:
    placed = Placements.of([Placed(float(i), 640, 480) for i in range(4)])
    merged = Answer(
        errors={1: "not a JPEG"},
        good=[0, 2, 3, 4],
        faces=None,
        counts=np.zeros(0, np.int64),
        identity=None,
        seconds={"infer_s": 0.4},
        candidates=Candidates({"scores": np.arange(8, dtype=np.float32).reshape(4, 2)}, placed),
    )
    first, second, third = split(merged, [2, 2, 1])
    assert first.good == [0] and first.candidates.outputs["scores"].tolist() == [[0, 1]]
    assert second.good == [0, 1] and [p.scale for p in second.candidates.placed] == [1.0, 2.0]
    assert third.good == [0] and third.candidates.outputs["scores"].tolist() == [[6, 7]]
    assert first.faces is None and first.counts.tolist() == []


def test_an_owner_that_cannot_start_stops_its_fronts_with_the_reason(tmp_path: Path) -> None:
    config = DetectorConfig(model=str(tmp_path / "missing.onnx"), provider="cpu")
    owner, ends = start_owner(functools.partial(build_processor, config), fronts=1)
    with pytest.raises(OwnerStopped, match="missing.onnx"):
        RemoteProcessor(ends[0], start_timeout_s=120)
    owner.join(timeout=60)
    assert owner.exitcode != 0
