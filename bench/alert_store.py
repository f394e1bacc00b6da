"""The history's speed: a page of 50 alerts out of a million, as ``GET /api/alerts`` asks for it (the page
under its filters, then the life of each alert on it), on SQLite and on PostgreSQL, on this machine.

The database is filled with ``alerts`` alerts over 30 days on 300 cameras, of the four kinds, a new and
an end record each, a twentieth of them reviewed (rows written in bulk, not through the store: this
measures reading). Then each question (no filter; one camera; one kind; the unreviewed; one camera's
unreviewed strangers; one day; the tenth page) is asked ``repeats`` times; the median and the slowest
are reported, in milliseconds. PostgreSQL is a server of its own (``postgres.py``), analysed after filling.
"""

import random
import time
from tempfile import TemporaryDirectory
from typing import Any

import numpy as np
from sqlalchemy import Engine, insert, text

from bench import save, settings_of
from bench.engine import _progress
from bench.figures import Target, newest, source
from bench.machine import describe
from bench.postgres import PostgresServer
from bench.settings import AlertStoreBenchConfig
from facestream.alertdb import open_database
from facestream.alertdb.queries import AlertFilter, lifecycles, page
from facestream.alertdb.schema import alerts, records

S = 1_000_000_000
DAY = 86_400 * S
CAMERAS = 300
KINDS = ("stranger", "crowd", "fall", "camera_offline")
CHUNK = 20_000


def run(cfg: AlertStoreBenchConfig, command: str) -> dict:
    now = time.time_ns()
    result: dict[str, Any] = {
        "benchmark": "alert_store",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "rows": [],
    }
    for name in cfg.engines:
        with TemporaryDirectory() as folder:
            server = PostgresServer().start() if name == "postgresql" else None
            try:
                url = server.database() if server else f"sqlite:///{folder}/alerts.db"
                engine = open_database(url)
                fill_s = _fill(engine, cfg.alerts, now)
                _progress(f"{name}: {cfg.alerts:,} alerts in {fill_s:.0f} s")
                for question, where, deep in _questions(now):
                    times, shown = _ask(engine, where, cfg.limit, deep, cfg.repeats)
                    row = {
                        "engine": name,
                        "question": question,
                        "alerts_shown": shown,
                        "median_ms": round(float(np.median(times)), 2),
                        "max_ms": round(float(np.max(times)), 2),
                        "fill_s": round(fill_s, 1),
                    }
                    result["rows"].append(row)
                    _progress(f"{name} {question}: {row['median_ms']} ms (slowest {row['max_ms']})")
                engine.dispose()
            finally:
                if server:
                    server.stop()
        save(result, cfg.out)
    for row in result["rows"]:
        print(
            f"{row['engine']:<11} {row['question']:<40} median {row['median_ms']:7.2f} ms  max {row['max_ms']:7.2f} ms"
        )
    print(f"results: {cfg.out}")
    return result


def _fill(engine: Engine, count: int, now: int) -> float:
    """``count`` alerts over the last 30 days, each with a new and an end record; seconds taken."""
    rng = random.Random(1)
    start = time.monotonic()
    with engine.begin() as conn:
        for first in range(0, count, CHUNK):
            rows, lives = [], []
            for i in range(first, min(first + CHUNK, count)):
                started = now - rng.randrange(30 * DAY)
                ended = started + rng.randrange(1, 120) * S
                alert_id = f"{i:012d}"
                rows.append(
                    {
                        "alert_id": alert_id,
                        "kind": KINDS[i % len(KINDS)],
                        "camera_id": f"camera-{rng.randrange(CAMERAS):03d}",
                        "state": "end",
                        "started_ts_ns": started,
                        "updated_ts_ns": ended,
                        "ended_ts_ns": ended,
                        "count": rng.randrange(1, 20),
                        "reason": None,
                        "evidence": [],
                        "records": 2,
                        "reviewed_ts_ns": ended + S if rng.random() < 0.05 else None,
                        "reviewed_by": None,
                    }
                )
                for state, ts in (("new", started), ("end", ended)):
                    lives.append(
                        {"alert_id": alert_id, "state": state, "updated_ts_ns": ts, "payload": b"", "source": "-"}
                    )
            conn.execute(insert(alerts), rows)
            conn.execute(insert(records), lives)
    with engine.begin() as conn:
        conn.execute(text("ANALYZE"))
    return time.monotonic() - start


def _questions(now: int) -> list[tuple[str, AlertFilter, int]]:
    """(what is asked, its filter, pages to skip first)."""
    return [
        ("newest, no filter", AlertFilter(), 0),
        ("one camera", AlertFilter(cameras=("camera-042",)), 0),
        ("one kind", AlertFilter(kinds=("fall",)), 0),
        ("not reviewed", AlertFilter(reviewed=False), 0),
        (
            "one camera's unreviewed strangers",
            AlertFilter(cameras=("camera-042",), kinds=("stranger",), reviewed=False),
            0,
        ),
        ("one day, 10 days ago", AlertFilter(since_ns=now - 11 * DAY, until_ns=now - 10 * DAY), 0),
        ("the tenth page, no filter", AlertFilter(), 9),
    ]


def _ask(engine: Engine, where: AlertFilter, limit: int, deep: int, repeats: int) -> tuple[list[float], int]:
    """Milliseconds per page as the API makes it (the page, then its alerts' lives), ``repeats`` times;
    and how many alerts the page held."""
    before = None
    for _ in range(deep):  # the cursor of the page asked for
        before = page(engine, where, limit, before)[1]
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        rows, _next = page(engine, where, limit, before)
        lifecycles(engine, [r["alert_id"] for r in rows])
        times.append((time.perf_counter() - started) * 1000)
    return times, len(rows)


def render(result: dict) -> list[str]:
    m, s = result["machine"], result["settings"]
    lines = [
        f"**The history's pages, {m['cores']} cores of an {m['cpu']}** (`{result['command']}`; {s['alerts']:,} alerts "
        f"over 30 days on 300 cameras, a new and an end record each; a page of {s['limit']} as `GET /api/alerts` makes "
        f"it, the page then its alerts' lives; {s['repeats']} times each, ms):",
        "",
        "| database | question | alerts shown | median ms | slowest ms | fill s |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['engine']} | {r['question']} | {r['alerts_shown']} | {r['median_ms']:.1f} | {r['max_ms']:.1f} "
            f"| {r['fill_s']:.0f} |"
        )
    lines += ["", source(result)]
    return lines


def targets(results: dict[str, dict]) -> list[Target]:
    """The slowest question's median page time, per database, in the newest run."""
    store = newest(results, "alert_store")
    if store is None:
        return []
    slowest = {e: max(r["median_ms"] for r in store["rows"] if r["engine"] == e) for e in store["settings"]["engines"]}
    shown = ", ".join(f"{e} {ms:.1f} ms" for e, ms in slowest.items())
    return [
        Target(
            f"History: a page of {store['settings']['limit']} of {store['settings']['alerts']:,} alerts < 100 ms",
            f"slowest question's median: {shown}",
            max(slowest.values()) < 100,
            store["_file"],
            shown,
        )
    ]
