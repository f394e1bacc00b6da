"""Starting a worker: the topics made first (the tables' changelogs compacted, co-partitioned with
their inputs), the gallery loaded and followed, then the worker until SIGINT/SIGTERM."""

import logging

from prometheus_client import CollectorRegistry

from facestream import gallery, health, kafka_clients, kafka_topics
from facestream.alerting import app as alerting_app
from facestream.alerting.config import AlertingConfig
from facestream.alerting.metrics import AlertingCollector

log = logging.getLogger(__name__)


def run(config: AlertingConfig, bootstrap: str | None = None) -> None:
    bootstrap = bootstrap or kafka_clients.bootstrap_servers()
    kafka_clients.check_reachable(bootstrap)
    # Existing topics keep their counts; the ones made here follow the detections topic's.
    kafka_topics.ensure_topics({config.detections_topic: kafka_topics.pipeline_partitions()}, bootstrap)
    partitions = kafka_topics.partition_count(config.detections_topic, bootstrap)
    kafka_topics.ensure_topics({config.status_topic: partitions}, bootstrap)  # or as the producers made it
    status_partitions = kafka_topics.partition_count(config.status_topic, bootstrap)
    table, offline_table = (
        alerting_app.changelog_topic(config),
        alerting_app.changelog_topic(config, alerting_app.OFFLINE_TABLE),
    )
    changelogs = {table: partitions, offline_table: status_partitions}
    kafka_topics.ensure_topics(
        {
            config.poses_topic: partitions,
            config.alerts_topic: partitions,
            **changelogs,
            config.gallery_topic: 1,
            config.dead_letter_topic: 1,
        },
        bootstrap,
        configs={**dict.fromkeys(changelogs, kafka_topics.COMPACTED), config.gallery_topic: kafka_topics.COMPACTED},
    )
    # One camera's state lives in one partition of a table that both event streams update: refuse to
    # start on topics that would split it.
    kafka_topics.check_co_partitioned(
        [config.detections_topic, config.poses_topic, table], bootstrap, "the rules' camera state"
    )
    kafka_topics.check_co_partitioned([config.status_topic, offline_table], bootstrap, "the offline rule's state")
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
    worker = alerting_app.Worker(
        config,
        bootstrap,
        follower.gallery,
        stats,
        on_ownership=lambda owns: readiness.mark("partitions_assigned", owns),
    )
    try:
        worker.run()
    finally:
        follower.stop()
        log.info("stopped: %s", stats.line())
        if follower.failed is not None:
            raise follower.failed  # instead of a clean exit: the worker stopped because of it
