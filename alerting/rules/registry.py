"""Every alert rule, in the order a camera's event goes through them (and ``--rules`` lists them).
A new rule is one line here; everything else is made from its ``RULE``."""

from facestream.alerting.rules import crowd, fall, line, loitering, offline, person_seen, stranger
from facestream.alerting.rules.rule import Rule

REGISTRY: tuple[Rule, ...] = (
    stranger.RULE,
    crowd.RULE,
    fall.RULE,
    offline.RULE,
    person_seen.RULE,
    loitering.RULE,
    line.RULE,
)
