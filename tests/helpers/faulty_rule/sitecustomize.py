"""A throwaway kind of alert and a rule that makes mistakes, loaded into a real alerting worker by
putting this folder on its PYTHONPATH (tests/e2e/test_alerting.py): the row goes into the table of
kinds and the rule's module where the registry imports it from, before the worker starts. On each
detection event the rule, ``tailgating``, fails outright on frames 1, 6, 11, ... and makes an alert
the contract refuses (a zone name over 200 characters) on even frames; a worker must dead-letter both
and go on."""

import sys
import types
from dataclasses import dataclass

from facestream.schemas import Alert, alert_id_for, kinds

ROW = kinds.AlertKind("tailgating", "Tailgating", "{count} people through on one badge", device_class="door")
kinds.ALERT_KINDS = (*kinds.ALERT_KINDS, ROW)
kinds.KINDS = (*kinds.KINDS, ROW.name)
kinds.BY_NAME[ROW.name] = ROW


@dataclass(frozen=True)
class TailgatingSettings:
    """No settings: the rule's mistakes are its behaviour."""


def step(_state: dict, event, _context, _where) -> list[Alert]:
    if event.frame_seq % 5 == 1:
        raise RuntimeError(f"the tailgating rule's mistake on frame {event.frame_seq}")
    if event.frame_seq % 2:
        return []
    opened = alert_id_for(event.camera_id, "tailgating", event.event_id)
    refused = "z" * 300  # a zone name the contract refuses (200 characters at most)
    at = event.capture_ts_ns
    return [Alert(opened, "tailgating", "new", event.camera_id, at, at, (), 2, zone=refused)]


def _install() -> None:
    from facestream.alerting.rules.rule import Rule

    module = types.ModuleType("facestream.alerting.rules.tailgating")
    module.RULE = Rule(  # type: ignore[attr-defined]
        name="tailgating",
        title="Tailgating",
        summary="a test's rule that makes mistakes",
        settings=TailgatingSettings,
        example="{}",
        sees="faces",
        step=step,
        close=lambda _state, _event, _why: [],
        default=False,
    )
    sys.modules[module.__name__] = module


_install()
