"""The camera_offline rule: a camera that sends nothing for ``offline_after_s`` becomes one alert,
which ends when its frames come back.

The rule reads the producers' status records (topic ``camera-status``), not the detectors' events,
so a detector that is down or behind never makes a camera look offline. A camera is known from its
producer's first status record: one that never sent a frame is offline ``offline_after_s`` after
its producer first spoke of it. Two ways to go silent:

- its producer says so: a status whose last frame is ``offline_after_s`` older than the status
  (the source is reconnecting, has stalled, or was given up); the alert's reason is the producer's
  last error;
- its producer goes quiet: no status for ``offline_after_s`` (and at least two status intervals) by
  the worker's own clock (``on_silence``, from a timer): the producer died, or its network did.
  Only silence the worker was there to hear counts: after the worker itself stood still (a paused
  process, a stalled machine), quiet is measured from when it listened again.

The alert opens (``new``) once, and ends (``end``) with the first status that reports a frame sent
after the silence began, or when the producer stops serving the camera on purpose (``stopped``,
``ended``). Its id comes from the camera and the start of the silence (its last frame's capture time,
or, for a camera its producer stopped serving and serves again, the first status of the new service
if that is later), so replayed statuses give the same alert and an outage after a new service is a
new alert, never a second life of the last; statuses at or before the last one seen change nothing.
Times are the producer's clock but for the producer's own silence, measured by the worker's.
"""

from dataclasses import dataclass

from facestream.alerting.rules.rule import Rule
from facestream.alerting.rules.state import NS
from facestream.config import check, setting
from facestream.schemas import ACTIVE_STATES, REASON_MAX, Alert, CameraStatus, alert_id_for

KIND = "camera_offline"


@dataclass(frozen=True)
class OfflineSettings:
    offline_after_s: float = setting(
        30.0, "Seconds without a frame from a camera (or a word from its producer) before it is offline.", minimum=1
    )

    def __post_init__(self) -> None:
        check(self)


def on_status(state: dict, status: CameraStatus, received_ns: int, settings: OfflineSettings) -> list[Alert] | None:
    """Update ``state`` (the camera's, changed in place) with a status record that the worker got at
    ``received_ns`` (its own clock); return the alerts it causes, or None for a replayed record."""
    if status.ts_ns <= state.get("heard", -1):
        return None
    state.setdefault("known", status.ts_ns)
    state.update(heard=status.ts_ns, received=received_ns, interval=status.interval_ms * 1_000_000)
    state["last_frame"] = max(state.get("last_frame") or 0, status.last_frame_ts_ns or 0) or None
    was_retired, state["retired"] = (
        state.get("retired", False),
        status.state not in ACTIVE_STATES and status.state != "failed",
    )
    if was_retired and not state["retired"]:
        state["served"] = status.ts_ns  # served again: a silence from now on is a new one
    outage = state.get("open")
    if outage is not None:
        back = (state["last_frame"] or 0) > outage["started"]
        if back or state["retired"]:
            state["open"] = None
            ended = state["last_frame"] if back else status.ts_ns  # the first frame back, or the stop
            why = "frames again" if back else "its producer stopped serving it"
            return [_alert(status.camera_id, outage, "end", ended, status.attempts, why)]
        return []
    silent_since = _silent_since(state)
    if state["retired"] or status.ts_ns - silent_since < settings.offline_after_s * NS:
        return []
    reason = f"{status.state}: {status.error}" if status.error else f"{status.state}, no frame sent"
    return [_open(state, status.camera_id, silent_since, status.ts_ns, status.attempts, reason)]


def on_silence(
    state: dict, camera_id: str, now_ns: int, settings: OfflineSettings, listening_since_ns: int = 0
) -> list[Alert]:
    """A camera whose producer has said nothing for ``offline_after_s`` (by the worker's clock, ``now_ns``;
    counted from ``listening_since_ns`` at the earliest, when the worker last came back from standing
    still) is offline; return the alert, if it opens now."""
    if state.get("open") is not None or state.get("retired", True):
        return []
    quiet_ns = now_ns - max(state["received"], listening_since_ns)
    if quiet_ns < max(settings.offline_after_s * NS, 2 * state["interval"]):
        return []
    silent_since = _silent_since(state)
    reason = f"no word from its producer for {quiet_ns / NS:.0f} s"
    return [_open(state, camera_id, silent_since, state["heard"] + quiet_ns, 0, reason)]


def _silent_since(state: dict) -> int:
    """When the camera's silence began: its last frame, or its producer's first word if it never sent
    one, or the start of its producer's new service if that is later."""
    return max(state["last_frame"] or state["known"], state.get("served", 0))


def _open(state: dict, camera_id: str, silent_since: int, now_ns: int, attempts: int, reason: str) -> Alert:
    reason = reason if len(reason) <= REASON_MAX else reason[: REASON_MAX - 1] + "…"  # the producer's error is long
    outage = state["open"] = {"started": silent_since, "reason": reason}
    return _alert(camera_id, outage, "new", now_ns, attempts, reason)


def _alert(camera_id: str, outage: dict, record: str, at_ns: int, attempts: int, reason: str) -> Alert:
    return Alert(
        alert_id=alert_id_for(camera_id, KIND, str(outage["started"])),
        kind=KIND,
        state=record,
        camera_id=camera_id,
        started_ts_ns=outage["started"],
        updated_ts_ns=at_ns,
        evidence=(),
        count=attempts,
        ended_ts_ns=at_ns if record == "end" else None,
        reason=reason,
    )


RULE = Rule(
    name=KIND,
    title="Offline",
    summary="a camera whose producer sent no frame for a while (the producers' statuses, at all hours)",
    settings=OfflineSettings,
    example='{"offline_after_s": 60}',
    sees="statuses",
)
