"""``facestream kafka start|stop|status``: the local broker, or the one ``KAFKA_BOOTSTRAP`` names."""

import click

from facestream import kafka_clients


@click.group(
    epilog="\b\nExamples:\n  facestream kafka start\n  FACESTREAM_KAFKA_PORT=19092 facestream kafka start\n"
    "  KAFKA_BOOTSTRAP=broker:9092 facestream kafka status   # an existing cluster"
)
def kafka() -> None:
    """Run a single-node Apache Kafka 4 broker (KRaft) on 127.0.0.1.

    The jars come from Maven Central (needs `mvn` once) and run on the machine's Java 17+.
    With KAFKA_BOOTSTRAP set, nothing is started: that cluster is used instead.
    """


@kafka.command()
def start() -> None:
    """Start the broker (does nothing if it already runs)."""
    external = kafka_clients.external_bootstrap()
    if external:
        brokers = kafka_clients.check_reachable(external)
        click.echo(f"KAFKA_BOOTSTRAP is set: using {external} ({brokers} broker(s)); nothing started")
        return
    from facestream.broker import LocalBroker

    status = LocalBroker().start()
    click.echo(f"Kafka {status.detail} at {status.bootstrap} (pid {status.pid})")


@kafka.command()
def stop() -> None:
    """Stop the local broker."""
    from facestream.broker import LocalBroker

    click.echo("stopped" if LocalBroker().stop() else "not running")


@kafka.command()
def status() -> None:
    """Say whether the broker answers; exit 1 if it does not."""
    external = kafka_clients.external_bootstrap()
    if external:
        click.echo(f"{external}: {kafka_clients.check_reachable(external)} broker(s) answer (KAFKA_BOOTSTRAP)")
        return
    from facestream.broker import LocalBroker

    current = LocalBroker().status()
    click.echo(f"{current.bootstrap}: {current.detail}")
    if not current.running:
        raise click.exceptions.Exit(1)
