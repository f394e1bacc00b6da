"""The one error type every decoder and encoder in ``schemas`` raises."""


class SchemaError(ValueError):
    """A message does not follow its schema; ``field`` names the offending field (or ``None``)."""

    def __init__(self, message_type: str, field: str | None, problem: str) -> None:
        self.message_type = message_type
        self.field = field
        self.problem = problem
        where = f"{message_type}.{field}" if field else message_type
        super().__init__(f"{where}: {problem}")
