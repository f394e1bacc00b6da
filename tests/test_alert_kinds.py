"""A new kind of alert is its row in ``schemas/kinds.py``: a throwaway kind added to the table alone is
accepted by the contract, kept and found by the alert store (SQLite and a real PostgreSQL), filtered,
titled, worded and announced to Home Assistant by the notifier, and described by ``facestream
alerts``. The dashboard serves the table as it is (``GET /api/kinds``, tests/e2e/test_dashboard.py),
and no other module lists the kinds."""

import dataclasses
import json
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from helpers.store import OPENED, received

from facestream.alertdb import open_database, queries
from facestream.alertdb.writer import AlertWriter
from facestream.config import check
from facestream.notifier import message
from facestream.notifier.mqtt_state import discovery
from facestream.notifier.rules import TargetSettings, wants
from facestream.schemas import SchemaError, alert_id_for, kinds, pack_alert, unpack_alert
from facestream.tools.alerts import describe

ROOT = Path(__file__).resolve().parents[1]
TAILGATING = kinds.AlertKind("tailgating", "Tailgating", "{count} people through on one badge", device_class="door")


@pytest.fixture
def tailgating(monkeypatch):
    """The table with one more row, for this test only."""
    monkeypatch.setattr(kinds, "ALERT_KINDS", (*kinds.ALERT_KINDS, TAILGATING))
    monkeypatch.setitem(kinds.BY_NAME, TAILGATING.name, TAILGATING)
    return dataclasses.replace(
        OPENED, alert_id=alert_id_for("gate", "tailgating", "e1#0"), kind="tailgating", count=2, camera_id="gate"
    )


def test_a_kind_is_refused_until_it_has_its_row() -> None:
    with pytest.raises(SchemaError, match="kind"):
        pack_alert(dataclasses.replace(OPENED, kind="tailgating"))


def test_a_new_row_reaches_the_contract_the_store_and_its_filter(tailgating, database_url: str) -> None:
    assert unpack_alert(pack_alert(tailgating)) == tailgating
    writer = AlertWriter(open_database(database_url), "store")
    writer.write([received(OPENED, 0), received(tailgating, 1)])
    found, _ = queries.page(writer.engine, queries.AlertFilter(kinds=("tailgating",)), 10, None)
    assert [row["alert_id"] for row in found] == [tailgating.alert_id]


def test_a_new_row_reaches_the_notifier_and_the_alerts_command(tailgating) -> None:
    assert message.title(tailgating) == "Tailgating at gate"
    assert "2 people through on one badge" in message.body(tailgating, ZoneInfo("UTC"), "")
    sensor = json.loads(discovery(tailgating, "home", "homeassistant", "home/available")[0][1])
    assert (sensor["name"], sensor["device_class"]) == ("Tailgating", "door")
    target = TargetSettings(url="json://x", kinds="tailgating")
    check(target)
    assert wants(tailgating, target) and not wants(OPENED, target)
    assert "2 people through on one badge" in describe(tailgating)


def test_no_module_but_the_table_lists_the_kinds() -> None:
    """Three kinds' names quoted on one line of code is a list of kinds kept by hand."""
    quoted = re.compile("|".join(f"[\"'>]{name}[\"'<]" for name in kinds.KINDS))
    folders = ["alert_store", "alerting", "dashboard", "facestream", "notifier", "producers", "schemas", "tools"]
    listed = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in folders
        for path in (ROOT / folder).rglob("*")
        if path.suffix in (".py", ".js", ".html") and path.name != "kinds.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if len(quoted.findall(line)) >= 3
    ]
    assert listed == []
