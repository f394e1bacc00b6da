"""The topics an alerting worker needs, made before it joins its group: its inputs (the detections
topic's partition count for those it makes), the alerts and dead-letter topics, the gallery, and its
tables' changelogs (compacted, co-partitioned with their inputs, checked so)."""

from facestream import kafka_topics
from facestream.alerting.config import AlertingConfig

TABLE = "cameras"
OFFLINE_TABLE = "offline"


def changelog_topic(config: AlertingConfig, table: str = TABLE) -> str:
    """A table's changelog topic (made before the workers start)."""
    return f"{config.group}-{table}-changelog"


def prepare(config: AlertingConfig, bootstrap: str) -> None:
    """Every topic made (existing ones keep their counts) and the co-partitioning checked."""
    kafka_topics.ensure_topics({config.detections_topic: kafka_topics.pipeline_partitions()}, bootstrap)
    partitions = kafka_topics.partition_count(config.detections_topic, bootstrap)
    kafka_topics.ensure_topics({config.status_topic: partitions}, bootstrap)  # or as the producers made it
    status_partitions = kafka_topics.partition_count(config.status_topic, bootstrap)
    table, offline_table = changelog_topic(config), changelog_topic(config, OFFLINE_TABLE)
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
