import msgpack
import pytest

from facestream.schemas import (
    GalleryEntry,
    ModelRef,
    SchemaError,
    pack_gallery_entry,
    person_id_for,
    unpack_gallery_entry,
)

ENTRY = GalleryEntry(
    person_id="barack-obama",
    name="Barack Obama",
    embedder=ModelRef("sface", "2021dec", "0ba9"),
    embeddings=(bytes(256), bytes(range(256))),
    enrolled_ts_ns=5,
    images=("obama.jpg", "obama2.jpg"),
)


def test_round_trip() -> None:
    assert unpack_gallery_entry(pack_gallery_entry(ENTRY)) == ENTRY


def test_person_ids_come_from_names() -> None:
    assert person_id_for("Barack  Obama!") == "barack-obama" == person_id_for("barack obama")
    with pytest.raises(SchemaError, match="at least one letter or digit"):
        person_id_for("???")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"embeddings": []}, "embeddings"),
        ({"embeddings": [b"abc"]}, "embeddings[0]"),
        ({"embedder": {"name": "sface"}}, "embedder.version"),
        ({"images": [1]}, "images"),
    ],
)
def test_bad_entries_name_the_field(changes: dict, field: str) -> None:
    payload = msgpack.packb({"schema_version": 1, **ENTRY.fields(), **changes}, use_bin_type=True)
    with pytest.raises(SchemaError) as caught:
        unpack_gallery_entry(payload)
    assert caught.value.field == field
