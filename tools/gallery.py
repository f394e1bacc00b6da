"""``facestream gallery``: enrol, list and remove the people alerting knows, on the compacted topic
``faces.gallery``. Enrolment runs the detector's own code and models on this machine: the same
detection, alignment and embedding as the service, so enrolled faces compare with live ones."""

import json
import time
from pathlib import Path

import click

from facestream import face_quality
from facestream.config import options, parsed
from facestream.detector_service.config import DetectorConfig
from facestream.errors import ConfigError
from facestream.schemas import GALLERY_TOPIC, ID_MAX, DetectionEvent, SchemaError, pack_gallery_entry, person_id_for

topic_option = click.option("--topic", default=GALLERY_TOPIC, help="The gallery's compacted topic.")


def person_name(text: str) -> str:
    """A name the gallery takes (the contract's length, and a letter or digit for the person id)."""
    if len(text) > ID_MAX:
        raise ValueError(f"a name is at most {ID_MAX} characters, got {len(text)}")
    try:
        person_id_for(text)
    except SchemaError as exc:
        raise ValueError(str(exc)) from None
    return text


PERSON = parsed(person_name, "NAME")


@click.group()
def gallery() -> None:
    """The people alerting knows: enrol them from photos, put them on the watchlist, list and remove them."""


@gallery.command(
    epilog="""\b
Examples:
  facestream gallery enroll --name "Barack Obama" obama.jpg obama2.jpg
  facestream gallery enroll --name guard team-photo.jpg --largest   # several faces: take the largest
  facestream gallery enroll --name "Joe Biden" --watch biden.jpg      # on the watchlist: person_seen
""",
    context_settings={"show_default": True},
)
@click.option("--name", required=True, type=PERSON, help="The person's name; enrolling it again replaces the entry.")
@click.option("--largest", is_flag=True, help="In a photo with several faces, enrol the largest.")
@click.option("--watch", is_flag=True, help="Put the person on the watchlist: seeing them raises a person_seen alert.")
@topic_option
@click.argument("images", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@options(DetectorConfig, only=("model", "provider"))
def enroll(
    name: str, largest: bool, watch: bool, topic: str, images: tuple[Path, ...], model: str, provider: str
) -> None:
    """Detect, align and embed the face in each IMAGE and publish the person to the gallery."""
    person_id = enrol(name, list(images), topic, DetectorConfig(model=model, provider=provider), largest, watch)
    watched = ", watched" if watch else ""
    click.echo(f"enrolled {name!r} as {person_id} from {len(images)} photo(s){watched}")


def enrol(
    name: str, images: list[Path], topic: str, detector: DetectorConfig, largest: bool = False, watch: bool = False
) -> str:
    """Enrol ``name`` from ``images`` with ``detector``'s model on this machine; return the person id.
    ConfigError for an image with no face, or with several unless ``largest``."""
    from facestream import kafka_clients
    from facestream.gallery import publish
    from facestream.schemas import GalleryEntry, person_id_for

    kafka_clients.check_reachable()
    embeddings, embedder = photo_faces([(path.name, path.read_bytes()) for path in images], detector, largest)
    entry = GalleryEntry(
        person_id=person_id_for(name),
        name=name,
        embedder=embedder,
        embeddings=tuple(embeddings),
        enrolled_ts_ns=time.time_ns(),
        images=tuple(path.name for path in images),
        watched=watch,
    )
    publish(topic, entry.person_id, pack_gallery_entry(entry))
    return entry.person_id


def photo_faces(photos: list[tuple[str, bytes]], detector: DetectorConfig, largest: bool = False):
    """(one face embedding per photo, the embedder's ModelRef) from (name, image bytes) pairs, by the
    detector's own detection, alignment and embedding on this machine's CPU, so enrolled faces compare
    with live ones. ConfigError naming the photo for one with no face, with several unless ``largest``,
    or whose face is too poor to recognise by (``face_quality``)."""
    from dataclasses import replace

    from facestream.detector_service.service import build_processor

    frames = [photo_bytes_frame(i, name, data) for i, (name, data) in enumerate(photos)]
    processor = build_processor(
        replace(detector, embedder="sface", embed_every_frame=True, decode="cpu", batch=len(photos)), warm_up=False
    )
    try:
        outcomes = processor.finish(processor.begin(frames, [name for name, _ in photos]))
    finally:
        processor.close()
    embeddings = []
    for outcome in outcomes:
        if outcome.error is not None:
            raise ConfigError(f"{outcome.tag}: {outcome.error}")
        event = outcome.event
        assert isinstance(event, DetectionEvent)  # a face detector's, and every frame decoded
        faces = event.faces
        if not faces:
            raise ConfigError(f"{outcome.tag}: no face found; enrol a photo where the face is clear")
        if len(faces) > 1 and not largest:
            raise ConfigError(f"{outcome.tag}: {len(faces)} faces; pass --largest to enrol the largest one")
        face = max(faces, key=lambda f: (f.box[2] - f.box[0]) * (f.box[3] - f.box[1]))
        why = face_quality.refused(face.box, face.score, face.landmarks, face.sharpness)
        if why is not None:
            raise ConfigError(f"{outcome.tag}: {why}; enrol a sharper, larger, frontal photo")
        embeddings.append(face.embedding)
        embedder = event.embedder
    return embeddings, embedder


@gallery.command(
    epilog="""\b
Examples:
  facestream gallery watch "Joe Biden"          # seeing him raises a person_seen alert
  facestream gallery watch "Joe Biden" --off    # off the watchlist again
"""
)
@click.argument("name", type=PERSON)
@click.option("--off", is_flag=True, help="Take the person off the watchlist.")
@topic_option
def watch(name: str, off: bool, topic: str) -> None:
    """Put an enrolled person (by name or person id) on the watchlist, or take them off."""
    from dataclasses import replace

    from facestream.gallery import publish

    entry = _entry(name, topic)
    publish(topic, entry.person_id, pack_gallery_entry(replace(entry, watched=not off)))
    click.echo(f"{entry.person_id} {'off' if off else 'on'} the watchlist")


@gallery.command("list", epilog="\b\nExamples:\n  facestream gallery list\n  facestream gallery list --json")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per person.")
@topic_option
def list_people(as_json: bool, topic: str) -> None:
    """The people enrolled now."""
    from facestream import gallery as store

    for entry in store.load(topic=topic).entries():
        enrolled = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.enrolled_ts_ns / 1e9))
        summary = {"person_id": entry.person_id, "name": entry.name, "faces": len(entry.embeddings)}
        if as_json:
            click.echo(
                json.dumps({**summary, "images": list(entry.images), "enrolled": enrolled, "watched": entry.watched})
            )
        else:
            watched = ", watched" if entry.watched else ""
            faces = len(entry.embeddings)
            click.echo(f"{entry.person_id:<24} {entry.name:<24} {faces} face(s), enrolled {enrolled}{watched}")


@gallery.command(epilog='\b\nExamples:\n  facestream gallery remove "Barack Obama"')
@click.argument("name", type=PERSON)
@topic_option
def remove(name: str, topic: str) -> None:
    """Remove a person (by name or person id) from the gallery."""
    from facestream.gallery import publish

    person_id = _entry(name, topic).person_id
    publish(topic, person_id, None)
    click.echo(f"removed {person_id}")


@gallery.command(
    epilog="""\b
Examples:
  facestream gallery undo 6f1c2a9e-0b7d-5c1e-9a3f-2d4b8e7c1a05   # the alert's id, as the page and the alerts show it
"""
)
@click.argument("alert_id")
@topic_option
def undo(alert_id: str, topic: str) -> None:
    """Take out what the dashboard taught the gallery from an alert: the faces enrolled from it ("this is
    NAME"), or the negatives it added ("not this person"). A person left with no face is removed."""
    from facestream import gallery as store

    changes = store.undo(store.load(topic=topic), alert_id)
    if not changes:
        raise ConfigError(f"alert {alert_id} taught the gallery nothing")
    for person_id, entry in changes.items():
        store.publish(topic, person_id, None if entry is None else pack_gallery_entry(entry))
        click.echo(f"{person_id}: {'removed' if entry is None else 'restored to what it was before that alert'}")


def _entry(name: str, topic: str):
    """The gallery's entry for a name or person id; ConfigError if there is none."""
    from facestream import gallery as store
    from facestream.schemas import person_id_for

    person_id = person_id_for(name)
    for entry in store.load(topic=topic).entries():
        if entry.person_id == person_id:
            return entry
    raise ConfigError(f"{name!r} ({person_id}) is not in the gallery; `facestream gallery list` shows who is")


def photo_frame(seq: int, path: Path):
    """A photo file as the detector takes frames: its JPEG bytes (other formats are encoded as JPEG)."""
    return photo_bytes_frame(seq, path.name, path.read_bytes())


def photo_bytes_frame(seq: int, name: str, data: bytes):
    """``photo_frame`` for a photo's bytes (an upload), named ``name``."""
    import cv2
    import numpy as np

    from facestream.schemas import Frame

    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ConfigError(f"{name} is not a readable image")
    if not data.startswith(b"\xff\xd8"):
        data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    return Frame(name, seq, time.time_ns(), image.shape[1], image.shape[0], data)
