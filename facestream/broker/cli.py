"""``facestream kafka start|stop|status``: the local broker, or the one ``KAFKA_BOOTSTRAP`` names."""

import click

from facestream import kafka_clients


@click.group(
    epilog="\b\nExamples:\n  facestream kafka start\n  FACESTREAM_KAFKA_PORT=19092 facestream kafka start\n"
    "  facestream kafka start --brokers 3                      # a cluster: 127.0.0.1:9092, 9094, 9096\n"
    "  KAFKA_BOOTSTRAP=broker:9092 facestream kafka status   # an existing cluster"
)
def kafka() -> None:
    """Run Apache Kafka 4 (KRaft) on 127.0.0.1: one node, or a cluster of several.

    The jars come from Maven Central (needs `mvn` once) and run on the machine's Java 17+.
    With KAFKA_BOOTSTRAP set, nothing is started: that cluster is used instead.
    """


@kafka.command()
@click.option(
    "--brokers",
    type=click.IntRange(1, 9),
    default=1,
    show_default=True,
    help="Nodes: 1 is the single broker; more make a cluster (3 copies of every partition, 2 needed to write).",
)
def start(brokers: int) -> None:
    """Start the broker, or the cluster (does nothing for what already runs)."""
    external = kafka_clients.external_bootstrap()
    if external:
        found = kafka_clients.check_reachable(external)
        click.echo(f"KAFKA_BOOTSTRAP is set: using {external} ({found} broker(s)); nothing started")
        return
    from facestream.broker import LocalBroker, LocalCluster

    single, cluster = LocalBroker(), LocalCluster.existing()
    cluster_runs = cluster is not None and any(s.pid is not None for s in cluster.status())
    if (brokers > 1 and single.status().pid is not None) or (brokers == 1 and cluster_runs):
        raise click.ClickException("the other kind runs on these ports: `facestream kafka stop` first")
    if brokers == 1:
        status = single.start()
        click.echo(f"Kafka {status.detail} at {status.bootstrap} (pid {status.pid})")
        return
    cluster = LocalCluster(brokers)
    cluster.start()
    click.echo(f"Kafka cluster of {brokers} running; point clients at all of it:")
    click.echo(f"  export KAFKA_BOOTSTRAP={cluster.bootstrap}")


@kafka.command()
def stop() -> None:
    """Stop the local broker and the local cluster."""
    from facestream.broker import LocalBroker, LocalCluster

    cluster = LocalCluster.existing()
    stopped = [LocalBroker().stop(), cluster is not None and cluster.stop()]
    click.echo("stopped" if any(stopped) else "not running")


@kafka.command()
def status() -> None:
    """Say whether the broker answers; exit 1 if it does not."""
    external = kafka_clients.external_bootstrap()
    if external:
        click.echo(f"{external}: {kafka_clients.check_reachable(external)} broker(s) answer (KAFKA_BOOTSTRAP)")
        return
    from facestream.broker import LocalBroker, LocalCluster

    single, cluster = LocalBroker().status(), LocalCluster.existing()
    shown = [single] if single.pid is not None or cluster is None else []
    shown += cluster.status() if cluster else []
    for current in shown:
        click.echo(f"{current.bootstrap}: {current.detail}")
    if not any(current.running for current in shown):
        raise click.exceptions.Exit(1)


@kafka.command()
def features() -> None:
    """Print the cluster's finalized feature levels (kafka-features.sh describe), e.g. transaction.version.

    \b
    Examples:
      facestream kafka features
      KAFKA_BOOTSTRAP=broker:9092 facestream kafka features   # another cluster, with the local jars
    """
    from facestream.broker import LocalBroker

    broker = LocalBroker()
    broker.install_jars()
    for name, level in sorted(broker.features(kafka_clients.external_bootstrap() or None).items()):
        click.echo(f"{name}={level}")
