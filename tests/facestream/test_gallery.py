"""The gallery taught from alerts: faces added to a person, negatives that turn a wrong match away,
and both undone by the alert that taught them."""

import numpy as np
import pytest
from helpers.alert import SFACE, enrolled, person

from facestream.gallery import Gallery, not_them, taught, untaught
from facestream.schemas import GalleryEntry, ModelRef, pack_gallery_entry, unpack_gallery_entry
from facestream.schemas.gallery import EMBEDDINGS_MAX


def f16(vector: np.ndarray) -> bytes:
    return vector.astype("<f2").tobytes()


def near(vector: np.ndarray, other: np.ndarray, weight: float) -> np.ndarray:
    """A unit vector between ``vector`` and ``other``: a look-alike."""
    mixed = (1 - weight) * vector + weight * other
    return mixed / np.linalg.norm(mixed)


def gallery_of(*entries: GalleryEntry) -> Gallery:
    gallery = Gallery()
    for entry in entries:
        gallery.apply(entry.person_id.encode(), pack_gallery_entry(entry))
    return gallery


def test_a_face_taught_from_an_alert_makes_a_new_person_known() -> None:
    entry = taught(None, "Joe Biden", SFACE, [f16(person(7))], "alert-1")
    assert (entry.person_id, entry.images) == ("joe-biden", ("alert:alert-1",))
    assert gallery_of(entry).best_match(person(7), SFACE)[0] == "joe-biden"
    assert unpack_gallery_entry(pack_gallery_entry(entry)) == entry


def test_teaching_adds_to_a_person_and_keeps_the_newest_faces() -> None:
    alice = enrolled().entry("alice")
    more = taught(alice, "Alice", SFACE, [f16(person(i)) for i in range(10, 10 + EMBEDDINGS_MAX)], "a2")
    assert len(more.embeddings) == EMBEDDINGS_MAX and "a.jpg" not in more.images  # the oldest made room
    with pytest.raises(ValueError, match="do not compare"):
        taught(alice, "Alice", ModelRef("arcface", "1", "x"), [f16(person(7))], "a3")


def test_a_negative_turns_a_wrong_match_away_and_undoing_it_brings_it_back() -> None:
    alice = enrolled().entry("alice")
    stranger = near(person(1), person(9), 0.3)  # resembles Alice
    assert gallery_of(alice).best_match(stranger, SFACE)[0] == "alice"
    told = not_them(alice, [f16(stranger)], "alert-9")
    assert gallery_of(told).best_match(stranger, SFACE) == (None, -1.0)
    assert gallery_of(told).best_match(person(1), SFACE)[0] == "alice"  # Alice herself is still Alice
    bob = GalleryEntry("bob", "Bob", SFACE, (f16(person(9)),), 0, ("b.jpg",))
    person_id, similarity = gallery_of(told, bob).best_match(stranger, SFACE)  # the next best person
    assert person_id == "bob" and similarity < gallery_of(alice).best_match(stranger, SFACE)[1]
    assert untaught(told, "alert-9") == alice


def test_undoing_an_alert_s_teaching_leaves_what_else_was_taught() -> None:
    entry = taught(None, "Joe Biden", SFACE, [f16(person(7))], "one")
    entry = taught(entry, "Joe Biden", SFACE, [f16(person(8))], "two")
    assert untaught(entry, "one").images == ("alert:two",)
    assert untaught(untaught(entry, "one"), "two") is None  # no face left: the person goes
