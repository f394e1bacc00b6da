"""``facestream kafka``: the broker's own commands, and ``acls`` and ``retention``, which need the
services' settings and topics (so they live up here, above them)."""

from facestream.broker.cli import kafka
from facestream.tools.acls import acls
from facestream.tools.retention import retention

kafka.add_command(acls)
kafka.add_command(retention)
