"""Wires the stages: group member -> batcher -> processor (decode, engine, model) -> events -> offsets."""

import dataclasses
import functools
import logging
import os
import socket
import sys
import time
from concurrent.futures import Future, wait

from facestream import health, kafka_access, kafka_clients, kafka_topics, logs
from facestream.detector_service import gpu_metrics, metrics, models
from facestream.detector_service.config import DetectorConfig, PoseConfig
from facestream.detector_service.inference import gpu_choice
from facestream.detector_service.inference.embedder import Embedder
from facestream.detector_service.inference.engines import onnx_provider, open_engine
from facestream.detector_service.kafka import transactions
from facestream.detector_service.kafka.batcher import Batcher
from facestream.detector_service.kafka.consumer import FramesMember
from facestream.detector_service.kafka.limits import FrameLimits, LimitError
from facestream.detector_service.kafka.publisher import Publisher
from facestream.detector_service.kafka.rate_limit import RateLimit
from facestream.detector_service.kafka.skips import SkippedRuns
from facestream.detector_service.models.base import Thresholds
from facestream.detector_service.processor import FrameProcessor, Pending
from facestream.detector_service.stats import Stats
from facestream.errors import BrokerError, ModelError
from facestream.schemas import Frame, SchemaError, unpack_frame
from facestream.service import Service

log = logging.getLogger(__name__)


def build_processor(config: DetectorConfig, warm_up: bool = True) -> FrameProcessor:
    """Model file -> plugin, engine (warmed up) and processor, refusing random weights unless allowed.
    ``warm_up=False`` for one batch and done (a photo enrolled or searched for): warming every bucket
    first (on a CPU, the embedder's largest is 256 faces: seconds) would cost more than the batch."""
    if config.device is not None:  # before any CUDA library starts in this process
        gpu_choice.use_gpu(config.device)
    path = models.resolve(config.model)
    metadata = models.read_metadata(path)
    model = models.plugin_for(metadata, str(path))
    random_weights = models.has_random_weights(metadata)
    if random_weights and not config.allow_random_weights:
        raise ModelError(
            f"{path} was exported with --random-init: it detects nothing. "
            "Pass --allow-random-weights to run it anyway (benchmarks only)."
        )
    input_hw = model.input_spec.resolve(config.input_size)
    engine = open_engine(path, input_hw, config.batch, model, config.provider, config.ort_threads)
    defaults = model.default_thresholds
    thresholds = Thresholds(
        score_threshold=defaults.score_threshold if config.score_threshold is None else config.score_threshold,
        nms_iou=defaults.nms_iou if config.nms_iou is None else config.nms_iou,
    )
    stats = Stats(
        provider=engine.provider,
        fallback=bool(engine.fallbacks),
        warning="RANDOM WEIGHTS: boxes are meaningless" if random_weights else None,
    )
    if random_weights:
        log.warning("model %s has RANDOM WEIGHTS (allowed for benchmarks): its events mean nothing", path)
    embedder = None
    if config.embedder != "none":  # on the device the detector got, its fallbacks already logged
        embedder = Embedder(config.embedder, onnx_provider(engine), config.ort_threads, landmarks=model.landmarks)
    processor = FrameProcessor(
        engine,
        model,
        thresholds,
        config.decode_threads,
        stats,
        config.decode,
        config.gpu_decode_settings,
        embedder,
        config.embed_policy,
    )
    if warm_up:
        took_ms = processor.warm_up() * 1000
        log.info("warm-up of the decoder and buckets %s took %.0f ms", list(engine.buckets), took_ms)
    return processor


class DetectorService(Service):
    """The Kafka half: a group member feeding a processor (``build_processor``'s, or a benchmark's).
    Batch N+1 is taken and started while batch N is on the device, and becomes events after it;
    commits follow acknowledgements."""

    stopping = "finishing the batch in hand, then stopping"

    def __init__(self, config: DetectorConfig, processor=None, bootstrap: str | None = None) -> None:
        # Ready once the model is warmed up and this replica owns partitions; /healthz, /readyz and
        # /metrics answer from before the warm-up (``on_start``), which can take minutes (a TensorRT build).
        super().__init__(
            bootstrap,
            health.Readiness("model_warm", "partitions_assigned"),
            None,  # the processor's, once it is built
            config,
        )
        self.config = config
        self.processor = processor
        self.limits = FrameLimits(config.max_frame_bytes, config.max_pixels)
        self._skipped = SkippedRuns()  # frames skipped, until the next event of their camera announces them
        self._seen: dict[str, int] = {}  # camera -> frames taken, for --every-nth
        self._rate = RateLimit(config.max_fps_per_camera) if config.max_fps_per_camera else None
        self._fatal: str | None = None
        self.pending: Pending | None = None  # the batch on the device

    def run(self) -> dict:
        """Serve until SIGINT/SIGTERM (or idle, if asked); return the final counters."""
        return super().run().summary()

    def on_start(self) -> None:
        """The model built and warmed up (unless given), the topics made, the producer of events."""
        cfg = self.config
        if cfg.switch_interval_ms is not None:
            sys.setswitchinterval(cfg.switch_interval_ms / 1000)
        self.processor = self.processor or build_processor(cfg)
        self.stats = self.processor.stats
        events = "pose" if isinstance(cfg, PoseConfig) else "detection"
        self.registry.register(metrics.StatsCollector(self.stats, self.processor.describe(), events))
        gpu = gpu_metrics.gpu_collector(self.stats.provider)
        if gpu is not None:
            self.registry.register(gpu)
        self.readiness.mark("model_warm")
        partitions = kafka_topics.pipeline_partitions()
        kafka_topics.ensure_topics(
            {cfg.frames_topic: partitions, cfg.detections_topic: partitions, cfg.dead_letter_topic: 1}, self.bootstrap
        )
        # Host and process: each member of the group (a replica, or each front of one) is told apart in
        # the group's description, as `kafka-consumer-groups --describe` and bench e2e show it.
        self.client_id = f"facestream-detector-{socket.gethostname()}-{os.getpid()}"
        settings: dict = {"compression.type": "lz4"}  # events compress
        if cfg.exactly_once:
            settings |= transactions.producer_settings(self.client_id, cfg.group)
            log.info("exactly-once: transactional.id %s", settings["transactional.id"])
        self.transactional_id = settings.get("transactional.id", "")
        self.producer = kafka_clients.producer(self.client_id, self.bootstrap, **settings)
        self.publisher = Publisher(self.producer, cfg.detections_topic, cfg.dead_letter_topic, cfg.group)
        log.info(
            "detector %s, batch %d, max wait %.0f ms, group %s%s%s%s: %s -> %s",
            self.processor.describe(),
            cfg.batch,
            cfg.max_wait_ms,
            cfg.group,
            ", exactly-once" if cfg.exactly_once else "",
            f", one frame in {cfg.every_nth} per camera" if cfg.every_nth > 1 else "",
            f", at most {cfg.max_fps_per_camera:g} frames/s per camera (newest first; the others skipped, counted)"
            if cfg.max_fps_per_camera
            else "",
            cfg.frames_topic,
            cfg.detections_topic,
        )

    def _transactions(self) -> transactions.Transactions | None:
        """With --exactly-once, the producer's transactions, which the publisher tags each record with."""
        if not self.config.exactly_once:
            return None
        found = transactions.Transactions(self.producer, self.transactional_id)
        self.publisher.transactions = found
        return found

    def join(self) -> FramesMember:
        cfg = self.config
        member = FramesMember(
            self.bootstrap,
            cfg.group,
            cfg.frames_topic,
            self.client_id,
            lambda: self.publisher.flush(30.0),
            start_at=cfg.start_at,
            start_back_s=cfg.start_back_s,
            session_timeout_s=cfg.session_timeout_s,
            transactions=self._transactions(),
            fetch_queue_mb=cfg.fetch_queue_mb,
            on_ownership=self.owned,
            on_new_consumer=self._count_new_consumer,
        )
        self.batcher = Batcher(member.consume, cfg.batch, cfg.max_wait_ms / 1000.0)
        return member

    def next_batch(self) -> list:
        # With a batch in flight, the next one fills only while that batch is on the device: its events
        # must not wait for more than the device's own time.
        if self.pending is None:
            return self.batcher.next_batch(0.5)
        return self.batcher.next_batch(0.0, self.pending.future.done)

    def busy(self) -> bool:
        return self.pending is not None

    def handle(self, messages: list) -> None:
        following = self._begin(messages) if messages else None
        if self.pending is not None:
            self._finish(self.pending)  # batch N becomes events while batch N+1 decodes and infers
        self.pending = following

    def commit(self) -> None:
        """Every turn: delivery reports served, what they acknowledged committed (not waited for)."""
        self.publisher.serve()
        self.member.commit(asynchronous=True)
        self._raise_if_fatal()

    def on_stop(self, failed: bool) -> None:
        """The batch in hand finished (after a clean stop), every record acknowledged, the offsets past
        them committed and waited for; a second signal meanwhile is logged, not fatal."""
        if self.member is not None:
            if not failed and self.pending is not None:
                self._finish(self.pending)
            if failed and self.config.exactly_once:
                # Its open transaction cannot commit now (a fenced producer refuses every call, a flush
                # included): the broker aborts it, and the next owner answers its frames again.
                log.warning("exactly-once: the open transaction is left to be aborted; its frames go to the next owner")
            else:
                left = self.publisher.flush(30.0)
                if left:
                    log.error("%d records were not acknowledged at shutdown; their frames stay uncommitted", left)
                self.member.commit(asynchronous=False)
        if self.processor is not None:
            self.processor.close()

    def _count_new_consumer(self) -> None:
        self.stats.new_consumers += 1

    # -- one batch ----------------------------------------------------------------------------

    def _begin(self, messages: list) -> Pending | None:
        """Track each message, dead-letter unreadable ones, skip what is asked to be skipped (too old,
        over the rate, passed over), start decoding the rest."""
        readable = [(msg, frame) for msg in messages if (frame := self._readable(msg)) is not None]
        old = {id(frame) for _, frame in readable if self._too_old(frame)}
        over = self._rate.over([f for _, f in readable if id(f) not in old]) if self._rate is not None else set()
        frames, sources = [], []
        for msg, frame in readable:  # in order: a camera's skips and takes make its runs (kafka/skips.py)
            reason = "old" if id(frame) in old else "rate" if id(frame) in over else None
            if reason is None and self._passed_over(frame):
                reason = "nth"
            if reason is not None:
                self._skip(msg, frame, reason)
                continue
            self._skipped.taken(frame.camera_id)
            frames.append(frame)
            sources.append(msg)
        return self.processor.begin(frames, sources) if frames else None

    def _readable(self, msg) -> Frame | None:
        """The frame of a record this replica owns, tracked; None for an error, a record revoked while
        the batch filled, or one dead-lettered (no key, bad schema, over the limits)."""
        if msg.error():
            kafka_access.check_allowed(msg.error(), f"read {msg.topic()} in group {self.config.group}")
            log.warning("consumer error: %s", msg.error())
            return None
        if not self.member.owns(msg):  # revoked while the batch filled: the new owner has it
            return None
        self.member.tracker.track((msg.topic(), msg.partition()), msg.offset())
        self.stats.frames += 1
        if msg.key() is None:  # frames are keyed by camera: one without breaks its camera's order
            self._dead_letter(msg, "key", SchemaError("Frame", "key", "the record has no key (its camera id)"))
            return None
        try:
            frame = unpack_frame(msg.value())
        except SchemaError as exc:
            self._dead_letter(msg, "schema", exc)
            return None
        problem = self.limits.problem(len(msg.value() or b""), frame)
        if problem is not None:
            self._dead_letter(msg, "limits", LimitError(problem))
            return None
        return frame

    def _finish(self, pending: Pending) -> None:
        self._await(pending.future)
        for outcome in self.processor.finish(pending):
            if not self.member.owns(outcome.tag):  # revoked while in flight: the new owner answers it
                self.stats.dropped_revoked += 1
                continue
            if outcome.error is not None:
                self._dead_letter(outcome.tag, "decode", outcome.error)
            else:
                event = self._announcing_skips(outcome.event)
                counted = functools.partial(self.stats.count_event, event.capture_ts_ns, time.time_ns())
                self.publisher.event(event, self._on_done(outcome.tag, counted))

    def _await(self, future: Future) -> None:
        """Wait for a batch; one slower than a quarter of ``max.poll.interval.ms`` (a heavy model on a
        CPU) gets keep-alive polls, so the group never takes this replica for hung."""
        if wait([future], timeout=self.member.keep_alive_s).done:
            return
        self.stats.slow_batches += 1
        if logs.worth_saying(self.stats.slow_batches):
            log.info(
                "a batch has run %.1f s: polling with the partitions paused to stay in the group (%d such batches)",
                self.member.keep_alive_s,
                self.stats.slow_batches,
            )
        try:
            self.member.keep_alive()
            while not wait([future], timeout=self.member.keep_alive_s).done:
                self.member.keep_alive()
        finally:
            self.member.resume()

    def _too_old(self, frame) -> bool:
        limit = self.config.max_frame_age_s
        return limit is not None and time.time_ns() - frame.capture_ts_ns > limit * 1e9

    def _passed_over(self, frame) -> bool:
        """With ``--every-nth`` N, True for all but one in N frames of each camera (the first, N+1st, ...)."""
        seen = self._seen[frame.camera_id] = self._seen.get(frame.camera_id, -1) + 1
        return seen % self.config.every_nth != 0

    def _skip(self, msg, frame, reason: str) -> None:
        """A frame too old to matter, over the camera's rate or passed over by ``--every-nth`` (``reason``
        old, rate, nth): no event, its offset done, counted and remembered for the camera's next event. A
        too-old frame is logged at the camera's first skip and every 100th; the other two reasons follow
        from the settings, which are logged once, at start."""
        count = self.stats.count_skipped(frame.camera_id, reason)
        self._skipped.skipped(frame.camera_id, frame.frame_seq)
        self.member.tracker.done((msg.topic(), msg.partition()), msg.offset())
        if reason == "old" and logs.worth_saying(count):
            age_s = (time.time_ns() - frame.capture_ts_ns) / 1e9
            log.warning(
                "camera %s: skipping frame %d, captured %.1f s ago (over --max-frame-age-s %g; %d skipped so far)",
                frame.camera_id,
                frame.frame_seq,
                age_s,
                self.config.max_frame_age_s,
                count,
            )

    def _announcing_skips(self, event):
        """``event`` with the frames of its camera skipped before it (and after its previous event)."""
        skipped = self._skipped.announced_by(event.camera_id, event.frame_seq)
        return dataclasses.replace(event, skipped_before=skipped) if skipped else event

    def _dead_letter(self, msg, stage: str, error: Exception) -> None:
        log.warning("dead-lettering %s/%d@%d (%s): %s", msg.topic(), msg.partition(), msg.offset(), stage, error)
        self.publisher.dead_letter(msg, stage, error, self._on_done(msg, lambda: self.stats.count_dead_letter(stage)))

    def _on_done(self, msg, count):
        tp, offset = (msg.topic(), msg.partition()), msg.offset()

        def done(err) -> None:
            if err is not None:
                # Never commit past a frame whose outcome the broker did not take: stop, and let
                # the group hand its partition to a member that can (at-least-once).
                self._fatal = f"delivery of the outcome of {tp[0]}/{tp[1]}@{offset} failed: {err}"
                return
            count()
            self.member.tracker.done(tp, offset)

        return done

    def _raise_if_fatal(self) -> None:
        if self._fatal:
            raise BrokerError(self._fatal)
