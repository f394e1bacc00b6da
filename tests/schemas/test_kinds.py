"""The table of alert kinds: every rule has its row and every row its rule (the registry is made from
the table), and a row that would mislead a reader is refused."""

import importlib
import pkgutil

import pytest

from facestream.alerting import rules
from facestream.alerting.rules.registry import REGISTRY
from facestream.alerting.rules.rule import Rule
from facestream.schemas.kinds import ALERT_KINDS, KINDS, AlertKind, kind_of


def test_the_registry_is_the_table_of_kinds_in_its_order() -> None:
    assert tuple(rule.name for rule in REGISTRY) == KINDS == tuple(kind.name for kind in ALERT_KINDS)


def test_every_module_that_declares_a_rule_is_named_after_its_kind_and_registered() -> None:
    declared = {}
    for info in pkgutil.iter_modules(rules.__path__):
        rule = getattr(importlib.import_module(f"{rules.__name__}.{info.name}"), "RULE", None)
        if isinstance(rule, Rule):
            declared[info.name] = rule
    assert {name: rule.name for name, rule in declared.items()} == {kind: kind for kind in KINDS}
    assert set(declared.values()) == set(REGISTRY)


def test_a_kind_in_words_says_what_its_count_is_and_who() -> None:
    assert kind_of("crowd").words(7, None) == "up to 7 faces at once"
    assert kind_of("person_seen").words(3, "Ada").startswith("Ada, on the watchlist, seen in 3 frame(s)")
    with pytest.raises(KeyError):
        kind_of("tailgating")


@pytest.mark.parametrize(
    ("row", "said"),
    [
        (dict(name="Tail gating", title="T", count="{count}"), "lower-case letters"),
        (dict(name="tailgating", title="T", count="{count}", device_class="doorbell"), "device_class is one of"),
        (dict(name="tailgating", title="T", count="{person} and {count}"), "only a kind that names a person"),
    ],
)
def test_a_row_that_would_mislead_a_reader_is_refused(row: dict, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        AlertKind(**row)
