"""The consumer groups the page shows (state, members, lag), read through Kafka's admin API in a
process of its own: ``python -m facestream.dashboard.groups INTERVAL_S`` prints one JSON line per read.

A process of its own, because librdkafka 2.16 (confluent-kafka 2.16.1) aborts the whole process when
a broker drops its connection under a request bound for a group's coordinator (describe a group,
list its offsets): the assertion ``eonce->refcnt > 0`` in ``rd_kafka_enq_once_del_source_return``,
confluentinc/librdkafka#5397, seen here while a cluster's nodes restarted one by one. Out here the
abort costs one read; ``reader.GroupReader`` says so and starts another.
"""

import json
import logging
import os
import sys
import time
from typing import Any

from facestream import kafka_clients, kafka_reading, logs

log = logging.getLogger(__name__)
VIEWER_PREFIX = kafka_reading.VIEWER_GROUP_PREFIX  # throwaway groups of viewers (the page's too): not shown


def unreadable(why: str) -> list[dict[str, Any]]:
    """What the page shows in place of the groups when they cannot be read."""
    return [{"group": "(unreadable)", "error": why}]


def read_groups(admin, timeout_s: float) -> list[dict[str, Any]]:
    """Every consumer group but viewers and idle ones (no members, nothing to catch up on): its state,
    members (client id, host, partitions) and lag (the topics' ends minus its committed offsets)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    listed = admin.list_consumer_groups(request_timeout=timeout_s).result()
    ids = sorted(g.group_id for g in listed.valid if not g.group_id.startswith(VIEWER_PREFIX))
    if not ids:
        return []
    described = {gid: f.result() for gid, f in admin.describe_consumer_groups(ids, request_timeout=timeout_s).items()}
    committed = {}
    for gid in ids:  # one group per request: the API takes no more
        request = [ConsumerGroupTopicPartitions(gid)]
        committed[gid] = admin.list_consumer_group_offsets(request, request_timeout=timeout_s)[gid].result()
    partitions = {(tp.topic, tp.partition) for c in committed.values() for tp in c.topic_partitions}
    ends = {}
    if partitions:
        asked = {TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions}
        for tp, future in admin.list_offsets(asked, request_timeout=timeout_s).items():
            ends[(tp.topic, tp.partition)] = future.result().offset
    groups = []
    for gid in ids:
        lag: dict[str, int] = {}
        for tp in committed[gid].topic_partitions:
            if tp.offset >= 0 and (tp.topic, tp.partition) in ends:
                lag[tp.topic] = lag.get(tp.topic, 0) + max(0, ends[(tp.topic, tp.partition)] - tp.offset)
        description = described[gid]
        if not description.members and not any(lag.values()):
            continue
        groups.append(
            {
                "group": gid,
                "state": str(description.state).rsplit(".", 1)[-1].lower(),
                "members": [
                    {
                        "client_id": m.client_id,
                        "host": m.host,
                        "partitions": sorted(
                            f"{tp.topic}[{tp.partition}]" for tp in (m.assignment.topic_partitions or [])
                        ),
                    }
                    for m in sorted(description.members, key=lambda m: m.client_id)
                ],
                "lag": lag,
            }
        )
    return groups


def main(interval_s: float) -> None:
    """Read the groups every ``interval_s`` seconds and print each read as a JSON line, until stdout
    closes (the dashboard has gone)."""
    logs.setup()
    admin = kafka_clients.admin()
    while True:
        try:
            groups = read_groups(admin, max(5.0, interval_s))
        except Exception as exc:  # the broker away for a while: say so on the page and keep trying
            log.warning("cannot read the consumer groups: %s", exc)
            groups = unreadable(str(exc))
        try:
            print(json.dumps(groups), flush=True)
        except BrokenPipeError:  # the dashboard has gone
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
            return
        time.sleep(interval_s)


if __name__ == "__main__":
    main(float(sys.argv[1]))
