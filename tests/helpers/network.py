"""Network faults between containers, made in a container's own network namespace from this host
(root: ``nsenter -n`` into the container's process): the container's address stays, its processes run
on, only packets change.
- ``cut_off``: nftables drops every packet to and from the ``peers`` (or every peer but loopback), in
  both directions, silently, as a pulled cable or a dead switch port does: connections hang and time
  out, nothing is refused;
- ``slowed``: iptables hands every packet in and out (loopback aside) to ``slow_link.py`` through
  NFQUEUE, which holds each one ``delay_ms`` and drops a ``loss`` share (this kernel has no netem).
"""

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers.compose import podman_env

SLOW_LINK = Path(__file__).with_name("slow_link.py")
QUEUE = 7  # the NFQUEUE number; each namespace has its own


def inspected(container: str, template: str) -> str:
    done = subprocess.run(
        ["podman", "inspect", "--format", template, container],
        capture_output=True,
        text=True,
        env=podman_env(),
        check=True,
    )
    return done.stdout.strip()


def pid(container: str) -> int:
    return int(inspected(container, "{{.State.Pid}}"))


def address(container: str) -> str:
    """The container's address on its (one) network."""
    (network,) = json.loads(inspected(container, "{{json .NetworkSettings.Networks}}")).values()
    return network["IPAddress"]


def in_namespace(container: str, *command: str, stdin: str | None = None) -> None:
    done = subprocess.run(
        ["nsenter", "-t", str(pid(container)), "-n", *command], input=stdin, capture_output=True, text=True
    )
    assert done.returncode == 0, f"{' '.join(command)} in {container}'s namespace: {done.stderr}"


@contextmanager
def cut_off(container: str, peers: list[str] | None = None) -> Iterator[None]:
    """``container`` cut off from the addresses ``peers`` (None: from everything but itself) for the block."""
    match = "ip {} {{ " + ", ".join(peers) + " }}" if peers else 'meta {}if != "lo"'
    rules = f"""table inet facestream_cut {{
        chain in {{ type filter hook input priority -10; {match.format("saddr" if peers else "i")} drop; }}
        chain out {{ type filter hook output priority -10; {match.format("daddr" if peers else "o")} drop; }}
    }}"""
    in_namespace(container, "nft", "-f", "-", stdin=rules)
    try:
        yield
    finally:
        in_namespace(container, "nft", "delete", "table", "inet", "facestream_cut")


@contextmanager
def slowed(container: str, delay_ms: float, loss: float, log: Path) -> Iterator[dict]:
    """Every packet of ``container`` (loopback aside) held ``delay_ms`` each way, ``loss`` of them
    dropped, for the block; the dict given is filled, afterwards, with what the link did (packets,
    dropped)."""
    target = ["-j", "NFQUEUE", "--queue-num", str(QUEUE), "--queue-bypass"]  # unbound: let through
    rules = [["OUTPUT", "!", "-o", "lo", *target], ["INPUT", "!", "-i", "lo", *target]]
    counts: dict = {}
    with open(log, "a") as out:
        link = subprocess.Popen(
            ["nsenter", "-t", str(pid(container)), "-n", sys.executable, str(SLOW_LINK)]
            + ["--queue", str(QUEUE), "--delay-ms", str(delay_ms), "--loss", str(loss)],
            stdout=subprocess.PIPE,
            stderr=out,
            text=True,
        )
    try:
        assert link.stdout is not None and link.stdout.readline().strip() == "ready", "slow_link did not start"
        for rule in rules:
            in_namespace(container, "iptables", "-I", *rule)
        try:
            yield counts
        finally:
            for rule in rules:
                in_namespace(container, "iptables", "-D", *rule)
    finally:
        link.terminate()
        said, _ = link.communicate(timeout=30)
        counts.update(json.loads(said) if said.strip() else {})
