"""An alert's frames as a short video for review: the camera's frames from the frames topics between
the alert's start and its last update (a second either side), each with the faces its detection event
found boxed, encoded as H.264 in MP4 by PyAV (FFmpeg's libx264, bundled in its wheels) so that any
browser plays it. Kafka is the only history of frames, so a clip can be made only while the topics
still hold them (their retention); the dashboard makes one on request and keeps the latest few."""

import logging
import tempfile
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

from facestream.dashboard.pixelate import Box, pixelate
from facestream.evidence import camera_records
from facestream.schemas import Alert, DetectionEvent, Face, Frame, ModelRef, unpack_detection, unpack_frame

log = logging.getLogger(__name__)
MARGIN_NS = 1_000_000_000  # a second before the alert and after its last update
MAX_SECONDS = 60.0  # a longer alert's clip is its first minute
FPS = 10.0  # frames per second kept at most: enough to review, cheap to make
WIDTH = 640  # frames wider than this are scaled down (even sizes: H.264's 4:2:0 needs them)
BOX = (40, 40, 230)  # BGR, as on the evidence frames


Hide = Callable[[tuple[Face, ...], ModelRef | None], list[Box]]  # faces -> the boxes to pixelate


def alert_clip(
    alert: Alert, frames_topics: tuple[str, ...], detections_topic: str, hide: Hide | None = None
) -> bytes | None:
    """The alert's clip as MP4 bytes, or None when the frames topics no longer hold its frames; with
    ``hide``, the faces it names are pixelated (a frame without its event, one the detector skipped,
    hides what the frame before it did)."""
    since = alert.started_ts_ns - MARGIN_NS
    until = min(alert.updated_ts_ns + MARGIN_NS, since + int(MAX_SECONDS * 1e9))
    frames: list[Frame] = camera_records(frames_topics, alert.camera_id, since, until, unpack_frame)
    if not frames:
        return None
    events: list[DetectionEvent] = camera_records((detections_topic,), alert.camera_id, since, until, unpack_detection)
    boxes = {event.frame_seq: [face.box for face in event.faces] for event in events}
    hidden = {event.frame_seq: hide(event.faces, event.embedder) for event in events} if hide else None
    return encode(sampled(frames), boxes, hidden)


def sampled(frames: list[Frame], fps: float = FPS) -> list[Frame]:
    """``frames`` in capture order, one per 1/``fps`` seconds at most, each frame once."""
    kept: list[Frame] = []
    for frame in sorted({f.frame_seq: f for f in frames}.values(), key=lambda f: f.capture_ts_ns):
        if not kept or frame.capture_ts_ns - kept[-1].capture_ts_ns >= 1e9 / fps * 0.9:
            kept.append(frame)
    return kept


def encode(
    frames: list[Frame], boxes: dict[int, list[Box]], hidden: dict[int, list[Box]] | None = None
) -> bytes | None:
    """H.264 in MP4 of ``frames`` (capture order), each shown at its capture time, the boxes of its
    frame number drawn (and those ``hidden`` gives it pixelated); None if no frame decodes."""
    import cv2
    import numpy as np

    images: list = []
    hiding: list[Box] = []
    for frame in frames:
        image = cv2.imdecode(np.frombuffer(frame.data, np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            log.warning("frame %s/%d of a clip does not decode: left out", frame.camera_id, frame.frame_seq)
            continue
        scale = min(1.0, WIDTH / image.shape[1])
        if hidden is not None:
            hiding = hidden.get(frame.frame_seq, hiding)
            pixelate(image, hiding)
        for x0, y0, x1, y1 in boxes.get(frame.frame_seq, []):
            cv2.rectangle(image, (round(x0), round(y0)), (round(x1), round(y1)), BOX, max(2, image.shape[1] // 200))
        size = (int(image.shape[1] * scale) // 2 * 2, int(image.shape[0] * scale) // 2 * 2)
        images.append((frame.capture_ts_ns, cv2.resize(image, size, interpolation=cv2.INTER_AREA)))
    if not images:
        return None
    with tempfile.NamedTemporaryFile(suffix=".mp4") as out:  # faststart rewrites the file: it needs a path
        _write(out.name, images)
        return Path(out.name).read_bytes()


def _write(path: str, images: list) -> None:
    """Encode (capture time, BGR image) pairs into ``path``, the index first (a browser plays it at once)."""
    import av
    import cv2

    with av.open(path, mode="w", format="mp4", options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=int(FPS), options={"preset": "veryfast", "crf": "26"})
        stream.width, stream.height = images[0][1].shape[1], images[0][1].shape[0]
        stream.pix_fmt = "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        start, last = images[0][0], -1
        for captured, image in images:
            if image.shape[:2] != (stream.height, stream.width):  # a camera that changed size mid-clip
                image = cv2.resize(image, (stream.width, stream.height), interpolation=cv2.INTER_AREA)
            video = av.VideoFrame.from_ndarray(image, format="bgr24")
            video.pts, video.time_base = max(last + 1, (captured - start) // 1_000_000), Fraction(1, 1000)
            last = video.pts
            container.mux(stream.encode(video))
        container.mux(stream.encode())
