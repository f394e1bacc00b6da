"""Which partition of the frames topic each camera's frames go to.

Kafka's consumer group balances partitions among the detector's members, not cameras; with the key
hash (murmur2 of the camera id, as Java's clients place keys: ``by_key``) a few cameras fall
unevenly, and one member may get 12 of 20 heavy cameras while another gets 8. A placement list fixes
it: the deployment's camera ids, one per line, and the camera on line ``i`` (from 0) goes to partition
``i mod P`` (P: the topic's partitions). Partitions then carry equal numbers of cameras (one more on
the first ``N mod P``), and with P a multiple of the members each member's share of cameras differs by
at most the partitions it holds. New cameras go at the end of the list, so the cameras already placed
stay where they are. Every producer of a deployment reads the same list; schemas/README.md says the
same for outside producers.
"""

from dataclasses import dataclass
from pathlib import Path

from facestream.errors import ConfigError


@dataclass(frozen=True)
class Placement:
    places: dict[str, int]  # camera id -> its line in the list, from 0

    @classmethod
    def read(cls, path: Path) -> "Placement":
        """The list in ``path``: a camera id per line; blank lines and ``#`` comments are not places."""
        try:
            text = path.read_text()
        except OSError as exc:
            raise ConfigError(f"cannot read the placement list {path}: {exc.strerror}") from None
        ids = [line.split("#", 1)[0].strip() for line in text.splitlines()]
        return cls.of([camera for camera in ids if camera], str(path))

    @classmethod
    def of(cls, cameras: list[str], where: str = "the placement list") -> "Placement":
        twice = sorted({camera for camera in cameras if cameras.count(camera) > 1})
        if twice:
            raise ConfigError(f"{where} names {', '.join(twice)} more than once: a camera has one place")
        return cls({camera: place for place, camera in enumerate(cameras)})

    def partition(self, camera: str, partitions: int) -> int | None:
        """The partition of ``camera``'s frames; None for a camera the list does not name (its key's
        hash places it, as without a list)."""
        place = self.places.get(camera)
        return None if place is None else place % partitions

    def write(self, path: Path) -> None:
        """The list as ``read`` takes it back (the benchmarks write one per run)."""
        path.write_text("".join(f"{camera}\n" for camera in sorted(self.places, key=self.places.__getitem__)))


def by_key(camera: str, partitions: int) -> int:
    """The partition a camera's key puts it on without a list: Kafka's murmur2 of the key's UTF-8
    bytes, sign bit cleared, modulo the partitions (Java's default partitioner; facestream's producers
    ask librdkafka for the same, ``murmur2_random``)."""
    return (_murmur2(camera.encode()) & 0x7FFFFFFF) % partitions


def _murmur2(data: bytes) -> int:
    """Kafka's 32-bit murmur2 (seed 0x9747b28c), as an unsigned number."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    h = (0x9747B28C ^ len(data)) & mask
    whole = len(data) - len(data) % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * m) & mask
        k ^= k >> 24
        h = ((h * m) & mask) ^ ((k * m) & mask)
    tail = data[whole:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    return h ^ (h >> 15)
