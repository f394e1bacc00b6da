"""What the page shows, kept up to date by the Kafka reader and read by the web app: per camera its
sampled frames and what was found in them, rate and latency, and its producer's word on it (streaming,
reconnecting, ...); the alerts with their lifecycle; the consumer groups. Thread-safe; ``version``
changes whenever something the page shows does."""

import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from facestream.schemas import Alert, CameraStatus, DetectionEvent, Face, Frame, ModelRef, PoseEvent

KEPT_FRAMES = 8  # sampled frames per camera waiting for their events (events lag frames by their latency)
RATE_WINDOW_S = 10.0  # events behind a camera's rate and latency figures


@dataclass
class SampledFrame:
    seq: int
    capture_ts_ns: int
    width: int
    height: int
    jpeg: bytes
    found: dict[str, list] = field(default_factory=dict)  # "faces" / "people" -> what events found in it
    faces: tuple[Face, ...] = ()  # its detection event's, with their embeddings (kept off the page)
    embedder: ModelRef | None = None


@dataclass
class CameraView:
    camera_id: str
    frames: deque = field(default_factory=lambda: deque(maxlen=KEPT_FRAMES))
    last_kept_s: float = 0.0
    events: deque = field(default_factory=deque)  # (arrival monotonic s, latency s) of the last RATE_WINDOW_S
    events_total: int = 0
    skipped_total: int = 0
    status: dict[str, Any] | None = None  # the producer's latest word on the camera

    def frame(self, seq: int) -> SampledFrame | None:
        return next((f for f in self.frames if f.seq == seq), None)

    def shown(self) -> SampledFrame | None:
        """The newest frame whose events have arrived, else the newest frame."""
        return next((f for f in reversed(self.frames) if f.found), self.frames[-1] if self.frames else None)

    def note_event(self, now: float, latency_s: float) -> None:
        """Count an event that arrived at ``now``; only the last RATE_WINDOW_S are kept, page open or not."""
        self.events.append((now, latency_s))
        self._forget(now)
        self.events_total += 1

    def _forget(self, now: float) -> None:
        while self.events and self.events[0][0] < now - RATE_WINDOW_S:
            self.events.popleft()

    def figures(self, now: float) -> dict[str, Any]:
        self._forget(now)
        latencies = sorted(lat for _, lat in self.events)
        span = min(RATE_WINDOW_S, now - self.events[0][0]) if len(self.events) > 1 else 0.0
        return {
            "fps": round((len(self.events) - 1) / span, 2) if span > 0 else 0.0,
            "latency_ms": round(1000 * latencies[len(latencies) // 2]) if latencies else None,
            "latency_max_ms": round(1000 * latencies[-1]) if latencies else None,
            "events_total": self.events_total,
            "skipped_total": self.skipped_total,
        }


@dataclass
class AlertView:
    alert: Alert  # the latest record
    lifecycle: list[list]  # [state, records] per run of records in one state, in order: an alert open
    # for days is a few runs, not one entry per update (the soak saw the page grow 6 MB an hour)

    def record(self, alert: Alert) -> None:
        self.alert = alert
        if self.lifecycle and self.lifecycle[-1][0] == alert.state:
            self.lifecycle[-1][1] += 1
        else:
            self.lifecycle.append([alert.state, 1])

    def fields(self) -> dict[str, Any]:
        a = self.alert
        first = a.evidence[0] if a.evidence else None
        return {
            "alert_id": a.alert_id,
            "kind": a.kind,
            "state": a.state,
            "camera_id": a.camera_id,
            "count": a.count,
            "started_ts_ms": a.started_ts_ns // 1_000_000,
            "updated_ts_ms": a.updated_ts_ns // 1_000_000,
            "ended_ts_ms": None if a.ended_ts_ns is None else a.ended_ts_ns // 1_000_000,
            "lifecycle": [list(run) for run in self.lifecycle],
            "evidence": None
            if first is None
            else {"frame_seq": first.frame_seq, "similarity": first.similarity, "person": first.person},
            "reason": a.reason,
            "zone": a.zone,
        }


class DashboardState:
    def __init__(
        self, frame_rate: float, alerts_kept: int, zones: dict | None = None, lines: dict | None = None
    ) -> None:
        self.min_gap_s = 1.0 / frame_rate
        self.alerts_kept = alerts_kept
        # camera -> what the page draws on its tile: {"zones": [{"name", "corners"}], "lines": [{"name",
        # "points"}]}, points normalised to the frame
        self.drawn: dict[str, dict[str, list]] = {}
        for key, points, per_camera in (("zones", "corners", zones), ("lines", "points", lines)):
            for camera, shapes in (per_camera or {}).items():
                self.drawn.setdefault(camera, {})[key] = [
                    {"name": name, points: [list(p) for p in corners]} for name, corners in shapes.items()
                ]
        self.cameras: dict[str, CameraView] = {}
        self.alerts: OrderedDict[str, AlertView] = OrderedDict()  # oldest first
        self.groups: list[dict[str, Any]] = []
        self.version = 0
        self._lock = threading.Lock()

    def _camera(self, camera_id: str) -> CameraView:
        if camera_id not in self.cameras:
            self.cameras[camera_id] = CameraView(camera_id)
        return self.cameras[camera_id]

    def on_frame(self, frame: Frame) -> None:
        """Keep the frame if its camera's last kept one is older than the page's rate allows."""
        now = time.monotonic()
        with self._lock:
            camera = self._camera(frame.camera_id)
            if now - camera.last_kept_s < self.min_gap_s:
                return
            camera.last_kept_s = now
            camera.frames.append(
                SampledFrame(frame.frame_seq, frame.capture_ts_ns, frame.width, frame.height, frame.data)
            )
            self.version += 1

    def on_event(self, event: DetectionEvent | PoseEvent) -> None:
        """Count the event for its camera's figures; draw what it found if its frame was kept."""
        now = time.monotonic()
        with self._lock:
            camera = self._camera(event.camera_id)
            camera.note_event(now, max(0.0, (event.detect_ts_ns - event.capture_ts_ns) / 1e9))
            camera.skipped_total += event.skipped_before
            kept = camera.frame(event.frame_seq)
            if kept is not None:
                if isinstance(event, PoseEvent):
                    kept.found["people"] = [
                        {"box": list(p.box), "score": p.score, "keypoints": [list(k) for k in p.keypoints]}
                        for p in event.persons
                    ]
                else:
                    kept.found["faces"] = [{"box": list(f.box), "score": f.score} for f in event.faces]
                    kept.faces, kept.embedder = event.faces, event.embedder
            self.version += 1

    def on_alert(self, alert: Alert) -> None:
        with self._lock:
            view = self.alerts.pop(alert.alert_id, None)
            if view is None:
                view = AlertView(alert, [])
            view.record(alert)
            self.alerts[alert.alert_id] = view  # moved to the newest end
            while len(self.alerts) > self.alerts_kept:
                self.alerts.popitem(last=False)
            self.version += 1

    def on_status(self, status: CameraStatus) -> None:
        """The camera's state as its producer says it (a camera with no frames yet gets a tile too)."""
        with self._lock:
            camera = self._camera(status.camera_id)
            said = {"state": status.state, "attempts": status.attempts, "error": status.error, "source": status.source}
            if said != camera.status:
                camera.status = said
                self.version += 1

    def on_groups(self, groups: list[dict[str, Any]]) -> None:
        with self._lock:
            if groups != self.groups:
                self.groups = groups
                self.version += 1

    def kept_frame(self, camera_id: str, seq: int) -> SampledFrame | None:
        with self._lock:
            camera = self.cameras.get(camera_id)
            return camera.frame(seq) if camera else None

    def alert(self, alert_id: str) -> Alert | None:
        with self._lock:
            view = self.alerts.get(alert_id)
            return view.alert if view else None

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows, as JSON-ready values (frames by URL, not bytes)."""
        now = time.monotonic()
        with self._lock:
            cameras = []
            for camera_id in sorted(self.cameras):
                camera = self.cameras[camera_id]
                shown = camera.shown()
                tile = {"camera_id": camera_id, "status": camera.status, **camera.figures(now)}
                tile |= self.drawn.get(camera_id, {})
                if shown is not None:
                    tile |= {
                        "frame_seq": shown.seq,
                        "width": shown.width,
                        "height": shown.height,
                        "capture_ts_ms": shown.capture_ts_ns // 1_000_000,
                        **shown.found,
                    }
                cameras.append(tile)
            return {
                "version": self.version,
                "cameras": cameras,
                "alerts": [view.fields() for view in reversed(self.alerts.values())],
                "groups": self.groups,
            }
