"""Identity along the detector's tracks: how a subscriber gives a face that carries no embedding the
embedding of its track, as schemas/README.md ("Faces of one track") says in words.

A detector running an embedder embeds a face when its track begins and again only when the face is
markedly better or some seconds have passed; every face names its ``track``. A reader keeps, per
camera, each track's last embedding (``memory``, a JSON-able dict the reader stores with the rest of
its camera state) and lends it to the track's faces that have none. What it may never do is lend an
embedding across cameras or embedders: track ids are per camera, and vectors of two embedders do not
compare. A track not seen for ``FORGET_AFTER_NS`` is forgotten (the detector ends a track after a far
shorter gap, so a later face of that id would be a new track's only if ids repeated, which they do
not: ``README``).
"""

import base64
from dataclasses import replace

from facestream.schemas.detection import DetectionEvent

FORGET_AFTER_NS = 10_000_000_000  # a track's embedding is kept this long after its last face


def carry(memory: dict, event: DetectionEvent) -> tuple[DetectionEvent, tuple[int, ...]]:
    """``event`` with each face that names a track but carries no embedding given the track's last one
    (the face keeps its own box, score, landmarks and sharpness), and the indices of the faces given one.
    ``memory`` is one camera's, changed in place. Events may come more than once or a little out of
    order (at-least-once delivery): an embedding replaces a track's only when its frame is not older
    than the one kept."""
    embedder = None if event.embedder is None else event.embedder.weights_sha256
    if memory.get("embedder") != embedder:  # another embedder's vectors mean nothing with this one's
        memory.clear()
        memory["embedder"] = embedder
    tracks: dict[str, list] = memory.setdefault("tracks", {})
    now = event.capture_ts_ns
    for name in [name for name, (_, _, seen) in tracks.items() if now - seen > FORGET_AFTER_NS]:
        del tracks[name]
    if embedder is None:
        return event, ()
    faces, lent = list(event.faces), []
    for index, face in enumerate(faces):
        if face.track is None:
            continue
        name = str(face.track)
        kept = tracks.get(name)  # [embedding as base64, its frame's capture time, the last face's]
        if face.embedding is not None and (kept is None or kept[1] <= now):
            tracks[name] = [base64.b64encode(face.embedding).decode(), now, now]
        elif kept is not None:
            if face.embedding is None:
                faces[index] = replace(face, embedding=base64.b64decode(kept[0]))
                lent.append(index)
            kept[2] = max(kept[2], now)
    return (replace(event, faces=tuple(faces)) if lent else event), tuple(lent)
