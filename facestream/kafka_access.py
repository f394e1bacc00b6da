"""Refusals by the cluster's ACLs, said plainly: a service that went on after one would only look idle,
or drop what it sends."""

from facestream import kafka_settings
from facestream.errors import BrokerError

# Errors that retrying cannot cure: the cluster's ACLs do not let this client's user do it.
REFUSALS = (
    "TOPIC_AUTHORIZATION_FAILED",
    "GROUP_AUTHORIZATION_FAILED",
    "CLUSTER_AUTHORIZATION_FAILED",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
)


def check_allowed(error, doing: str) -> None:
    """A BrokerError naming the user and what it may not do when ``error`` (a KafkaError, or None) is
    an authorization failure: a service that went on would only look idle, or drop what it sends."""
    from confluent_kafka import KafkaError

    if error is None or error.code() not in {getattr(KafkaError, name) for name in REFUSALS}:
        return
    user = kafka_settings.load().get("sasl.username", "(no sasl.username)")
    raise BrokerError(
        f"Kafka's ACLs do not let user {user} {doing}: {error.str()} "
        "(`facestream kafka acls` gives each role's user its own topics and groups)"
    )


def refusal_in(exc: BaseException) -> BrokerError | None:
    """The ACL refusal behind ``exc``: a KafkaException a client raised (a producer whose user may write
    no topic gets no producer id, a fatal error), or one an error it caused carries as its cause."""
    from confluent_kafka import KafkaException

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KafkaException) and seen.args and hasattr(seen.args[0], "code"):
            error = seen.args[0]
            no_id = "idempotence PID" in error.str()
            try:
                check_allowed(
                    error, "produce: it may write no topic, so it gets no producer id" if no_id else "do this"
                )
            except BrokerError as refused:
                return refused
        seen = seen.__cause__ or seen.__context__
    return None
