"""``facestream kafka``: the broker's own commands, and ``acls``, which needs the services' settings
(so it lives up here, above them)."""

from facestream.broker.cli import kafka
from facestream.tools.acls import acls

kafka.add_command(acls)
