"""Events and dead letters to Kafka. Both kinds of record report back through ``on_done(error)``
once the broker acknowledged them (or gave up), which is what lets the service commit a frame's offset
only after its outcome is safe."""

import hashlib
import logging
from collections.abc import Callable

from confluent_kafka import KafkaError, KafkaException

from facestream import kafka_clients
from facestream.detector_service.kafka.transactions import Transactions
from facestream.schemas import DetectionEvent, PoseEvent, pack_detection, pack_pose

log = logging.getLogger(__name__)

OnDone = Callable[[object | None], None]  # called with a KafkaError, or None on success


class Publisher:
    """Writes events (detection or pose) to their topic and rejected frames to the dead-letter topic."""

    def __init__(
        self,
        producer,
        detections_topic: str,
        dead_letter_topic: str,
        group_id: str,
        max_record_bytes: int = kafka_clients.MAX_MESSAGE_BYTES,
    ) -> None:
        self._producer = producer
        self.detections_topic = detections_topic
        self.dead_letter_topic = dead_letter_topic
        self._group_id = group_id
        self._max_record_bytes = max_record_bytes
        self.transactions: Transactions | None = None  # exactly-once: each record says its transaction

    def event(self, event: DetectionEvent | PoseEvent, on_done: OnDone) -> None:
        # Built here from the processor's arrays, so not checked again (the builders' tests check them).
        value = pack_pose(event, check=False) if isinstance(event, PoseEvent) else pack_detection(event, check=False)
        self._send(self.detections_topic, event.camera_id.encode(), value, None, on_done)

    def dead_letter(self, source, stage: str, error: Exception, on_done: OnDone) -> None:
        """Forward the original record untouched, with why and where it failed in its headers. A record
        too large to forward (over this client's limit, or refused by the broker as over the topic's)
        goes as the headers alone plus the value's size and digest: its reason and coordinates are
        kept, and its partition moves on."""
        where = f"{source.topic()}/{source.partition()}@{source.offset()}"
        headers = kafka_clients.dead_letter_headers(source, stage, error, self._group_id)
        key, value = source.key(), source.value() or b""

        def without_value(why: object) -> None:
            log.warning("dead letter of %s too large (%s): sending its headers and digest", where, why)
            digest = [
                ("facestream.value_bytes", str(len(value)).encode()),
                ("facestream.value_sha256", hashlib.sha256(value).hexdigest().encode()),
            ]
            self._send(self.dead_letter_topic, key, b"", headers + digest, on_done)

        if (
            len(value) + sum(len(k) + len(v) for k, v in headers) + len(key or b"") + kafka_clients.RECORD_ROOM
            > self._max_record_bytes
        ):
            without_value(f"{len(value):,} bytes, over this client's {self._max_record_bytes:,}")
            return

        def delivered(err) -> None:
            if err is not None and err.code() == KafkaError.MSG_SIZE_TOO_LARGE:
                without_value(err)
            else:
                on_done(err)

        self._send(self.dead_letter_topic, key, value, headers, delivered)

    def serve(self, timeout_s: float = 0.0) -> None:
        """Run delivery callbacks that are due."""
        self._producer.poll(timeout_s)

    def flush(self, timeout_s: float) -> int:
        """Wait for every record in flight; return how many are still undelivered (a fatal error hidden
        behind confluent-kafka's bare SystemError named, as for every producer)."""
        return kafka_clients.flush(self._producer, self.detections_topic, timeout_s)

    def _send(self, topic: str, key: bytes | None, value: bytes, headers, on_done: OnDone) -> None:
        """Produce one record; a refusal at once (e.g. too large) reaches ``on_done`` like a failed delivery."""

        def delivered(err, _msg) -> None:
            on_done(err)

        if self.transactions is not None:
            headers = [*(headers or []), self.transactions.header()]
        try:
            kafka_clients.send(self._producer, topic, value, key, headers, on_delivery=delivered)
        except KafkaException as exc:
            on_done(exc.args[0])
