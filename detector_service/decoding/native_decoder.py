"""A batch of JPEGs through nvImageCodec's C API in one call (``native/batch_decode.c``), loaded with ctypes.

The library is compiled from its source the first time it is needed, with the machine's C compiler
(``CC``, else ``cc``) against the headers nvImageCodec's wheel ships, into the facestream home
(``native/``, named by the source's hash, so an edited source is built again). nvImageCodec's header
wants only ``cudaStream_t`` from the CUDA runtime's headers, which a pip-installed GPU stack lacks: a
one-line stand-in declares it. Where no compiler is found, ``available`` says so and the detector keeps
nvImageCodec's Python binding (``--gpu-decoder`` without ``/native``).
"""

import ctypes
import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from facestream import paths
from facestream.errors import ConfigError

SOURCE = Path(__file__).parent / "native" / "batch_decode.c"
# What fs_decode says of each image; OK decoded, the rest become DecodeErrors naming the frame.
OK, NOT_AN_IMAGE, SIZE_DIFFERS, DECODE_FAILED = 0, 1, 2, 3
# nvimgcodecBackendKind_t, by the names gpu_decode_settings.BACKENDS uses
KINDS = {"CPU_ONLY": 1, "GPU_ONLY": 2, "HYBRID_CPU_GPU": 3, "HW_GPU_ONLY": 4}
_CUDA_STREAM_STAND_IN = "typedef struct CUstream_st* cudaStream_t;  /* all nvimgcodec.h needs of CUDA */\n"


def _package() -> Path | None:
    spec = importlib.util.find_spec("nvidia.nvimgcodec")
    return None if spec is None or spec.origin is None else Path(spec.origin).parent


def _compiler() -> str:
    return os.environ.get("CC", "cc")


def library_path() -> Path:
    """Where the compiled library of this source lives (built or not)."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    return paths.home() / "native" / f"batch_decode-{digest}.so"


def available() -> str | None:
    """None if the native decoder can be built (or is built) here, else why not."""
    package = _package()
    if package is None:
        return "nvidia-nvimgcodec is not installed (the gpu extra)"
    if library_path().exists():
        return None
    if not (package / "include" / "nvimgcodec.h").exists():
        return f"nvImageCodec's C header is not in {package / 'include'}"
    if shutil.which(_compiler()) is None:
        return f"no C compiler ({_compiler()}) to build {SOURCE.name}"
    return None


def build() -> Path:
    """The library, compiled now if this source's is not there yet."""
    out = library_path()
    if out.exists():
        return out
    package = _package()
    if package is None:
        raise ConfigError("nvidia-nvimgcodec is not installed (the gpu extra)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as stand_in:
        (Path(stand_in) / "cuda_runtime_api.h").write_text(_CUDA_STREAM_STAND_IN)
        partial = out.with_suffix(f".{os.getpid()}.tmp")
        command = [_compiler(), "-O2", "-shared", "-fPIC", f"-I{stand_in}"]
        command += [f"-I{package / 'include'}", str(SOURCE), "-o", str(partial)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise ConfigError(f"building {SOURCE.name} failed ({' '.join(command)}):\n{done.stderr[-2000:]}")
        partial.replace(out)  # whole or not at all, should two processes build at once
    return out


class NativeDecoder:
    """One nvImageCodec decoder on a device, fed whole batches."""

    def __init__(self, device_id: int, backends: tuple[str, ...], cpu_threads: int, extensions: str) -> None:
        package = _package()
        assert package is not None, "check available() first"
        ctypes.CDLL(str(package / "libnvimgcodec.so.0"), mode=ctypes.RTLD_GLOBAL)  # its symbols, for ours
        lib = ctypes.CDLL(str(build()))
        lib.fs_open.restype = ctypes.c_void_p
        number, text, pointer, size = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t
        lib.fs_open.argtypes = [number, text, pointer, number, number, text, size]
        lib.fs_decode.restype = ctypes.c_int
        lib.fs_decode.argtypes = [pointer, number, *[pointer] * 9, text, size]
        lib.fs_close.argtypes = [pointer]
        self._lib = lib
        self._error = ctypes.create_string_buffer(512)
        kinds = np.array([KINDS[name] for name in backends], dtype=np.int32)
        handle = lib.fs_open(
            device_id, extensions.encode(), kinds.ctypes.data, len(kinds), cpu_threads, self._error, len(self._error)
        )
        if not handle:
            raise ConfigError(f"nvImageCodec's C API could not start a decoder on GPU {device_id}: {self._message()}")
        self._handle = handle

    def _message(self) -> str:
        return self._error.value.decode(errors="replace")

    def decode(
        self,
        addresses: np.ndarray,
        lengths: np.ndarray,
        device: int,
        places: np.ndarray,
        sizes: np.ndarray,
        stream: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Decode the JPEGs at host ``addresses`` (``lengths`` bytes each) into RGB at ``device +
        places[i]``, each of the (width, height) in ``sizes[i]``; complete on ``stream`` when returned.
        What became of each (OK, ...) and the (width, height) each parsed as. The caller keeps the
        buffers the addresses point into alive for the call."""
        count = len(addresses)
        result = np.empty(count, dtype=np.int32)
        seen = np.empty((count, 2), dtype=np.int32)
        addresses, lengths = np.ascontiguousarray(addresses, np.int64), np.ascontiguousarray(lengths, np.int64)
        places = np.ascontiguousarray(places, np.int64)
        widths = np.ascontiguousarray(sizes[:, 0], np.int32)
        heights = np.ascontiguousarray(sizes[:, 1], np.int32)
        failed = self._lib.fs_decode(
            self._handle, count, addresses.ctypes.data, lengths.ctypes.data, device, places.ctypes.data,
            widths.ctypes.data, heights.ctypes.data, stream, result.ctypes.data, seen.ctypes.data,
            self._error, len(self._error),
        )  # fmt: skip
        if failed:
            raise RuntimeError(f"nvImageCodec failed a whole batch of {count}: {self._message()}")
        return result, seen

    def close(self) -> None:
        if self._handle:
            self._lib.fs_close(self._handle)
            self._handle = None
