"""The local broker's cluster ids: as Kafka makes them, and never read as an option."""

import base64

from facestream.broker.local import new_cluster_id


def test_a_cluster_id_never_starts_with_a_dash() -> None:
    # One start in 64 failed in CI: "kafka-storage: error: argument --cluster-id/-t: expected one argument".
    made = [new_cluster_id() for _ in range(5000)]
    assert not [cid for cid in made if cid.startswith("-")]
    assert all(len(base64.urlsafe_b64decode(cid + "==")) == 16 for cid in made)
