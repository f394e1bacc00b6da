"""``facestream kafka acls``: one Kafka principal per role, each allowed only its own topics and groups.

A camera that is taken over must not be able to forge or hide alerts, and a dashboard only looks, but
for the gallery, which people teach from its page.
Each role's grants are worked out from the services' own settings (their defaults, or the tables of
the ``--config`` file the deployment shares, e.g. ``[detect] frames_topic = ...``), so renaming a
topic there moves its ACLs with it. The command also makes the pipeline's topics (as ``facestream
kafka start``'s services would), so that no role needs to create them; run it as an admin (a super
user of the cluster).
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import click

from facestream import kafka_clients, kafka_reading, kafka_topics
from facestream.alert_store.config import AlertStoreConfig
from facestream.alerting.config import AlertingConfig
from facestream.config import names
from facestream.dashboard.config import DashboardConfig
from facestream.detector_service.config import DetectorConfig, PoseConfig
from facestream.notifier.config import NotifierConfig
from facestream.producers.config import ProducerConfig

VIEWERS = kafka_reading.VIEWER_GROUP_PREFIX
ROLES = ("camera", "detector", "pose", "alerting", "alert-store", "notifier", "dashboard")


@dataclass(frozen=True)
class Grant:
    """Operations a role may perform on one resource: a topic, a group or transactional ids, by name
    (``*``: every one) or, with ``prefix``, every name that starts with it."""

    kind: str  # topic, group, transactional_id
    name: str
    operations: tuple[str, ...]
    prefix: bool = False


def _reads(*topics: str) -> list[Grant]:
    return [Grant("topic", t, ("READ", "DESCRIBE")) for t in topics]


def _writes(*topics: str) -> list[Grant]:
    return [Grant("topic", t, ("WRITE", "DESCRIBE")) for t in topics]


def _consumes(group: str) -> list[Grant]:
    return [Grant("group", group, ("READ", "DESCRIBE"))]


def _replica(config: DetectorConfig) -> list[Grant]:
    """A detector or pose replica: frames in, events and dead letters out, its group, and the
    transactional ids of its exactly-once mode (``GROUP.CLIENT.RANDOM``)."""
    return [
        *_reads(config.frames_topic),
        *_writes(config.detections_topic, config.dead_letter_topic),
        *_consumes(config.group),
        Grant("transactional_id", f"{config.group}.", ("WRITE", "DESCRIBE"), prefix=True),
    ]


def _config(settings: Mapping[str, Any], command: str, kind):
    """A service's config as the deployment sets it: its defaults, then its table of the config file."""
    known = {name for name in kind.__dataclass_fields__ if not name.startswith("_")}
    return kind(**{key: value for key, value in settings.get(command, {}).items() if key in known})


def _value(settings: Mapping[str, Any], command: str, field: str, kind) -> str:
    """One setting, for a config that cannot be made without more (the notifier needs its targets)."""
    return settings.get(command, {}).get(field, kind.__dataclass_fields__[field].default)


def grants(settings: Mapping[str, Any]) -> dict[str, list[Grant]]:
    """Every role's grants; ``settings`` holds each command's table of the config file (may be empty)."""
    camera, detector = _config(settings, "produce", ProducerConfig), _config(settings, "detect", DetectorConfig)
    pose, alerting = _config(settings, "pose", PoseConfig), _config(settings, "alerting", AlertingConfig)
    store, page = _config(settings, "alert-store", AlertStoreConfig), _config(settings, "dashboard", DashboardConfig)
    notify_alerts = _value(settings, "notify", "alerts_topic", NotifierConfig)
    notify_group = _value(settings, "notify", "group", NotifierConfig)
    notify_frames = _value(settings, "notify", "frames_topic", NotifierConfig)
    return {
        # the frames the detector and the pose service read (one topic, or one each): any camera's
        "camera": _writes(
            *dict.fromkeys((camera.frames_topic, detector.frames_topic, pose.frames_topic)), camera.status_topic
        ),
        "detector": _replica(detector),
        "pose": _replica(pose),
        "alerting": [
            *_reads(alerting.detections_topic, alerting.poses_topic, alerting.status_topic, alerting.gallery_topic),
            *_writes(alerting.alerts_topic, alerting.dead_letter_topic),
            *_consumes(alerting.group),
            Grant("group", VIEWERS, ("READ",), prefix=True),  # the gallery, followed by a viewer
            # faust's own topics (the tables' changelogs, its assignor's) start with its app id, the group
            Grant("topic", f"{alerting.group}-", ("CREATE", "READ", "WRITE", "DESCRIBE", "DESCRIBE_CONFIGS"), True),
        ],
        "alert-store": [
            *_reads(store.alerts_topic, *store.frames_topics),
            *_writes(store.dead_letter_topic),
            *_consumes(store.group),
            *_consumes(kafka_reading.EVIDENCE_GROUP),
        ],
        "notifier": [
            *_reads(notify_alerts, *names(notify_frames)),
            *_consumes(notify_group),
            *_consumes(kafka_reading.EVIDENCE_GROUP),
        ],
        "dashboard": [
            *_reads(*page.frames_topics, page.detections_topic, page.poses_topic, page.alerts_topic, page.status_topic),
            # The gallery, shown and taught from the page ("this is NAME", "not this person", undo, a photo)
            Grant("topic", page.gallery_topic, ("READ", "WRITE", "DESCRIBE")),
            Grant("group", VIEWERS, ("READ", "DESCRIBE"), prefix=True),
            # the page's table of consumer groups: every group's members, and its lag on any topic; the
            # admin page's retention of each topic (read only)
            Grant("group", "*", ("DESCRIBE",)),
            Grant("topic", "*", ("DESCRIBE", "DESCRIBE_CONFIGS")),
        ],
    }


def pipeline_topics(settings: Mapping[str, Any]) -> dict[str, int]:
    """The topics the roles share, with their partition counts: the pipeline's count (keyed alike, they
    are co-partitioned), one for the gallery and the dead letters."""
    named = {g.name for role in grants(settings).values() for g in role if g.kind == "topic" and not g.prefix}
    single = {_value(settings, "alerting", "gallery_topic", AlertingConfig)}
    single |= {
        _value(settings, c, "dead_letter_topic", k) for c, k in (("detect", DetectorConfig), ("pose", PoseConfig))
    }
    single.add(_value(settings, "alert-store", "dead_letter_topic", AlertStoreConfig))
    single.add(_value(settings, "alerting", "dead_letter_topic", AlertingConfig))
    partitions = kafka_topics.pipeline_partitions()
    return {name: 1 if name in single else partitions for name in sorted(named - {"*"})}


STRIMZI_TYPES = {"topic": "topic", "group": "group", "transactional_id": "transactionalId"}


def strimzi_resources(settings: Mapping[str, Any], every: dict[str, list[Grant]], topics: dict[str, int]) -> dict:
    """The topics (a count of 0: the pipeline's partitions, set by the chart) and each role's ACLs in
    the shape of Strimzi's KafkaTopic and KafkaUser (simple authorization)."""
    pipeline = kafka_topics.pipeline_partitions()
    gallery = _value(settings, "alerting", "gallery_topic", AlertingConfig)
    return {
        "topics": {name: 0 if n == pipeline else n for name, n in topics.items()},
        "compacted": [gallery],
        "users": {
            role: [
                {
                    "resource": {
                        "type": STRIMZI_TYPES[grant.kind],
                        "name": grant.name,
                        "patternType": "prefix" if grant.prefix else "literal",
                    },
                    "operations": [op.title().replace("_", "") for op in grant.operations],
                }
                for grant in role_grants
            ]
            for role, role_grants in every.items()
        },
    }


def bindings(principals: dict[str, str], every: dict[str, list[Grant]]) -> list:
    """confluent-kafka's AclBindings for ``every`` role's grants, each to its principal."""
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    made = []
    for role, role_grants in every.items():
        for grant in role_grants:
            pattern = ResourcePatternType.PREFIXED if grant.prefix else ResourcePatternType.LITERAL
            for operation in grant.operations:
                made.append(
                    AclBinding(
                        ResourceType[grant.kind.upper()],
                        grant.name,
                        pattern,
                        f"User:{principals[role]}",
                        "*",
                        AclOperation[operation],
                        AclPermissionType.ALLOW,
                    )
                )
    return made


def _principals(_ctx, _param, values: Iterable[str]) -> dict[str, str]:
    chosen = dict.fromkeys(ROLES)
    for value in values:
        role, _, user = value.partition("=")
        if role not in ROLES or not user:
            raise click.BadParameter(f"expected ROLE=USER with ROLE one of {', '.join(ROLES)}, got {value!r}")
        chosen[role] = user
    return {role: user or role for role, user in chosen.items()}


@click.command(
    epilog="""\b
Examples (as an admin: FACESTREAM_KAFKA_CONFIG=admin.properties, or --kafka sasl.username=admin ...):
  facestream kafka acls                                   # users named after their roles
  facestream kafka acls --user camera=edge --user dashboard=viewer
  facestream kafka acls --dry-run                         # print them, change nothing
  facestream kafka acls --strimzi > deploy/helm/facestream/files/kafka.json
  facestream --config facestream.toml kafka acls          # topics and groups as the file sets them
"""
)
@click.option(
    "--user",
    "principals",
    multiple=True,
    callback=_principals,
    help=f"ROLE=USER: the SASL user of a role (repeatable; default: the role's name). Roles: {', '.join(ROLES)}.",
)
@click.option("--dry-run", is_flag=True, help="Print the topics and ACLs, change nothing.")
@click.option(
    "--strimzi",
    is_flag=True,
    help="Print the topics and each role's ACLs as Strimzi's KafkaTopic and KafkaUser take them (JSON), "
    "change nothing: the Helm chart's files/kafka.json.",
)
@click.pass_context
def acls(ctx: click.Context, principals: dict[str, str], dry_run: bool, strimzi: bool) -> None:
    """Make the pipeline's topics and give each role's user only its own topics and groups.

    The cluster needs an authorizer (StandardAuthorizer) and this command an admin's credentials.
    Granting is additive and idempotent: run it again after adding a role's user.
    """
    settings = (ctx.find_root().default_map or {}) if ctx.find_root() is not ctx else {}
    every = grants(settings)
    topics = pipeline_topics(settings)
    if strimzi:
        click.echo(json.dumps(strimzi_resources(settings, every, topics), indent=2))
        return
    wanted = bindings(principals, every)
    for role, role_grants in every.items():
        for grant in role_grants:
            what = f"{grant.kind} {grant.name}{'*' if grant.prefix else ''}"
            click.echo(f"User:{principals[role]:<12} {what:<42} {','.join(grant.operations)}")
    if dry_run:
        click.echo(f"topics: {', '.join(f'{name} ({n})' for name, n in topics.items())}")
        return
    gallery = _value(settings, "alerting", "gallery_topic", AlertingConfig)
    kafka_topics.ensure_topics(topics, configs={gallery: kafka_topics.COMPACTED})
    client = kafka_clients.admin()
    for binding, future in client.create_acls(wanted, request_timeout=30).items():
        try:
            future.result()
        except Exception as exc:
            raise click.ClickException(f"Kafka refused the ACL {binding}: {exc}") from None
    click.echo(f"{len(topics)} topics ready; {len(wanted)} ACLs for {len(every)} roles written")
