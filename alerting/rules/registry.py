"""Every alert rule, in the order of the table of kinds (``schemas/kinds.py``), which is the order a
camera's event goes through them and ``--rules`` lists them. The rule of kind NAME is the ``RULE`` of
``alerting/rules/NAME.py``: a new rule is its module and its kind's row, nothing here."""

from importlib import import_module

from facestream.alerting.rules.rule import Rule
from facestream.schemas.kinds import ALERT_KINDS


def _rule_of(kind: str) -> Rule:
    """The ``RULE`` of the kind's module, checked to be a rule of that kind."""
    try:
        module = import_module(f"{__package__}.{kind}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{kind}":
            raise
        raise ImportError(f"schemas/kinds.py has a row for {kind!r}, and alerting/rules/{kind}.py is missing") from None
    rule = getattr(module, "RULE", None)
    if not isinstance(rule, Rule) or rule.name != kind:
        raise ImportError(f"alerting/rules/{kind}.py declares no RULE = Rule({kind!r}, ...)")
    return rule


REGISTRY: tuple[Rule, ...] = tuple(_rule_of(kind.name) for kind in ALERT_KINDS)
