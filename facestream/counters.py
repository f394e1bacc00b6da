"""Counters declared once: each field of a service's stats dataclass says, beside it, the words the
stats line gives it and the Prometheus counter it is, and both are made from that declaration::

    @dataclass(eq=False)
    class StoreStats(Counters):
        kept: int = counter("kept", "facestream_alert_store_kept", "Alert records new to the database")
        snapshots: dict = counter("snapshots", "facestream_alert_store_snapshots", "...", labels=("status",))

A labelled counter is a dict of its label values (one string, or a tuple for several labels) -> count,
added to with ``add``. Register the stats object itself in the service's registry (``collect``).
"""

import dataclasses
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import CounterMetricFamily


@dataclass(frozen=True)
class Counter:
    said: str  # its words on the stats line ("" to leave it off)
    metric: str  # the Prometheus name, without _total
    help: str
    labels: tuple[str, ...] = ()


def counted(said: str, metric: str, help: str, labels: tuple[str, ...] = ()) -> dict:
    """A counter's declaration as field metadata, for a field without a default (a snapshot given every
    value): ``decoded: int = field(metadata=counted(...))``."""
    return {"counter": Counter(said, metric, help, labels)}


def counter(said: str, metric: str, help: str, labels: tuple[str, ...] = ()) -> Any:
    """A counter field: an int from 0, or, with ``labels``, a dict from empty."""
    meta = counted(said, metric, help, labels)
    if labels:
        return dataclasses.field(default_factory=dict, metadata=meta)
    return dataclasses.field(default=0, metadata=meta)


def per_object(kind: type, things: dict[str, Any], label: str):
    """The counters ``kind`` (a dataclass of unlabelled ``counter`` fields) declares, one family each,
    with a sample per thing of ``things`` (label value -> an object of ``kind``; a producer's cameras by
    id, labelled ``camera``)."""
    for f in dataclasses.fields(kind):
        meta = f.metadata.get("counter")
        if meta is None:
            continue
        family = CounterMetricFamily(meta.metric, meta.help, labels=[label])
        for name, thing in things.items():
            family.add_metric([name], getattr(thing, f.name))
        yield family


class Counters:
    """The stats line and the Prometheus collector of a dataclass of ``counter`` fields."""

    def _counters(self) -> list[tuple[Counter, Any]]:
        return [
            (f.metadata["counter"], getattr(self, f.name))
            for f in dataclasses.fields(self)  # type: ignore[arg-type]  # a dataclass's
            if "counter" in f.metadata
        ]

    def add(self, name: str, key: str | tuple[str, ...], amount: int = 1) -> None:
        """Count ``amount`` more under the label values ``key`` of the labelled counter ``name``."""
        found = getattr(self, name)
        found[key] = found.get(key, 0) + amount

    def counted(self) -> str:
        """The counters as the stats line says them: ``kept 3, repeats 0, snapshots kept=2 none=1``."""
        parts = []
        for meta, value in self._counters():
            if not meta.said:
                continue
            if meta.labels:
                shown = " ".join(f"{_label(k)}={v}" for k, v in sorted(value.items())) or "none"
                parts.append(f"{meta.said} {shown}")
            else:
                parts.append(f"{meta.said} {value}")
        return ", ".join(parts)

    def line(self) -> str:
        return self.counted()

    def collect(self, **names: str):
        """The counters as Prometheus families; ``names`` fill the ``{...}`` a declaration's metric and
        help leave open (the detector's ``facestream_{events}_events``: detection or pose)."""
        for meta, value in self._counters():
            metric, help = meta.metric.format(**names), meta.help.format(**names)
            if not meta.labels:
                yield CounterMetricFamily(metric, help, value=value)
                continue
            family = CounterMetricFamily(metric, help, labels=list(meta.labels))
            for key, count in sorted(value.items()):
                family.add_metric(list(key) if isinstance(key, tuple) else [key], count)
            yield family


def _label(key: str | tuple[str, ...]) -> str:
    return " ".join(key) if isinstance(key, tuple) else key
