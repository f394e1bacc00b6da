"""Soak: the whole CPU pipeline at a steady load for an hour, watching for what only time shows.

Cameras stream the sample photos (one producer process) through a YuNet detector with SFace
embeddings, the alerting workers (every rule, on a gallery of no one: every face is a stranger),
the alert store (SQLite) and the dashboard with no page open, all as the commands a deployment runs,
on topics of their own and the running broker. Every ``interval_s`` the run samples each process's
resident memory, open file descriptors and CPU, and each consumer group's lag. After ``warm_up_s``
it checks that memory stays within ``rss_band`` of where it settled, that lag does not grow and that
no descriptor leaks; the curves and the verdict go to the result file.
"""

import statistics
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import free_port, save, settings_of, spawn
from bench.machine import cpu_seconds, describe
from bench.settings import SoakConfig
from facestream import kafka_clients, kafka_topics, paths, samples
from facestream.alert_store.config import AlertStoreConfig, alert_store_command
from facestream.alerting.config import AlertingConfig, alerting_command
from facestream.broker.local import LocalBroker
from facestream.dashboard.config import DashboardConfig, dashboard_command
from facestream.detector_service.config import DetectorConfig, detector_command
from facestream.producers.config import ProducerConfig, producer_command
from facestream.signals import StopOnSignals


@dataclass(frozen=True)
class Sample:
    t_s: float
    processes: dict[str, dict[str, float]]  # name -> rss_mb, fds, cpu_s
    lag: dict[str, int]  # group -> records behind


def run(cfg: SoakConfig, command: str) -> dict:
    bootstrap = kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    samples.fetch()
    tag = f"soak-{uuid.uuid4().hex[:8]}"
    topics = {p: f"{tag}.{p}" for p in ("frames", "detections", "poses", "alerts", "status", "gallery", "dlq")}
    partitions = kafka_topics.pipeline_partitions()
    counts = {topics[p]: partitions for p in ("frames", "detections", "poses", "alerts", "status")}
    kafka_topics.ensure_topics(
        counts | {topics["dlq"]: 1, topics["gallery"]: 1},
        bootstrap,
        configs={topics["gallery"]: kafka_topics.COMPACTED},
    )
    logs = paths.home() / "bench" / tag
    logs.mkdir(parents=True, exist_ok=True)
    groups = {"detector": f"{tag}.detector", "alerting": f"{tag}.alerting", "alert-store": f"{tag}.alert-store"}
    lag_of = {groups["detector"]: topics["frames"], groups["alerting"]: topics["detections"]}
    lag_of[groups["alert-store"]] = topics["alerts"]
    result: dict[str, Any] = {
        "benchmark": "soak",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "logs": str(logs),
        "complete": False,
    }
    taken: list[Sample] = []
    with StopOnSignals("stopping the services; the samples so far are kept") as stop:
        children = _start(cfg, topics, groups, logs)
        broker_pid = LocalBroker().status().pid
        watched = {name: child.pid for name, child in children.items()} | ({"broker": broker_pid} if broker_pid else {})
        result["broker_heap"] = _heap_flags(broker_pid)
        admin = kafka_clients.admin(bootstrap)
        started = time.monotonic()
        try:
            while time.monotonic() - started < cfg.minutes * 60 and not stop.requested:
                dead = {name: child.returncode for name, child in children.items() if child.poll() is not None}
                if dead:
                    raise RuntimeError(f"stopped during the soak: {dead} (logs in {logs})")
                taken.append(Sample(round(time.monotonic() - started, 1), _processes(watched), _lags(admin, lag_of)))
                if len(taken) % max(1, round(60 / cfg.interval_s)) == 0:
                    _progress(taken[-1], cfg.minutes)
                    result.update(_curves(taken, groups))
                    save(result, cfg.out)
                time.sleep(max(0.0, started + len(taken) * cfg.interval_s - time.monotonic()))
        finally:
            _stop(children)
    result.update(_curves(taken, groups))
    if stop.requested:
        save(result, cfg.out)
        raise SystemExit(f"stopped after {len(taken)} samples: those are in {cfg.out} (marked incomplete)")
    result["verdict"] = verdict(taken, cfg)
    result["complete"] = True
    save(result, cfg.out)
    _print_verdict(result["verdict"])
    return result


def _stop(children: dict[str, subprocess.Popen]) -> None:
    """SIGTERM to every service, as an orchestrator stops them; SIGKILL to one still there after a minute."""
    for child in children.values():
        child.terminate()
    for child in children.values():
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()


def _start(cfg: SoakConfig, topics: dict, groups: dict, logs: Path) -> dict[str, subprocess.Popen]:
    """The services, each as its own command and log, the cameras last (once the others have joined)."""
    sources = [str(samples.portraits_dir()), str(samples.annotated_dir())]
    cameras = [(f"cam-{i:02d}", sources[i % len(sources)]) for i in range(cfg.cameras)]
    database = f"sqlite:///{logs / 'alerts.db'}"
    commands = {
        "detector": detector_command(
            DetectorConfig(
                group=groups["detector"],
                frames_topic=topics["frames"],
                detections_topic=topics["detections"],
                dead_letter_topic=topics["dlq"],
                provider="cpu",
                embedder="sface",
                max_wait_ms=20.0,
            )
        ),
        "alerting": alerting_command(
            AlertingConfig(
                group=groups["alerting"],
                detections_topic=topics["detections"],
                poses_topic=topics["poses"],
                status_topic=topics["status"],
                alerts_topic=topics["alerts"],
                gallery_topic=topics["gallery"],
            )
        ),
        "alert-store": alert_store_command(
            AlertStoreConfig(
                database=database,
                group=groups["alert-store"],
                alerts_topic=topics["alerts"],
                frames_topic=topics["frames"],
            )
        ),
        "dashboard": dashboard_command(
            DashboardConfig(
                http_port=free_port(),
                database=database,
                frames_topic=topics["frames"],
                detections_topic=topics["detections"],
                poses_topic=topics["poses"],
                alerts_topic=topics["alerts"],
                status_topic=topics["status"],
            )
        ),
    }
    children = {name: spawn(logs / f"{name}.log", cmd) for name, cmd in commands.items()}
    time.sleep(20.0)  # the model loaded and the groups joined before the first frame
    producer = ProducerConfig(
        fps=cfg.fps, loop=True, frame_size=cfg.frame_size, frames_topic=topics["frames"], status_topic=topics["status"]
    )
    children["producer"] = spawn(logs / "producer.log", producer_command(cameras, producer))
    return children


def _processes(pids: dict[str, int]) -> dict[str, dict[str, float]]:
    """Resident memory (MB), open descriptors and CPU seconds of each process."""
    found = {}
    for name, pid in pids.items():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            rss_kb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
            fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
            user, system, _, _ = cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
        found[name] = {"rss_mb": round(rss_kb / 1024, 1), "fds": fds, "cpu_s": round(user + system, 2)}
    return found


def _lags(admin, topic_of: dict[str, str]) -> dict[str, int]:
    """Records each group has not committed yet, over all partitions of its topic."""
    return {
        group.rsplit(".", 1)[-1]: kafka_topics.group_lag(group, topic, client=admin)
        for group, topic in topic_of.items()
    }


def _curves(taken: list[Sample], groups: dict) -> dict:
    """The samples as one series per measure: what the result file keeps and the docs draw."""
    names = sorted({name for s in taken for name in s.processes})
    return {
        "t_s": [s.t_s for s in taken],
        "processes": {
            name: {
                measure: [s.processes.get(name, {}).get(measure) for s in taken]
                for measure in ("rss_mb", "fds", "cpu_s")
            }
            for name in names
        },
        "lag": {group: [s.lag.get(group) for s in taken] for group in groups},
    }


def _heap_flags(pid: int | None) -> str:
    """The broker JVM's heap options: with -Xms below -Xmx its RSS grows as the heap does, leak or not."""
    if pid is None:
        return ""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return ""
    return " ".join(a for a in args if a.startswith(("-Xms", "-Xmx")) or a == "-XX:+AlwaysPreTouch")


def verdict(taken: list[Sample], cfg: SoakConfig) -> dict:
    """After warm-up: each process's memory within the band, its descriptors and each group's lag no
    higher in the last tenth of the run than in the first (lag: give or take a second of frames)."""
    after = [s for s in taken if s.t_s >= cfg.warm_up_s]
    if len(after) < 10:
        raise RuntimeError(f"only {len(after)} samples after the warm-up: run longer than --warm-up-s")
    tenth = max(3, len(after) // 10)
    first, last = after[:tenth], after[-tenth:]
    checks: dict[str, dict] = {}
    for name in after[0].processes:
        rss = [s.processes[name]["rss_mb"] for s in after if name in s.processes]
        fds = [s.processes[name]["fds"] for s in after if name in s.processes]
        spread = max(rss) / min(rss) - 1
        checks[name] = {
            "rss_mb_settled": statistics.median(rss[:tenth]),
            "rss_mb_end": statistics.median(rss[-tenth:]),
            "rss_spread": round(spread, 3),
            "rss_flat": spread <= cfg.rss_band,
            "fds_settled": max(fds[:tenth]),
            "fds_end": max(fds[-tenth:]),
            "fds_flat": max(fds[-tenth:]) <= max(fds[:tenth]),
        }
    slack = cfg.cameras * cfg.fps  # a second of frames
    for group in after[0].lag:
        early, late = [s.lag[group] for s in first], [s.lag[group] for s in last]
        checks[f"lag {group}"] = {
            "median_settled": statistics.median(early),
            "median_end": statistics.median(late),
            "max": max(s.lag[group] for s in after),
            "flat": statistics.median(late) <= statistics.median(early) + slack,
        }
    holds = all(c.get("rss_flat", True) and c.get("fds_flat", True) and c.get("flat", True) for c in checks.values())
    return {"holds": holds, "checks": checks}


def _progress(sample: Sample, minutes: float) -> None:
    parts = [f"{name} {p['rss_mb']:.0f} MB {p['fds']} fds" for name, p in sample.processes.items()]
    lags = ", ".join(f"{g} {n}" for g, n in sample.lag.items())
    print(f"{sample.t_s / 60:5.1f}/{minutes:g} min: {'; '.join(parts)}; lag {lags}", flush=True)


def _print_verdict(found: dict) -> None:
    for name, check in found["checks"].items():
        print(f"  {name}: {check}")
    print("holds: memory flat, no descriptor leak, no lag growth" if found["holds"] else "DOES NOT HOLD (see above)")


def render(result: dict) -> list[str]:
    m, s, checks = result["machine"], result["settings"], result["verdict"]["checks"]
    size = "x".join(map(str, s["frame_size"])) if s.get("frame_size") else "photo-sized"
    held = "holds" if result["verdict"]["holds"] else "does not hold"
    lines = [
        f"**Soak, {m['cores']} cores, local broker** (`{result['command']}`): {s['cameras']} cameras at "
        f"{s['fps']:g} fps ({size} frames of the sample photos) for {s['minutes']:g} minutes through a YuNet "
        "detector with SFace embeddings, the alerting workers (every rule), the alert store (SQLite) and the "
        f"dashboard with no page open; sampled every {s['interval_s']:g} s, checked after "
        f"{s['warm_up_s'] / 60:g} minutes of warm-up (first and last tenth of what follows). Verdict: **{held}**."
        + (f" The broker's heap: `{result['broker_heap']}`." if result.get("broker_heap") else ""),
        "",
        "| process | RSS settled MB | RSS at the end MB | spread (max/min - 1) | open fds settled -> end |",
        "|---|---|---|---|---|",
    ]
    for name, c in checks.items():
        if "rss_mb_settled" in c:
            lines.append(
                f"| {name} | {c['rss_mb_settled']:.0f} | {c['rss_mb_end']:.0f} | {100 * c['rss_spread']:.1f}% "
                f"{'' if c['rss_flat'] else '(over the band)'} | {c['fds_settled']} -> {c['fds_end']} |"
            )
    lags = "; ".join(
        f"{name.removeprefix('lag ')} median {c['median_settled']:g} -> {c['median_end']:g} (max {c['max']})"
        for name, c in checks.items()
        if name.startswith("lag ")
    )
    lines += ["", f"Lag, records not yet committed: {lags}. Source: `bench/results/{result['_file']}` (every sample)."]
    return lines
