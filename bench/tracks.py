"""Face tracks against ground truth: known people moving over a real street, through the real detector
(YuNet + SFace on the CPU) and the alerting service's face tracker, scored with motmetrics.

The footage is made at run time from what set-up fetches (nothing is stored): six people, each the
face of a photo of their own (the portraits and annotated photos ``bench threshold`` uses), cut out
with a soft oval edge and moved over vtest.avi's street by a script per camera: walking across the
picture and crossing each other (one passes in front of the other and hides them), coming towards the
camera (growing), stepping out of view for a moment and coming back elsewhere. Where each face is, and
how much of it is in view, is known for every frame: the face's box on its photo (YuNet's, found
once), moved and scaled with the cut-out, and which cut-out each pixel shows. A face counts as seen
when more than half of its box is in view.

Per camera and frame rate, the detector's events go through ``face_tracks.follow_faces`` in capture
order, every one of them (the tracker's rate set to the camera's; a worker follows 5 frames a second
by default, which the 5 fps rows measure), and motmetrics matches the tracks to the true faces by box
overlap (IoU 0.5 or more; faces under 24 px, the street's own passers-by, are left out): IDF1 (the
share of faces given the identity their person's track mostly has), ID switches (a person's track
changing) per 100 seconds of people in view, and MOTA (misses, false tracks and switches against the
true faces).

The same events then go through the alerting rules that name people (stranger and person_seen, with
their defaults: faces followed 5 times a second), against a gallery of two people enrolled from other
photos of theirs (``ENROLLED``; one on the watchlist), and each alert is given to the true person most
of its evidence lies on: how many alerts each visit made (a person's walk on a camera is one visit:
their time out of view is shorter than the rules' ``end_after_s``), and how many named the wrong
person. The cameras come one after the other (``CAMERA_GAP_S`` apart), and the stranger alerts of all
three are kept by the alert store's writer in a database of its own, which groups them into recurring
strangers (``bench.grouping``): purity, completeness and each stranger's journey against where they
walked.
"""

import math
import statistics
import time
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from bench import save, settings_of
from bench.figures import Target, newest, source
from bench.grouping import grouped
from bench.machine import describe
from bench.settings import TracksBenchConfig
from bench.threshold import PEOPLE, photos
from facestream import samples
from facestream.alertdb import strangers
from facestream.alerting.config import AlertingConfig
from facestream.alerting.rules.camera import lend, on_event
from facestream.alerting.rules.face_tracks import FaceTrackSettings, follow_faces
from facestream.alerting.rules.recognition import Recognition
from facestream.dashboard.facesearch import MIN_SIMILARITY
from facestream.gallery import Gallery, as_vector
from facestream.schemas import Alert, DetectionEvent, Frame, GalleryEntry, pack_gallery_entry

WIDTH, HEIGHT = 640, 480
DURATION_S = 20.0
CAMERA_GAP_S = 30.0  # camera n's footage starts n times this after the first's: a journey has an order
SEEN_SHARE = 0.5  # a face more hidden than this (by later cut-outs) is not expected to be found
MATCH_IOU = 0.5
SMALLEST_PX = 24  # tracks on faces smaller than this are not scored: vtest.avi's pedestrians, far off
# One photo per person: the first of theirs in bench threshold's list.
CAST = {person: name for name, person in reversed(list(PEOPLE.items()))}
# Enrolled from another photo than the one they walk as: (photo, watched). The others are strangers.
ENROLLED = {"Barack Obama": ("obama2.jpg", True), "Albert Einstein": ("tongue.jpg", False)}
# The detector as it runs by default, following faces and embedding each when its track needs it,
# and with every face of every frame embedded (--embed-every-frame), on the same footage.
PER_TRACK, EVERY_FRAME = "per_track", "every_frame"
MODES = (PER_TRACK, EVERY_FRAME)


@dataclass(frozen=True)
class Walk:
    """One person's path on one camera: where the cut-out's centre is and how wide it is, from ``enter_s``
    to ``leave_s``, moving in a straight line from ``start`` to ``end`` (growing from ``side`` to
    ``end_side``), out of view during each of ``away``."""

    person: str
    start: tuple[float, float]
    end: tuple[float, float]
    side: float
    end_side: float
    enter_s: float = 0.0
    leave_s: float = DURATION_S
    away: tuple[tuple[float, float], ...] = ()

    def at(self, t: float) -> tuple[float, float, float] | None:
        """(centre x, centre y, side) at ``t``, or None when the person is not in the picture."""
        if not self.enter_s <= t < self.leave_s or any(a <= t < b for a, b in self.away):
            return None
        share = (t - self.enter_s) / (self.leave_s - self.enter_s)
        return (
            self.start[0] + (self.end[0] - self.start[0]) * share,
            self.start[1] + (self.end[1] - self.start[1]) * share,
            self.side + (self.end_side - self.side) * share,
        )


# Three cameras. Later walks are drawn over earlier ones: whoever comes later in a list passes in front,
# hiding the other for up to about two seconds (the tracker's lost_after_s is three).
CAMERAS: dict[str, tuple[Walk, ...]] = {
    "street": (
        Walk("Barack Obama", (60, 200), (580, 220), 150, 150),
        Walk("Joe Biden", (580, 230), (60, 210), 140, 140, away=((13.0, 14.5),)),
        Walk("Albert Einstein", (320, 400), (320, 150), 160, 200, enter_s=4.0, leave_s=18.0),
    ),
    "lobby": (
        Walk("Takeo Kanade", (60, 150), (580, 330), 130, 130, leave_s=12.0),
        Walk("Bryan Cranston", (580, 150), (60, 330), 130, 130, enter_s=1.0, leave_s=13.0, away=((3.0, 4.5),)),
        Walk("Lena Forsen", (320, 250), (330, 240), 130, 130, enter_s=2.0, leave_s=20.0),
        Walk("Joe Biden", (100, 400), (540, 390), 110, 120, enter_s=12.5, leave_s=20.0),
    ),
    "door": (
        Walk("Albert Einstein", (80, 260), (560, 240), 160, 180, leave_s=12.0),
        Walk("Barack Obama", (560, 200), (80, 260), 140, 120, enter_s=3.0, away=((9.0, 10.0),)),
        Walk("Bryan Cranston", (120, 140), (420, 300), 110, 160, enter_s=8.0),
        Walk("Joe Biden", (600, 380), (260, 370), 140, 140, enter_s=13.0),
    ),
}


@dataclass(frozen=True)
class Cutout:
    """A person's face cut from their photo: the pixels, an oval mask, and the face's box in them."""

    pixels: np.ndarray
    mask: np.ndarray  # float32, 1 inside the oval, falling to 0 at its edge
    face: tuple[float, float, float, float]  # in the cut-out's pixels


def cutouts(faces: dict[str, tuple[np.ndarray, tuple[float, float, float, float]]]) -> dict[str, Cutout]:
    """A square around each face (2.2 times its longer side), with a soft oval edge."""
    found = {}
    for person, (photo, (x0, y0, x1, y1)) in faces.items():
        side = int(2.2 * max(x1 - x0, y1 - y0))
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        left, top = int(cx - side / 2), int(cy - side / 2)
        padded = cv2.copyMakeBorder(photo, side, side, side, side, cv2.BORDER_REPLICATE)
        pixels = padded[top + side : top + 2 * side, left + side : left + 2 * side]
        oval = np.zeros((side, side), np.float32)
        cv2.ellipse(oval, (side // 2, side // 2), (int(side * 0.42), int(side * 0.48)), 0, 0, 360, 1.0, -1)
        found[person] = Cutout(
            pixels, cv2.GaussianBlur(oval, (0, 0), side / 20), (x0 - left, y0 - top, x1 - left, y1 - top)
        )
    return found


def draw(background: np.ndarray, walks: tuple[Walk, ...], cuts: dict[str, Cutout], t: float):
    """The frame at ``t`` and the true faces in it: [(person, box, share of the face not in view)]."""
    frame = background.copy()
    owner = np.full(frame.shape[:2], -1, np.int16)  # whose cut-out each pixel shows
    placed: list[tuple[str, tuple[float, ...]]] = []
    for walk in walks:
        where = walk.at(t)
        if where is None:
            continue
        cx, cy, side = where
        cut = cuts[walk.person]
        size = max(int(round(side)), 2)
        pixels = cv2.resize(cut.pixels, (size, size), interpolation=cv2.INTER_AREA)
        mask = cv2.resize(cut.mask, (size, size))
        left, top = int(round(cx - size / 2)), int(round(cy - size / 2))
        _blend(frame, owner, len(placed), pixels, mask, left, top)
        scale = size / cut.pixels.shape[0]
        placed.append((walk.person, tuple(v * scale + o for v, o in zip(cut.face, (left, top, left, top)))))
    truth = []
    for k, (person, face) in enumerate(placed):
        x0, y0, x1, y1 = (int(round(v)) for v in face)
        area = max((x1 - x0) * (y1 - y0), 1)
        shown = int((owner[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)] == k).sum())
        truth.append((person, face, 1.0 - shown / area))
    return frame, truth


def _blend(frame: np.ndarray, owner: np.ndarray, who: int, pixels: np.ndarray, mask: np.ndarray, left: int, top: int):
    """``pixels`` laid over ``frame`` at (left, top) through ``mask``, clipped to the frame; where the
    mask is over a half, ``owner`` says ``who`` is shown."""
    h, w = pixels.shape[:2]
    x0, y0, x1, y1 = max(left, 0), max(top, 0), min(left + w, frame.shape[1]), min(top + h, frame.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    part = (slice(y0 - top, y1 - top), slice(x0 - left, x1 - left))
    under = frame[y0:y1, x0:x1].astype(np.float32)
    weight = mask[part][..., None]
    frame[y0:y1, x0:x1] = (under + (pixels[part].astype(np.float32) - under) * weight).astype(np.uint8)
    owner[y0:y1, x0:x1][mask[part] > 0.5] = who


def _overlap_share(box, cover) -> float:
    """How much of ``box`` ``cover`` covers (0 to 1)."""
    width = min(box[2], cover[2]) - max(box[0], cover[0])
    height = min(box[3], cover[3]) - max(box[1], cover[1])
    area = (box[2] - box[0]) * (box[3] - box[1])
    return 0.0 if width <= 0 or height <= 0 or area <= 0 else width * height / area


def run(cfg: TracksBenchConfig, command: str) -> dict:
    import motmetrics  # noqa: F401  # fail before the detector starts if the dev extra is missing

    from facestream.detector_service.config import DetectorConfig
    from facestream.detector_service.service import build_processor

    detector = DetectorConfig(model="yunet", embedder="sface", decode="cpu", provider=cfg.provider, batch=cfg.batch)
    # The detector as it runs by default (faces embedded per track) beside every face embedded.
    processors = {mode: build_processor(replace(detector, embed_every_frame=mode == EVERY_FRAME)) for mode in MODES}
    processor = processors[EVERY_FRAME]  # the cast's photos and the gallery: every face embedded
    settings = FaceTrackSettings()
    rows: list[dict] = []
    result: dict[str, Any] = {
        "benchmark": "tracks",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "tracker": settings_of(settings),
        "rows": rows,
    }
    result["recurring"] = recurring_rows = []
    try:
        faces = _faces(processor)
        cuts = cutouts({person: (photo, box) for person, (photo, box, _) in faces.items()})
        queries = {person: vector for person, (_, _, vector) in faces.items()}
        gallery = _gallery(processor)
        streets = _backgrounds()
        for fps in cfg.fps:
            for mode, detecting in processors.items():
                visits: list[tuple[str, Alert]] = []
                for index, (camera, walks) in enumerate(CAMERAS.items()):
                    t0 = time.perf_counter()
                    events, truth = _stream(detecting, camera, walks, cuts, streets, index, fps)
                    row = {"camera": camera, "fps": fps, "mode": mode, **score(events, truth, settings, fps)}
                    placed = placed_alerts(events, truth, gallery)
                    row |= alerts_per_visit([(person, last) for person, last, _ in placed])
                    row["first_alert_s"] = first_alerts(placed, truth, events)
                    row["search"] = searched(events, truth, queries)
                    row["embedded_share"] = _embedded_share(events)
                    row["seconds"] = round(time.perf_counter() - t0, 1)
                    rows.append(row)
                    visits += [(p, a) for p, a, _ in placed if p is not None and a.kind == "stranger"]
                    print(f"{camera} at {fps:g} fps, {mode}: {row}", flush=True)
                    save({**result, "complete": False}, cfg.out)
                recurring_rows.append({"fps": fps, "mode": mode, **recurring(visits)})
                print(f"recurring strangers at {fps:g} fps, {mode}: {recurring_rows[-1]}", flush=True)
    finally:
        for detecting in processors.values():
            detecting.close()
    result["complete"] = True
    save(result, cfg.out)
    print(f"results: {cfg.out}")
    return result


def _faces(processor) -> dict[str, tuple[np.ndarray, tuple[float, float, float, float], np.ndarray]]:
    """Each person's photo, the largest face YuNet finds on it, and that face's embedding (what a search
    by this photo asks for)."""
    every = photos()
    found = {}
    for person, name in CAST.items():
        photo, event, face = _largest_face(processor, every[name])
        assert face.embedding is not None
        found[person] = (photo, tuple(face.box), as_vector(face.embedding))
    return found


def _largest_face(processor, path) -> tuple[np.ndarray, DetectionEvent, Any]:
    """A photo, the detector's event for it and its largest face."""
    photo = samples.read_photo(path)
    data = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    (outcome,) = processor.finish(processor.begin([Frame("cast", 0, 0, photo.shape[1], photo.shape[0], data)], [None]))
    event = outcome.event
    assert isinstance(event, DetectionEvent) and event.faces, f"no face on {path}"
    return photo, event, max(event.faces, key=lambda f: (f.box[2] - f.box[0]) * (f.box[3] - f.box[1]))


def _gallery(processor) -> Gallery:
    """The people of ``ENROLLED``, each from their own photo's largest face."""
    gallery, every = Gallery(), photos()
    for person, (photo, watched) in ENROLLED.items():
        _, event, face = _largest_face(processor, every[photo])
        assert event.embedder is not None and face.embedding is not None
        entry = GalleryEntry(person, person, event.embedder, (face.embedding,), 0, (photo,), watched)
        gallery.apply(person.encode(), pack_gallery_entry(entry))
    return gallery


def placed_alerts(events: list, truth: list, gallery: Gallery) -> list[tuple[str | None, Alert, Alert]]:
    """The stranger and person_seen alerts of one camera's ``events`` (the rules' defaults; faces lent
    their detector track's embedding, as the worker lends them), each as its latest record, with the
    true person most of its evidence lies on (None: nobody true), and its first record."""
    settings = AlertingConfig(rules="stranger,person_seen").for_camera(events[0].camera_id)
    state: dict = {}
    first: dict[str, Alert] = {}  # alert id -> its first record
    last: dict[str, Alert] = {}  # alert id -> its latest record
    for event in events:
        for alert in on_event(state, event, gallery, settings) or []:
            first.setdefault(alert.alert_id, alert)
            last[alert.alert_id] = alert
    placed: list[tuple[str | None, Alert, Alert]] = []
    for alert in last.values():
        votes = [_person_at(truth[s.frame_seq], s.box) for s in alert.evidence if s.box is not None]
        people = [v for v in votes if v is not None]
        placed.append((max(set(people), key=people.count) if people else None, alert, first[alert.alert_id]))
    return placed


def first_alerts(placed: list[tuple[str | None, Alert, Alert]], truth: list, events: list) -> dict[str, float]:
    """Per person alerted for, seconds from the first frame their face is in view (more than half of it,
    large enough to score) to their alert's ``new`` record's frame."""
    delays = {}
    for person, _, opened in placed:
        if person is None:
            continue
        seen = next(
            events[k].capture_ts_ns
            for k, faces in enumerate(truth)
            if any(p == person and hidden <= SEEN_SHARE and _side(box) >= SMALLEST_PX for p, box, hidden in faces)
        )
        delays[person] = round((opened.updated_ts_ns - seen) / 1e9, 3)
    return delays


def searched(events: list, truth: list, queries: dict[str, np.ndarray]) -> dict:
    """Search by face over what the alert store keeps of these events (``--sightings``: every face that
    carries its own embedding), each person asked for by their photo at the search's threshold: the
    frames in which they are found against those they are in view in, and their visit found or not."""
    kept = [
        (event.frame_seq, face.box, as_vector(face.embedding))
        for event in events
        for face in event.faces
        if face.embedding is not None
    ]
    vectors = np.stack([v for _, _, v in kept]) if kept else np.zeros((0, 128), np.float32)
    found_frames = in_view = visits = visits_found = false = 0
    for person, query in queries.items():
        frames = {
            k
            for k, faces in enumerate(truth)
            if any(p == person and hidden <= SEEN_SHARE and _side(box) >= SMALLEST_PX for p, box, hidden in faces)
        }
        if not frames:
            continue
        hits = [kept[i] for i in np.flatnonzero(vectors @ query >= MIN_SIMILARITY)]
        right = {seq for seq, box, _ in hits if _person_at(truth[seq], box) == person}
        false += sum(_person_at(truth[seq], box) != person for seq, box, _ in hits)
        found_frames, in_view = found_frames + len(right & frames), in_view + len(frames)
        visits, visits_found = visits + 1, visits_found + bool(right)
    return {
        "sightings": len(kept),
        "frames_found": found_frames,
        "frames_in_view": in_view,
        "visits": visits,
        "visits_found": visits_found,
        "false_hits": false,
    }


def _embedded_share(events: list) -> float:
    faces = [face for event in events for face in event.faces]
    return round(sum(face.embedding is not None for face in faces) / max(len(faces), 1), 4)


def _side(box) -> float:
    return min(box[2] - box[0], box[3] - box[1])


def alerts_per_visit(placed: list[tuple[str | None, Alert]]) -> dict:
    """{"alerts": {person: {kind: count}}, "wrong_names": person_seen alerts naming someone else,
    "unplaced_alerts": on nobody true}. (A stranger alert on someone enrolled names nobody: it is counted
    in "alerts", against the none that visit owes.)"""
    counts: dict[str, dict[str, int]] = {}
    wrong = unplaced = 0
    for person, alert in placed:
        if person is None:
            unplaced += 1
            continue
        counts.setdefault(person, {}).setdefault(alert.kind, 0)
        counts[person][alert.kind] += 1
        wrong += alert.kind == "person_seen" and alert.evidence[0].person != person
    return {"alerts": counts, "wrong_names": int(wrong), "unplaced_alerts": unplaced}


def recurring(visits: list[tuple[str, Alert]]) -> dict:
    """The stranger alerts of every camera grouped as the alert store groups them (``bench.grouping``),
    with where each person walked beside their journey."""
    found = grouped(visits)
    walked = {p: [c for c, walks in CAMERAS.items() if any(w.person == p for w in walks)] for p in found["journeys"]}
    return {**found, "walked": walked}


def _person_at(faces: list, box) -> str | None:
    """The true person whose face ``box`` overlaps at IoU ``MATCH_IOU`` or more, if any."""
    distances = _distances([b for _, b, _ in faces], [box])
    if not faces or np.isnan(distances).all():
        return None
    return faces[int(np.nanargmin(distances[:, 0]))][0]


def _backgrounds() -> list[np.ndarray]:
    """vtest.avi's frames at 640x480: the street every camera's people walk over."""
    video = cv2.VideoCapture(str(samples.fetch() / samples.FOOTAGE.filename))
    frames = []
    while True:
        ok, frame = video.read()
        if not ok:
            break
        frames.append(cv2.resize(frame, (WIDTH, HEIGHT), interpolation=cv2.INTER_AREA))
    video.release()
    if not frames:
        raise RuntimeError("vtest.avi gave no frames")
    return frames


def _stream(processor, camera: str, walks, cuts, streets: list[np.ndarray], index: int, fps: float):
    """The camera's events (in capture order) and true faces per frame, the detector run in batches."""
    count = int(DURATION_S * fps)
    frames, truth = [], []
    for k in range(count):
        t = k / fps
        background = streets[(index * 200 + int(t * 10)) % len(streets)]  # the street moves at its own 10 fps
        image, faces = draw(background, walks, cuts, t)
        data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])[1].tobytes()
        frames.append(Frame(camera, k, round(1e18 + (index * CAMERA_GAP_S + t) * 1e9), WIDTH, HEIGHT, data))
        truth.append(faces)
    events = []
    step = 16
    for start in range(0, count, step):
        outcomes = processor.finish(processor.begin(frames[start : start + step], list(range(start, start + step))))
        events += [o.event for o in sorted(outcomes, key=lambda o: o.tag)]
    return events, truth


def score(events: list, truth: list, settings: FaceTrackSettings, fps: float) -> dict:
    """The tracker over ``events`` (every frame of them: ``settings``' rate set to ``fps``), matched to
    ``truth`` by motmetrics."""
    import motmetrics as mm

    every = replace(settings, rate_hz=fps)
    accumulator = mm.MOTAccumulator(auto_id=True)
    state: dict = {}
    ids: dict[str, int] = {}  # person or track name -> its number for motmetrics
    seen_s = 0.0
    carried: dict = {}  # detector tracks' embeddings, lent to their faces as the worker lends them
    for event, faces in zip(events, truth, strict=True):
        event, lent = lend(carried, event)
        found = follow_faces(state, event, Recognition(Gallery(), [event]), every, lent)
        assert found is not None, "at the camera's own rate every frame is followed"
        names = found[0]
        expected = [(person, box) for person, box, hidden in faces if hidden <= SEEN_SHARE]
        hidden = [box for _, box, share in faces if share > SEEN_SHARE]
        kept = [  # a track on a face that is mostly hidden is neither right nor wrong, nor one on the
            (name, face.box)  # street's own passers-by, whose faces are a few pixels high
            for name, face in zip(names, event.faces)
            if name is not None
            and min(face.box[2] - face.box[0], face.box[3] - face.box[1]) >= SMALLEST_PX
            and not any(_overlap_share(face.box, box) > 0.5 for box in hidden)
        ]
        distances = _distances([b for _, b in expected], [b for _, b in kept])
        accumulator.update(
            [ids.setdefault(p, len(ids)) for p, _ in expected],  # motmetrics wants numbers for ids
            [ids.setdefault(n, len(ids)) for n, _ in kept],
            distances,
        )
        seen_s += len(expected) / fps
    summary = mm.metrics.create().compute(
        accumulator, metrics=["idf1", "num_switches", "mota", "num_misses", "num_false_positives", "num_objects"]
    )
    first = summary.iloc[0]
    return {
        "idf1": round(float(first["idf1"]), 4),
        "id_switches": int(first["num_switches"]),
        "track_s": round(seen_s, 1),
        "switches_per_100_track_s": round(100 * int(first["num_switches"]) / max(seen_s, 1e-9), 2),
        "mota": round(float(first["mota"]), 4),
        "faces": int(first["num_objects"]),
        "missed": int(first["num_misses"]),
        "false": int(first["num_false_positives"]),
    }


def _distances(truth: list, found: list) -> np.ndarray:
    """1 - IoU for each (true face, tracked face), NaN (never matched) under ``MATCH_IOU``; motmetrics'
    own ``iou_matrix`` calls a NumPy function that NumPy 2 removed."""
    if not truth or not found:
        return np.empty((len(truth), len(found)))
    a, b = np.asarray(truth, dtype=np.float64)[:, None, :], np.asarray(found, dtype=np.float64)[None, :, :]
    width = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    height = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = width * height
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])  # noqa: E731
    overlap = inter / np.maximum(area(a) + area(b) - inter, 1e-9)
    return np.where(overlap >= MATCH_IOU, 1 - overlap, np.nan)


def render(result: dict) -> list[str]:
    """Its paragraph in docs/performance.md."""
    m, tracker = result["machine"], result["tracker"]
    lines = [
        f"**Face tracks against ground truth, {m['cpu']}** (`{result['command']}`; six people's faces moved "
        "over vtest.avi by a script per camera, YuNet + SFace on the CPU, the alerting service's face "
        f"tracker with its defaults: {', '.join(f'{k} {v}' for k, v in tracker.items())}; motmetrics, "
        f"IoU >= {MATCH_IOU}):",
        "",
        "| camera | fps | faces embedded | IDF1 | ID switches | per 100 track-s | MOTA | faces | missed | false "
        "| alerts per visit | s to new alert | search: frames found, visits found |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        visits = ", ".join(f"{person} {n}" for person, n in _per_visit(r).items()) if "alerts" in r else "-"
        mode = r.get("mode", EVERY_FRAME)
        embedded = f"{100 * r['embedded_share']:.0f}% (per track)" if mode == PER_TRACK else "every face"
        delays = ", ".join(f"{d:.1f}" for d in r.get("first_alert_s", {}).values()) or "-"
        search = r.get("search")
        found = (
            f"{search['frames_found']} of {search['frames_in_view']}, {search['visits_found']} of {search['visits']}"
            if search
            else "-"
        )
        lines.append(
            f"| {r['camera']} | {r['fps']:g} | {embedded} | {r['idf1']:.3f} | {r['id_switches']} | "
            f"{r['switches_per_100_track_s']} | {r['mota']:.3f} | {r['faces']} | {r['missed']} | {r['false']} "
            f"| {visits} | {delays} | {found} |"
        )
    lines += [
        "",
        "Alerts per visit: each person's stranger alerts, or for the watched person "
        f"({', '.join(p for p, (_, w) in ENROLLED.items() if w)}) person_seen alerts, on the camera (a visit "
        f"each); enrolled from other photos: {', '.join(f'{p} ({photo})' for p, (photo, _) in ENROLLED.items())}. "
        + source(result),
    ]
    if result.get("recurring"):
        lines += [
            "",
            "Recurring strangers: the stranger alerts of the three cameras (one after the other, "
            f"{CAMERA_GAP_S:g} s apart) grouped by the alert store's writer (`--same-stranger` "
            f"{strangers.SAME_STRANGER}):",
            "",
            "| fps | faces embedded | visits | strangers | purity | completeness | journeys (cameras in order) |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in result["recurring"]:
            walks = "; ".join(
                f"{p}: {' → '.join(cams)}" for p, cams in r["journeys"].items() if len(r["walked"][p]) > 1
            )
            mode = "per track" if r.get("mode", EVERY_FRAME) == PER_TRACK else "every face"
            lines.append(
                f"| {r['fps']:g} | {mode} | {r['visits']} | {r['strangers']} | {r['purity']:.3f} "
                f"| {r['completeness']:.3f} | {walks} |"
            )
    return lines


def _per_visit(row: dict) -> dict[str, int]:
    """Per person walking on the row's camera, the alerts their visit made: stranger alerts for a
    stranger, person_seen for the watched person, stranger alerts (wrong ones) for the enrolled."""
    found = {}
    for walk in CAMERAS[row["camera"]]:
        kinds = row["alerts"].get(walk.person, {})
        watched = ENROLLED.get(walk.person, ("", False))[1]
        found[walk.person] = kinds.get("person_seen" if watched else "stranger", 0)
    return found


def targets(results: dict[str, dict]) -> list[Target]:
    """IDF1 and ID switches of the newest run against the issue's goals."""
    found = newest(results, "tracks")
    if found is None:
        return []
    result = _of_mode(found, PER_TRACK) if any("mode" in r for r in found["rows"]) else found
    rows = result["rows"]
    idf1 = [r["idf1"] for r in rows]
    worst = min(rows, key=lambda r: r["idf1"])
    switches = sum(r["id_switches"] for r in rows) * 100 / max(sum(r["track_s"] for r in rows), 1e-9)
    return [
        Target(
            "Face tracks: IDF1 >= 0.90",
            f"median {statistics.median(idf1):.3f}, lowest {min(idf1):.3f} "
            f"({', '.join(f'{v:.3f}' for v in idf1)}: 3 cameras x 5, 10, 30 fps)",
            min(idf1) >= 0.90,
            result["_file"],
            f"median {statistics.median(idf1):.3f}, lowest {worst['idf1']:.3f} "
            f"({worst['camera']}, {worst['fps']:g} fps)",
        ),
        Target(
            "Face tracks: <= 1 ID switch per 100 track-seconds",
            f"{switches:.2f} over {math.fsum(r['track_s'] for r in rows):.0f} track-seconds",
            switches <= 1.0,
            result["_file"],
        ),
        *_alert_targets(result),
        *_recurring_targets(result, newest(results, "threshold")),
        *_identity_targets(found),
    ]


def _of_mode(result: dict, mode: str) -> dict:
    """``result`` with only the rows of one detector mode."""
    return {
        **result,
        "rows": [r for r in result["rows"] if r.get("mode") == mode],
        "recurring": [r for r in result.get("recurring", []) if r.get("mode") == mode],
    }


def _identity_targets(result: dict) -> list[Target]:
    """Faces embedded per track against every face embedded, side by side: the first alert of a visit
    no later by more than 0.3 s at p99, and search by face finding every visit."""
    tracked, every = _of_mode(result, PER_TRACK)["rows"], _of_mode(result, EVERY_FRAME)["rows"]
    if not tracked or not every:
        return []

    def p99(rows: list[dict]) -> float:
        delays = [d for r in rows for d in r["first_alert_s"].values()]
        return float(np.percentile(delays, 99)) if delays else math.nan

    late = p99(tracked) - p99(every)
    search = {mode: [r["search"] for r in rows] for mode, rows in ((PER_TRACK, tracked), (EVERY_FRAME, every))}
    visits = {
        mode: (sum(s["visits_found"] for s in found), sum(s["visits"] for s in found)) for mode, found in search.items()
    }
    frames = {
        mode: sum(s["frames_found"] for s in found) / max(sum(s["frames_in_view"] for s in found), 1)
        for mode, found in search.items()
    }
    share = statistics.median(r["embedded_share"] for r in tracked)
    return [
        Target(
            "Per track: first alert <= 0.3 s later (p99)",
            f"p99 {p99(tracked):.2f} s against {p99(every):.2f} s ({late:+.2f} s); "
            f"median {100 * share:.0f}% of faces embedded",
            late <= 0.3,
            result["_file"],
            f"{late:+.2f} s",
        ),
        Target(
            "Per track: search finds every visit",
            f"per track {visits[PER_TRACK][0]} of {visits[PER_TRACK][1]} visits ({100 * frames[PER_TRACK]:.0f}% of "
            f"the frames in view), every face {visits[EVERY_FRAME][0]} of {visits[EVERY_FRAME][1]} "
            f"({100 * frames[EVERY_FRAME]:.0f}%)",
            visits[PER_TRACK][0] == visits[PER_TRACK][1] >= visits[EVERY_FRAME][0],
            result["_file"],
            f"{visits[PER_TRACK][0]} of {visits[PER_TRACK][1]} visits",
        ),
    ]


def _recurring_targets(result: dict, faces: dict | None) -> list[Target]:
    """Grouping purity and completeness over every frame rate (and, where ``bench threshold`` grouped
    its 84 faces one visit each, over those too), and every journey across cameras whole."""
    rows = result.get("recurring")
    if not rows:
        return []
    purity, completeness = min(r["purity"] for r in rows), min(r["completeness"] for r in rows)
    measured = f"{purity:.3f}, {completeness:.3f}"
    if faces is not None and "grouping" in faces:
        g = faces["grouping"]
        purity, completeness = min(purity, *g["purity"]), min(completeness, *g["completeness"])
        measured += f"; {g['visits']} faces {min(g['purity']):.3f}, {min(g['completeness']):.3f}"
    across = [(r, p) for r in rows for p, walked in r["walked"].items() if len(walked) > 1]
    whole = [(r, p) for r, p in across if r["journeys"][p] == r["walked"][p]]
    broken = [f"{p} at {r['fps']:g} fps: {' → '.join(r['journeys'][p])}" for r, p in across if (r, p) not in whole]
    return [
        Target(
            "Stranger groups: purity >= 0.95, completeness >= 0.90",
            measured,
            purity >= 0.95 and completeness >= 0.90,
            result["_file"],
        ),
        Target(
            "Journeys across cameras, whole",
            f"{len(whole)} of {len(across)}" + (f"; off: {', '.join(broken)}" if broken else ""),
            bool(across) and len(whole) == len(across),
            result["_file"],
        ),
    ]


def _alert_targets(result: dict) -> list[Target]:
    """One alert per visit (a stranger's stranger alert, the watched person's person_seen, none on the
    enrolled person who is not watched) and no wrong name, over every row."""
    rows = [r for r in result["rows"] if "alerts" in r]
    if not rows:
        return []
    visits = [(r, person, n) for r in rows for person, n in _per_visit(r).items()]
    owed = [1 if person not in ENROLLED or ENROLLED[person][1] else 0 for _, person, _ in visits]
    right = sum(n == want for (_, _, n), want in zip(visits, owed, strict=True))
    off = [f"{person} {n} ({r['camera']}, {r['fps']:g} fps)" for (r, person, n), want in zip(visits, owed) if n != want]
    wrong = sum(r["wrong_names"] for r in rows)
    return [
        Target(
            "One stranger or person_seen alert per visit",
            f"{right} of {len(visits)} visits" + (f"; off: {', '.join(off)}" if off else ""),
            right == len(visits),
            result["_file"],
            f"{right} of {len(visits)} visits",
        ),
        Target("No wrong names (default threshold)", f"{wrong} wrong", wrong == 0, result["_file"]),
    ]
