"""Starting a worker: the topics made first (faust consumes nothing from a topic auto-created under
it), the gallery loaded and followed, then the faust app until SIGINT/SIGTERM."""

import logging

from prometheus_client import CollectorRegistry

from facestream import gallery, health, kafka_clients
from facestream.alerting import app as alerting_app
from facestream.alerting.config import AlertingConfig
from facestream.alerting.metrics import AlertingCollector

log = logging.getLogger(__name__)
PARTITIONS = 4  # as the detector makes the detections topic; an existing topic's own count is used


def run(config: AlertingConfig, bootstrap: str | None = None) -> None:
    import faust

    bootstrap = bootstrap or kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    kafka_clients.ensure_topics({config.detections_topic: PARTITIONS}, bootstrap)
    partitions = _partitions(config.detections_topic, bootstrap)
    kafka_clients.ensure_topics({config.status_topic: partitions}, bootstrap)  # or as the producers made it
    status_partitions = _partitions(config.status_topic, bootstrap)
    changelogs = {
        alerting_app.changelog_topic(config): partitions,
        alerting_app.changelog_topic(config, alerting_app.OFFLINE_TABLE): status_partitions,
    }
    kafka_clients.ensure_topics(
        {
            config.poses_topic: partitions,  # keyed by camera like the detections: the table serves both
            config.alerts_topic: partitions,
            **changelogs,
            config.gallery_topic: 1,
        },
        bootstrap,
        configs={**dict.fromkeys(changelogs, kafka_clients.COMPACTED), config.gallery_topic: kafka_clients.COMPACTED},
    )
    stats = alerting_app.AlertingStats()
    readiness = health.Readiness("gallery_loaded", "partitions_assigned")
    if config.http_port:
        registry = CollectorRegistry()
        registry.register(AlertingCollector(stats))
        health.serve(readiness, registry, config.http_port, config.http_host)
    follower = gallery.Follower(bootstrap, config.gallery_topic).start()
    readiness.mark("gallery_loaded")
    log.info(
        "alerting %s, rules %s: %s, %s, %s -> %s, gallery %s (%d people)",
        config.group,
        config.rules,
        config.detections_topic,
        config.poses_topic,
        config.status_topic,
        config.alerts_topic,
        config.gallery_topic,
        len(follower.gallery.entries()),
    )
    app = alerting_app.build(
        config,
        bootstrap,
        partitions,
        status_partitions,
        follower.gallery,
        stats,
        on_ownership=lambda owns: readiness.mark("partitions_assigned", owns),
    )
    try:
        faust.Worker(app, loglevel=logging.getLogger().level or logging.INFO, quiet=True).execute_from_commandline()
    finally:
        follower.stop()
        log.info("stopped: %s", stats.line())


def _partitions(topic: str, bootstrap: str) -> int:
    metadata = kafka_clients.admin(bootstrap).list_topics(topic, timeout=10)
    return len(metadata.topics[topic].partitions)
