"""``facestream gallery``: enrol, list and remove the people alerting knows, on the compacted topic
``faces.gallery``. Enrolment runs the detector's own code and models on this machine: the same
detection, alignment and embedding as the service, so enrolled faces compare with live ones."""

import json
import time
from pathlib import Path

import click

from facestream.config import options
from facestream.detector_service.config import DetectorConfig
from facestream.errors import ConfigError
from facestream.schemas import GALLERY_TOPIC

topic_option = click.option("--topic", default=GALLERY_TOPIC, help="The gallery's compacted topic.")


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
@click.option("--name", required=True, help="The person's name; enrolling it again replaces the entry.")
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
    from dataclasses import replace

    from facestream import kafka_clients
    from facestream.detector_service.service import build_processor
    from facestream.schemas import GalleryEntry, pack_gallery_entry, person_id_for

    kafka_clients.check_reachable()
    processor = build_processor(replace(detector, embedder="sface", decode="cpu", batch=len(images)))
    try:
        frames = [photo_frame(i, path) for i, path in enumerate(images)]
        outcomes = processor.finish(processor.begin(frames, images))
    finally:
        processor.close()
    embeddings = []
    for outcome in outcomes:
        if outcome.error is not None:
            raise ConfigError(f"{outcome.tag}: {outcome.error}")
        faces = outcome.event.faces
        if not faces:
            raise ConfigError(f"{outcome.tag}: no face found; enrol a photo where the face is clear")
        if len(faces) > 1 and not largest:
            raise ConfigError(f"{outcome.tag}: {len(faces)} faces; pass --largest to enrol the largest one")
        face = max(faces, key=lambda f: (f.box[2] - f.box[0]) * (f.box[3] - f.box[1]))
        embeddings.append(face.embedding)
    entry = GalleryEntry(
        person_id=person_id_for(name),
        name=name,
        embedder=outcomes[0].event.embedder,
        embeddings=tuple(embeddings),
        enrolled_ts_ns=time.time_ns(),
        images=tuple(path.name for path in images),
        watched=watch,
    )
    _publish(topic, entry.person_id, pack_gallery_entry(entry))
    return entry.person_id


@gallery.command(
    epilog="""\b
Examples:
  facestream gallery watch "Joe Biden"          # seeing him raises a person_seen alert
  facestream gallery watch "Joe Biden" --off    # off the watchlist again
"""
)
@click.argument("name")
@click.option("--off", is_flag=True, help="Take the person off the watchlist.")
@topic_option
def watch(name: str, off: bool, topic: str) -> None:
    """Put an enrolled person (by name or person id) on the watchlist, or take them off."""
    from dataclasses import replace

    from facestream.schemas import pack_gallery_entry

    entry = _entry(name, topic)
    _publish(topic, entry.person_id, pack_gallery_entry(replace(entry, watched=not off)))
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
@click.argument("name")
@topic_option
def remove(name: str, topic: str) -> None:
    """Remove a person (by name or person id) from the gallery."""
    person_id = _entry(name, topic).person_id
    _publish(topic, person_id, None)
    click.echo(f"removed {person_id}")


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
    """A photo as the detector takes frames: its JPEG bytes (other formats are encoded as JPEG)."""
    import cv2
    import numpy as np

    from facestream.schemas import Frame

    data = path.read_bytes()
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ConfigError(f"{path} is not a readable image")
    if not data.startswith(b"\xff\xd8"):
        data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    return Frame(path.name, seq, time.time_ns(), image.shape[1], image.shape[0], data)


def _publish(topic: str, person_id: str, value: bytes | None) -> None:
    """Write one gallery record (an entry, or a tombstone) and wait for the broker to take it."""
    from facestream import kafka_clients
    from facestream.errors import BrokerError

    kafka_clients.ensure_topics({topic: 1}, configs={topic: kafka_clients.COMPACTED})
    producer = kafka_clients.producer("facestream-gallery")
    failed = []
    kafka_clients.send(producer, topic, value, person_id.encode(), on_delivery=lambda err, _msg: failed.append(err))
    if kafka_clients.flush(producer, topic, 30.0):
        raise BrokerError(f"the broker did not acknowledge the gallery record for {person_id} within 30 s")
    if failed[0] is not None:
        kafka_clients.check_allowed(failed[0], f"write {topic}")
        raise BrokerError(f"the broker refused the gallery record for {person_id}: {failed[0].str()}")
