"""Which nvImageCodec extensions load: the JPEG ones only.

nvImageCodec loads every extension module in its ``extensions`` folder when it starts. The wheel
ships JPEG 2000 and TIFF extensions whose CUDA libraries (nvJPEG2000, nvTIFF, nvCOMP) are separate,
optional packages; without them each start printed a dozen ``[ERROR]`` lines about libraries a JPEG
pipeline never needs, which an operator reads as failures. nvImageCodec reads its extensions from
``NVIMGCODEC_EXTENSIONS_PATH`` instead of its own folder when that is set, so before it is first
imported this points it at a folder of links to the JPEG extensions alone. A missing JPEG extension
is reported, so GPU decoding falls back with a warning (or fails, when it was requested by name).
"""

import hashlib
import importlib.util
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

ENV = "NVIMGCODEC_EXTENSIONS_PATH"
# nvJPEG's hardware and CUDA decoders, then libjpeg-turbo, which nvImageCodec's CPU and hybrid backends use.
JPEG_EXTENSIONS = ("libnvjpeg_ext.so*", "libjpeg_turbo_ext.so*")
REQUIRED = "libnvjpeg_ext"


def select_jpeg_only(source: Path | None = None) -> str | None:
    """Point nvImageCodec at the JPEG extensions in ``source`` (default: the installed package's
    folder), once per process, before its import; return None, or why GPU JPEG decoding cannot work
    here. A path the user set is left alone."""
    if os.environ.get(ENV):
        return None
    if source is None:
        spec = importlib.util.find_spec("nvidia.nvimgcodec")
        if spec is None or spec.origin is None:
            return "nvidia-nvimgcodec is not installed (the gpu extra)"
        source = Path(spec.origin).parent / "extensions"
    found = sorted(path for pattern in JPEG_EXTENSIONS for path in source.glob(pattern))
    if not any(path.name.startswith(REQUIRED) for path in found):
        return f"nvImageCodec's JPEG decoder extension ({REQUIRED}) is not in {source}"
    key = hashlib.sha256(str(source).encode()).hexdigest()[:12]
    folder = Path(tempfile.gettempdir()) / f"facestream-nvimgcodec-jpeg-{key}"
    folder.mkdir(exist_ok=True)
    for path in found:
        link = folder / path.name
        if not link.is_symlink():
            try:
                link.symlink_to(path)
            except FileExistsError:  # another process made it first
                pass
    os.environ[ENV] = str(folder)
    log.info("nvImageCodec loads its JPEG extensions only (%s)", ", ".join(p.name for p in found))
    return None
