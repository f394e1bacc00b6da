"""``--device N``: which GPU a replica runs on, one replica per GPU on a machine with several.

Done the way every CUDA library understands, before any of them starts: the process's
``CUDA_VISIBLE_DEVICES`` is narrowed to that one GPU, which ONNX Runtime, CuPy and nvImageCodec then
all see as device 0. N counts the GPUs this process may use: those ``CUDA_VISIBLE_DEVICES`` already
lists when it is set, else all of them.
"""

import logging
import os
from collections.abc import Mapping, MutableMapping

from facestream.errors import ConfigError

log = logging.getLogger(__name__)


def visible(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The GPUs ``CUDA_VISIBLE_DEVICES`` lets this process use (indices or UUIDs); empty: all of them."""
    return [d.strip() for d in environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]


def use_gpu(index: int, environ: MutableMapping[str, str] = os.environ) -> str:
    """Narrow ``CUDA_VISIBLE_DEVICES`` to the ``index``-th GPU visible; return what it names (an id or UUID)."""
    gpus = visible(environ)
    if gpus and index >= len(gpus):
        raise ConfigError(
            f"--device {index}: CUDA_VISIBLE_DEVICES={environ['CUDA_VISIBLE_DEVICES']} leaves {len(gpus)} GPU(s), "
            f"numbered 0 to {len(gpus) - 1}"
        )
    chosen = gpus[index] if gpus else str(index)
    environ["CUDA_VISIBLE_DEVICES"] = chosen
    log.info("running on GPU %s (--device %d; CUDA_VISIBLE_DEVICES=%s)", chosen, index, chosen)
    return chosen
