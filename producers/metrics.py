"""Prometheus metrics of a producer, read from its cameras at scrape time: what each camera sent and
lost, its state (a camera that is reconnecting shows as plainly as in the log), and how old frames
were when they were sent."""

from collections.abc import Callable

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily

from facestream.counters import per_object
from facestream.producers.camera import Camera
from facestream.producers.live import LiveStatus
from facestream.schemas import CAMERA_STATES

AGE_BUCKETS_S = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class FrameAges:
    """A histogram of frame ages at sending (capture to hand-over to Kafka), in seconds."""

    def __init__(self) -> None:
        self.counts = [0] * (len(AGE_BUCKETS_S) + 1)
        self.sum_s = 0.0

    def add(self, age_s: float) -> None:
        self.counts[next((i for i, le in enumerate(AGE_BUCKETS_S) if age_s <= le), len(AGE_BUCKETS_S))] += 1
        self.sum_s += age_s

    def family(self) -> HistogramMetricFamily:
        cumulative, buckets = 0, []
        for le, count in zip((*map(str, AGE_BUCKETS_S), "+Inf"), self.counts):
            cumulative += count
            buckets.append((le, cumulative))
        return HistogramMetricFamily(
            "facestream_producer_frame_age_seconds",
            "Age of each frame sent: from its capture (a live picture: when it was decoded) to its hand-over to Kafka",
            buckets=buckets,
            sum_value=self.sum_s,
        )


class ProducerCollector:
    def __init__(self, cameras: list[Camera], ages: FrameAges) -> None:
        self.cameras = cameras
        self.ages = ages

    def collect(self):
        statuses = {c.camera_id: c.live_status() for c in self.cameras}
        live_cameras = [c for c in self.cameras if statuses[c.camera_id] is not None]
        yield from per_object(Camera, {c.camera_id: c for c in self.cameras}, "camera")
        yield from per_object(LiveStatus, {c.camera_id: statuses[c.camera_id] for c in live_cameras}, "camera")
        for name, help_text, value in (
            (
                "facestream_producer_source_attempts",
                "Failed attempts in a row to reach a live source (0 while it streams)",
                lambda c: statuses[c.camera_id].attempts,
            ),
            (
                "facestream_producer_keyframes_only",
                "1 while a live source decodes only its keyframes",
                lambda c: int(statuses[c.camera_id].keyframes_only),
            ),
        ):
            yield _per_camera(GaugeMetricFamily(name, help_text, labels=["camera"]), live_cameras, value)
        yield _per_camera(
            GaugeMetricFamily(
                "facestream_producer_camera_partition",
                "The frames topic's partition the placement list gives the camera (-1: its key's hash places it)",
                labels=["camera"],
            ),
            self.cameras,
            lambda c: c.partition,
        )
        up = GaugeMetricFamily("facestream_producer_camera_up", "1 while the camera streams", labels=["camera"])
        state = GaugeMetricFamily(
            "facestream_producer_camera_state", "1 for each camera's state", labels=["camera", "state"]
        )
        for camera in self.cameras:
            current = camera.state()
            up.add_metric([camera.camera_id], int(current == "streaming"))
            for name in CAMERA_STATES:
                state.add_metric([camera.camera_id, name], int(name == current))
        yield from (up, state, self.ages.family())


def _per_camera(family, cameras: list[Camera], value: Callable[[Camera], float]):
    for camera in cameras:
        family.add_metric([camera.camera_id], value(camera))
    return family
