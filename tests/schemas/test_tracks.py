"""Faces of one detector track: the track id on the wire, and how a reader lends a track's embedding."""

import json

import msgpack
import numpy as np
import pytest

from facestream.schemas import DetectionEvent, Face, ModelRef, SchemaError, pack_detection, unpack_detection
from facestream.schemas.tracks import FORGET_AFTER_NS, carry

MODEL = ModelRef("yunet", "2023mar", "8f23")
SFACE = ModelRef("sface", "2021dec", "0ba9")
BOX = (10.0, 20.0, 110.0, 150.0)


def vector(seed: int) -> bytes:
    v = np.random.default_rng(seed).normal(size=128)
    return (v / np.linalg.norm(v)).astype("<f2").tobytes()


def event(seq: int, *faces: Face, embedder: ModelRef | None = SFACE, seconds: float | None = None) -> DetectionEvent:
    at = round((seq / 10 if seconds is None else seconds) * 1e9)
    return DetectionEvent(f"e{seq}", "door", seq, at, at, MODEL, 640, 480, faces, embedder)


def test_a_face_names_its_track_on_the_wire_and_back() -> None:
    sent = event(1, Face(BOX, 0.9, embedding=vector(1), sharpness=30.0, track=2**63 - 1), Face(BOX, 0.8, track=0))
    assert unpack_detection(pack_detection(sent)) == sent


@pytest.mark.parametrize("track", [-1, True, 1.5, "7", 2**63])
def test_a_track_that_is_not_a_64_bit_id_is_refused(track) -> None:
    fields = {"schema_version": 1, **event(1, Face(BOX, 0.9)).fields()}
    fields["faces"][0]["track"] = track
    with pytest.raises(SchemaError) as refused:
        unpack_detection(msgpack.packb(fields, use_bin_type=True))
    assert refused.value.field == "faces[0].track"


def test_a_reader_of_old_events_sees_no_track() -> None:
    old = {"schema_version": 1, **event(1, Face(BOX, 0.9, embedding=vector(1))).fields()}
    assert unpack_detection(msgpack.packb(old, use_bin_type=True)).faces[0].track is None


def test_faces_of_a_track_are_lent_its_last_embedding_and_keep_their_own_measures() -> None:
    memory: dict = {}
    first, lent = carry(memory, event(1, Face(BOX, 0.9, embedding=vector(1), sharpness=40.0, track=5)))
    assert lent == () and first.faces[0].embedding == vector(1)
    later, lent = carry(memory, event(2, Face((12.0, 20.0, 112.0, 150.0), 0.7, sharpness=9.0, track=5)))
    assert lent == (0,) and later.faces[0].embedding == vector(1)
    assert later.faces[0].box == (12.0, 20.0, 112.0, 150.0) and later.faces[0].sharpness == 9.0
    _, lent = carry(memory, event(3, Face(BOX, 0.9, embedding=vector(3), track=5)))  # embedded again
    again, lent = carry(memory, event(4, Face(BOX, 0.9, track=5)))
    assert lent == (0,) and again.faces[0].embedding == vector(3)


def test_nothing_is_lent_across_tracks_to_faces_without_one_or_across_embedders() -> None:
    memory: dict = {}
    carry(memory, event(1, Face(BOX, 0.9, embedding=vector(1), track=5)))
    other, lent = carry(memory, event(2, Face(BOX, 0.9, track=6), Face(BOX, 0.9)))
    assert lent == () and all(face.embedding is None for face in other.faces)
    newer = ModelRef("sface", "2022", "ffff")
    changed, lent = carry(memory, event(3, Face(BOX, 0.9, track=5), embedder=newer))
    assert lent == () and changed.faces[0].embedding is None


def test_a_replayed_older_embedding_does_not_replace_a_newer_one() -> None:
    memory: dict = {}
    carry(memory, event(1, Face(BOX, 0.9, embedding=vector(1), track=5)))
    carry(memory, event(5, Face(BOX, 0.9, embedding=vector(5), track=5)))
    carry(memory, event(1, Face(BOX, 0.9, embedding=vector(1), track=5)))  # at-least-once: sent again
    latest, _ = carry(memory, event(6, Face(BOX, 0.9, track=5)))
    assert latest.faces[0].embedding == vector(5)


def test_a_track_unseen_for_long_is_forgotten_and_memory_stays_json() -> None:
    memory: dict = {}
    carry(memory, event(1, Face(BOX, 0.9, embedding=vector(1), track=5), seconds=0))
    kept, lent = carry(memory, event(2, Face(BOX, 0.9, track=5), seconds=FORGET_AFTER_NS / 1e9 - 1))
    assert lent == (0,)
    json.dumps(memory)
    gone, lent = carry(memory, event(3, Face(BOX, 0.9, track=5), seconds=2 * FORGET_AFTER_NS / 1e9))
    assert lent == () and gone.faces[0].embedding is None and memory["tracks"] == {}


def test_an_event_without_an_embedder_lends_nothing() -> None:
    memory: dict = {}
    plain = event(1, Face(BOX, 0.9, track=5), embedder=None)
    assert carry(memory, plain) == (plain, ())
