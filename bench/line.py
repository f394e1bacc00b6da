"""Line benchmark: how well the line rule's tracker counts people crossing a line on real footage.

MoveNet, through the pose service's own processor (as ``bench pose`` runs it), finds the people in the
795 frames of OpenCV's vtest.avi (a plaza seen from above, 10 fps); the pose events then go through
the line rule as an alerting worker feeds them, at the video's rate and at lower camera rates (every
2nd and 4th frame). The line runs down the middle of the picture.

The truth it is held to: the frames at which someone's feet pass the middle column, read by eye off
the video's slit-scan (that column of every frame side by side, where each crossing is a streak):
``CROSSINGS``. The first 14 s are left out of the score: a group stands and mills about on the line
there, and a slit-scan cannot tell their steps apart. A counted crossing matches a true one within
``TOLERANCE_S``; each true crossing is matched at most once.
"""

import statistics
from typing import Any

from bench import save, settings_of
from bench.engine import _progress
from bench.figures import source
from bench.machine import describe
from bench.pipeline import drive, full_batches
from bench.pose import video_frames
from bench.settings import LineBenchConfig
from facestream.alerting.rules import line
from facestream.detector_service import models
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.processor import FrameProcessor
from facestream.detector_service.stats import Stats
from facestream.schemas import PoseEvent

FPS = 10.0  # vtest.avi's own rate
LINES = {"middle": ((0.5, 0.0), (0.5, 1.0))}
SCORED_FROM = 140  # frames before it are the group milling about on the line (not scored)
# Frames at which a person's feet pass the middle column, after SCORED_FROM (by eye, on the slit-scan).
CROSSINGS = (
    157, 178, 218, 252, 278, 288, 312, 332, 347, 349, 362, 463, 488, 529,
    563, 592, 613, 627, 640, 678, 688, 700, 706, 745, 750, 773, 783, 790,
)  # fmt: skip
TOLERANCE_S = 1.0


def run(cfg: LineBenchConfig, command: str) -> dict:
    settings = line.LineSettings(min_score=cfg.min_score)
    rows = []
    for width, height in cfg.input_sizes:
        events = _pose_events(cfg.provider, (width, height))
        followed = statistics.median(sum(p.score >= cfg.min_score for p in e.persons) for e in events)
        for every in cfg.every:
            tracks, counted = _crossings(events[::every], settings)
            rows.append(
                {
                    "input_size": f"{width}x{height}",
                    "every": every,
                    "fps": FPS / every,
                    "followed_per_frame_median": followed,
                    "tracks": tracks,
                    **_score(counted),
                }
            )
            row = rows[-1]
            _progress(
                f"{width}x{height} at {row['fps']:g} fps: {row['matched']} of {row['truth']} crossings found, "
                f"{row['extra']} extra ({row['tracks']} tracks)"
            )
    result: dict[str, Any] = {
        "benchmark": "line",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "lines": LINES,
        "line_settings": settings_of(settings),
        "scored_from_frame": SCORED_FROM,
        "truth_frames": list(CROSSINGS),
        "tolerance_s": TOLERANCE_S,
        "rows": rows,
    }
    save(result, cfg.out)
    for r in rows:
        print(f"{r['input_size']} {r['fps']:g} fps: recall {r['recall']:.2f}, precision {r['precision']:.2f}")
    return result


def _pose_events(provider: str, input_size: tuple[int, int] | None) -> list[PoseEvent]:
    """Every frame's pose event, in frame order, as the pose service makes them."""
    path = models.resolve("movenet")
    plugin = models.plugin_for(models.read_metadata(path), str(path))
    engine = Engine(path, plugin.input_spec.resolve(input_size), 5, plugin, provider)
    processor = FrameProcessor(
        engine, plugin, plugin.default_thresholds, 2, Stats(engine.provider, bool(engine.fallbacks))
    )
    events: list[PoseEvent] = []
    try:
        drive(processor, full_batches(video_frames(795), 5), events.append)
    finally:
        processor.close()
    return sorted(events, key=lambda e: e.frame_seq)


def _crossings(events: list[PoseEvent], settings: line.LineSettings) -> tuple[int, list[dict]]:
    """(tracks started, the line rule's crossings over ``events``: frame, direction, alert id)."""
    state: dict = {}
    found, tracks = [], 0
    for event in events:
        for alert in line.step(state, event, settings, LINES):
            if alert.state == "new":
                found.append({"frame": event.frame_seq, "reason": alert.reason, "alert": alert.alert_id})
        tracks = max([tracks, *(t["id"] + 1 for t in state["tracks"])])
    return tracks, found


def _score(counted: list[dict]) -> dict:
    """Counted crossings against ``CROSSINGS``: greedy nearest matching within the tolerance."""
    crossings = [c for c in counted if c["frame"] >= SCORED_FROM - 5]
    window = TOLERANCE_S * FPS
    free = list(CROSSINGS)
    matched = 0
    for crossing in sorted(crossings, key=lambda c: c["frame"]):
        near = [t for t in free if abs(t - crossing["frame"]) <= window]
        if near:
            free.remove(min(near, key=lambda t: abs(t - crossing["frame"])))
            matched += 1
    return {
        "truth": len(CROSSINGS),
        "counted": len(crossings),
        "matched": matched,
        "extra": len(crossings) - matched,
        "missed_frames": free,
        "recall": round(matched / len(CROSSINGS), 3),
        "precision": round(matched / max(len(crossings), 1), 3),
        "crossings": crossings,
    }


def render(result: dict) -> list[str]:
    s, m = result["settings"], result["machine"]
    head = [
        f"**Line crossings on OpenCV's vtest.avi, {m['cores']} cores, MoveNet on {s['provider']}** "
        f"(`{result['command']}`): the line rule (min-score {result['line_settings']['min_score']:g}, "
        f"lost-after-s {result['line_settings']['lost_after_s']:g}) on a line down the middle of the picture, "
        f"against the {len(result['truth_frames'])} crossings counted by eye on the video's slit-scan from frame "
        f"{result['scored_from_frame']} (a counted crossing matches one within {result['tolerance_s']:g} s). "
        + source(result),
        "",
        "| MoveNet input | camera rate | followed per frame (median) | tracks | found | extra | recall | precision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    return head + [
        f"| {r['input_size']} | {r['fps']:g} fps | {r['followed_per_frame_median']:g} | {r['tracks']} | "
        f"{r['matched']} of {r['truth']} | {r['extra']} | {r['recall']:.2f} | {r['precision']:.2f} |"
        for r in result["rows"]
    ]
