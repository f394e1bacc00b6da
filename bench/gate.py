"""The motion gate on real footage: what share of frames a gated camera sends, and which faces it costs.

Three scenes at vtest's own 10 fps: OpenCV's ``vtest.avi`` (pedestrians crossing a fixed camera's
view, 795 frames) and two quiet ones, each a frame of it held for ``quiet_s`` with sensor noise: its
first (nobody's face is found there) and the one where most faces are (so a quiet scene's recall
means something). Every frame goes through the detector's own processor (YuNet, real weights) as
the producer would send it (JPEG, quality 85): the faces of the full stream. The producer's own
``MotionGate``, run over the same frames at their capture times, says which frames a gated camera
would send. A face found in the full stream
at frame t still counts as found when the last frame sent at or before t has a face overlapping it
(IoU >= ``MATCH_IOU``): what a service reading the events holds at t. Per minimum changed area: the
share of frames sent, that recall, and the gate's own cost per frame on this machine.
"""

import time
from typing import Any

import av
import cv2
import numpy as np

from bench import save, settings_of
from bench.engine import _progress
from bench.figures import Target, newest, source
from bench.machine import describe
from bench.pipeline import drive
from bench.settings import GateBenchConfig
from facestream import samples
from facestream.detector_service import models
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.models.postprocess import iou
from facestream.detector_service.processor import FrameProcessor
from facestream.detector_service.stats import Stats
from facestream.producers.config import ProducerConfig
from facestream.producers.motion import MotionGate
from facestream.schemas import Frame

FPS = 10.0  # vtest.avi's own rate, kept for the quiet scene too
MATCH_IOU = 0.5
NOISE = 4.0  # grey levels of sensor noise in the quiet scene (Gaussian)


def run(cfg: GateBenchConfig, command: str) -> dict:
    street = _video()
    detect = _Detector(cfg.batch)
    street_faces = detect(street)
    busiest = int(np.argmax([len(f) for f in street_faces]))
    held = f"held {cfg.quiet_s:g} s with noise of {NOISE:g} grey levels"
    scenes = []
    for name, images, faces in (
        ("vtest.avi (pedestrians)", street, street_faces),
        (f"quiet: vtest.avi's first frame {held}", _quiet(street[0], cfg.quiet_s), None),
        (f"quiet: vtest.avi's frame {busiest} (most faces) {held}", _quiet(street[busiest], cfg.quiet_s), None),
    ):
        faces = faces or detect(images)
        rows = []
        for area in cfg.min_area:
            sent, gate_ms = _gate(images, area, cfg.keyframe_s)
            found, total = _recall(faces, sent)
            rows.append(
                {
                    "min_area": area,
                    "frames_sent": int(sent.sum()),
                    "sent_fraction": round(float(sent.mean()), 4),
                    "faces_full_stream": total,
                    "faces_still_found": found,
                    "recall": round(found / total, 4) if total else None,
                    "gate_ms_per_frame": round(gate_ms, 3),
                }
            )
            _progress(f"{name}, min area {area:g}: {rows[-1]}")
        scenes.append({"scene": name, "frames": len(images), "rows": rows})
    result: dict[str, Any] = {
        "benchmark": "gate",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "fps": FPS,
        "match_iou": MATCH_IOU,
        "detector": detect.describe(),
        "scenes": scenes,
    }
    save(result, cfg.out)
    for scene in result["scenes"]:
        print(scene["scene"])
        for r in scene["rows"]:
            print(f"  min area {r['min_area']:<8g} sent {r['sent_fraction']:>7.1%}  recall {r['recall']}")
    print(f"results: {cfg.out}")
    return result


def _video() -> list[np.ndarray]:
    video = cv2.VideoCapture(str(samples.fetch() / samples.FOOTAGE.filename))
    images = []
    while (read := video.read())[0]:
        images.append(read[1])
    video.release()
    return images


def _quiet(image: np.ndarray, seconds: float) -> list[np.ndarray]:
    """``image`` held for ``seconds`` at FPS, each frame with its own sensor noise."""
    rng = np.random.default_rng(0)
    noisy = (image + rng.normal(0, NOISE, image.shape) for _ in range(int(seconds * FPS)))
    return [np.clip(frame, 0, 255).astype(np.uint8) for frame in noisy]


def _gate(images: list[np.ndarray], min_area: float, keyframe_s: float) -> tuple[np.ndarray, float]:
    """Which frames a gated camera sends, captured at FPS; and the gate's milliseconds per frame."""
    gate = MotionGate(min_area, keyframe_s)
    # As a camera's decoder hands them over: YUV 4:2:0 pictures (made before the clock starts).
    pictures = [av.VideoFrame.from_ndarray(image, format="bgr24").reformat(format="yuv420p") for image in images]
    start = time.perf_counter()
    sent = np.array([gate.wants(picture, i / FPS) for i, picture in enumerate(pictures)])
    return sent, (time.perf_counter() - start) * 1000 / len(images)


def _recall(faces: list[np.ndarray], sent: np.ndarray) -> tuple[int, int]:
    """(faces of the full stream still held by the gated stream, all faces of the full stream)."""
    found = total = 0
    last = -1
    for t, boxes in enumerate(faces):
        if sent[t]:
            last = t
        total += len(boxes)
        if last >= 0:
            found += int(sum(iou(box, faces[last]).max(initial=0.0) >= MATCH_IOU for box in boxes))
    return found, total


class _Detector:
    """YuNet through the detector's own processor, on the CPU: each image's face boxes in its pixels."""

    def __init__(self, batch: int) -> None:
        path = models.resolve("yunet")
        plugin = models.plugin_for(models.read_metadata(path), str(path))
        engine = Engine(path, plugin.input_spec.resolve(None), batch, plugin, "cpu")
        self.processor = FrameProcessor(
            engine, plugin, plugin.default_thresholds, 2, Stats(engine.provider, bool(engine.fallbacks))
        )
        self.batch = batch

    def describe(self) -> str:
        return self.processor.describe()

    def __call__(self, images: list[np.ndarray]) -> list[np.ndarray]:
        frames = []
        for i, image in enumerate(images):
            data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])[1].tobytes()
            frames.append(Frame("gate", i, 0, image.shape[1], image.shape[0], data))
        found: dict[int, np.ndarray] = {}

        def seen(event) -> None:
            found[event.frame_seq] = np.array([f.box for f in event.faces], dtype=np.float64).reshape(-1, 4)

        drive(self.processor, [frames[i : i + self.batch] for i in range(0, len(frames), self.batch)], seen)
        return [found[i] for i in range(len(frames))]


DEFAULT_AREA = ProducerConfig().motion_min_area  # the row of a gate run the targets read


def render(result: dict) -> list[str]:
    m, s = result["machine"], result["settings"]
    lines = [
        f"**Motion gate, {result['detector']}, {m['cores']} cores of an {m['cpu']}** (`{result['command']}`; "
        f"at {result['fps']:g} fps, a keyframe every {s['keyframe_s']:g} s; a face of the full stream at frame t "
        f"counts as still found when the last frame sent at or before t has a face with IoU >= "
        f"{result['match_iou']:g}):",
        "",
        "| scene | frames | --motion-min-area | frames sent | faces (full stream) | still found | recall "
        "| gate ms/frame |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for scene in result["scenes"]:
        for r in scene["rows"]:
            recall = "-" if r["recall"] is None else f"{100 * r['recall']:.1f}%"
            lines.append(
                f"| {scene['scene']} | {scene['frames']} | {r['min_area']:g} | {100 * r['sent_fraction']:.1f}% "
                f"| {r['faces_full_stream']} | {r['faces_still_found']} | {recall} | {r['gate_ms_per_frame']:.2f} |"
            )
    lines += ["", source(result)]
    return lines


def targets(results: dict[str, dict]) -> list[Target]:
    """The faces the gate keeps on the busy street at the default ``--motion-min-area``."""
    run = newest(results, "gate")
    if run is None:
        return []
    street = run["scenes"][0]
    default = next(r for r in street["rows"] if r["min_area"] == DEFAULT_AREA)
    return [
        Target(
            f"Motion gate keeps >= 99% of the faces ({street['scene'].split(' ')[0]})",
            f"{100 * default['recall']:.1f}% kept, {100 * default['sent_fraction']:.1f}% of frames sent (default "
            f"--motion-min-area {DEFAULT_AREA:g})",
            default["recall"] >= 0.99,
            run["_file"],
            f"{100 * default['recall']:.0f}%, {100 * default['sent_fraction']:.1f}% of frames sent",
        )
    ]
