"""``facestream detect --fronts N``: one GPU owner process and N Kafka-facing front processes, this
process the first of them. Each front is a member of the consumer group with all a replica has
(batching by poll size, limits and skip rules, dead letters, offsets committed after the events are
acknowledged, health and metrics on ``--http-port`` plus its number); the owner decodes and infers
for all of them (server.py).

SIGINT/SIGTERM stop this front; it then stops the others (each finishes the batch in hand and
commits), and the owner ends once every front has said goodbye. A front or the owner that dies
stops the rest and the command exits non-zero, so whatever supervises it starts the set again.
"""

import dataclasses
import functools
import logging
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from facestream import logs
from facestream.detector_service.config import DetectorConfig
from facestream.detector_service.owner.launch import start_owner
from facestream.detector_service.owner.remote import RemoteProcessor
from facestream.detector_service.service import DetectorService, build_processor
from facestream.errors import FacestreamError
from facestream.signals import StopOnSignals

log = logging.getLogger(__name__)

STOP_S = 60.0  # how long a front may take to finish its batch and commit once asked to stop
COUNTED = (
    "frames",
    "events",
    "dead_letters",
    "skipped_old",
    "skipped_nth",
    "skipped_rate",
    "dropped_revoked",
    "faces_embedded",
    "faces_carried",
)


def run_fronts(config: DetectorConfig) -> dict:
    """Serve until stopped; the fronts' counters added up, and each front's summary."""
    count = config.fronts
    owner_config = dataclasses.replace(config, fronts=0, batch=config.owner_batch or config.batch)
    owner, ends = start_owner(functools.partial(build_processor, owner_config), count)
    context = multiprocessing.get_context("spawn")  # a forked child would inherit this one's threads and clients
    summaries = context.Queue()
    others = [
        context.Process(target=_front, args=(front_config(config, i), ends[i], summaries), name=f"front-{i}")
        for i in range(1, count)
    ]
    for process in others:
        process.start()
    for end in ends[1:]:
        end.close()  # each child has its own copy now
    log.info("GPU owner (pid %d) and %d fronts (this one, pids %s)", owner.pid, count, [p.pid for p in others])
    with StopOnSignals("stopping the fronts and the owner"):  # up to the last join, as in _front
        watching = threading.Event()
        threading.Thread(target=_watch, args=(owner, others, watching), name="fronts-watch", daemon=True).start()
        try:
            mine = DetectorService(front_config(config, 0), processor=RemoteProcessor(ends[0])).run()
        finally:
            watching.set()
            asked = _stop(others)
            owner.join(STOP_S)
            if owner.is_alive():
                owner.kill()
    failed = _failures(owner, others, asked)
    if failed:
        raise FacestreamError("; ".join(failed))
    every = [mine, *_drain(summaries, len(others))]
    return {**{key: sum(s.get(key, 0) for s in every) for key in COUNTED}, "fronts": every}


def front_config(config: DetectorConfig, index: int) -> DetectorConfig:
    """Front ``index``'s settings: its own metrics port (the first front's plus its number), no owner of its own."""
    port = config.http_port + index if config.http_port else 0
    return dataclasses.replace(config, fronts=0, http_port=port)


def _front(config: DetectorConfig, end: Connection, summaries) -> None:
    """A front process: the service with the owner as its processor; its exit code says how it ended.
    Guarded by signals while it works. The first front stops the others with SIGTERM whenever it
    ends, which may be while one is still starting or already exiting on its own (flushing its summary):
    the default handler then kills it, and run_fronts counts that as the stop it asked for."""
    logs.setup()
    with StopOnSignals("stopping with the other fronts"):
        try:
            summaries.put(DetectorService(config, processor=RemoteProcessor(end)).run())
        except FacestreamError as exc:
            log.error("front stopped: %s", exc)
            raise SystemExit(exc.exit_code) from None


def _failures(owner: BaseProcess, others: Sequence[BaseProcess], asked: Sequence[BaseProcess] = ()) -> list[str]:
    """The processes of the set that ended badly, each with how. A front in ``asked`` that our SIGTERM
    killed ended well: its handler covers all its work, so the signal came while it was still
    starting or already exiting, with nothing in hand."""
    gone = [
        f"front {i} {_how(p.exitcode)}"
        for i, p in enumerate(others, start=1)
        if p.exitcode and not (p in asked and p.exitcode == -signal.SIGTERM)
    ]
    if owner.exitcode:
        gone.append(f"the GPU owner {_how(owner.exitcode)}")
    return gone


def _how(code: int) -> str:
    return f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with {code} (its log above says why)"


def _watch(owner: BaseProcess, others: list[BaseProcess], done: threading.Event) -> None:
    """Stop this front (as SIGTERM would) when the owner or another front dies."""
    while not done.wait(0.5):
        gone = _failures(owner, others) or ([] if owner.is_alive() else ["the GPU owner is gone"])
        if gone:
            log.error("%s: stopping the fronts", "; ".join(gone))
            os.kill(os.getpid(), signal.SIGTERM)
            return


def _stop(others: Sequence[BaseProcess]) -> list[BaseProcess]:
    """SIGTERM every front still alive and wait for it; the ones signalled."""
    asked = [p for p in others if p.is_alive() and p.pid is not None]  # started, so it has one
    for process in asked:
        process.terminate()  # SIGTERM
    for process in others:
        process.join(STOP_S)
        if process.is_alive():
            log.error("%s did not stop within %.0f s: killed", process.name, STOP_S)
            process.kill()
            process.join()
    return asked


def _drain(summaries, count: int) -> list[dict]:
    found = []
    for _ in range(count):
        try:
            found.append(summaries.get(timeout=5.0))
        except queue.Empty:
            break
    return found
