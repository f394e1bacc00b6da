"""JPEG bytes -> one uint8 batch in GPU memory: nvImageCodec decodes, one CUDA kernel letterboxes.

The same contract as ``preprocess.Preprocessor`` (``run`` -> (batch, Placements), a bad frame's
error in its slot), but the batch is a CuPy array on the device: the engine copies
it into its bound input there, so pixels never cross to the host and no CPU core decodes. nvImageCodec
uses the GPU's hardware JPEG decoder where it has one (the H100/H200 do) and CUDA decoding otherwise.
The letterbox matches the CPU path: bilinear when enlarging, area averaging when shrinking (OpenCV's
INTER_LINEAR / INTER_AREA), image at the top-left, zeros elsewhere, BGR out. Needs the ``gpu``
extra (nvidia-nvimgcodec, cupy).
"""

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from facestream.detector_service.decoding import native_decoder, nvimgcodec_extensions
from facestream.detector_service.decoding.gpu_decode_settings import BACKENDS, GpuDecodeSettings
from facestream.detector_service.decoding.packed import PackedFrames
from facestream.detector_service.decoding.placements import DecodeError, DeviceImages, Placements
from facestream.errors import ConfigError
from facestream.schemas import Frame

# One thread per output pixel. Slots whose source pointer is 0 (failed frames) stay black.
_LETTERBOX = r"""
extern "C" __global__ void letterbox(
    const unsigned long long* src, const int* src_h, const int* src_w, const int* fit_h, const int* fit_w,
    unsigned char* out, const int out_h, const int out_w, const long long total)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int x = idx % out_w, y = (idx / out_w) % out_h, b = idx / ((long long)out_w * out_h);
    unsigned char* o = out + idx * 3;
    const unsigned char* s = (const unsigned char*)src[b];
    if (s == 0 || x >= fit_w[b] || y >= fit_h[b]) { o[0] = 0; o[1] = 0; o[2] = 0; return; }
    const int h = src_h[b], w = src_w[b];
    const float sx = (float)w / fit_w[b], sy = (float)h / fit_h[b];
    float acc[3] = {0.f, 0.f, 0.f};
    if (sx <= 1.f && sy <= 1.f) {  /* enlarging (or 1:1): bilinear between pixel centres */
        const float fx = fmaxf((x + 0.5f) * sx - 0.5f, 0.f), fy = fmaxf((y + 0.5f) * sy - 0.5f, 0.f);
        const int x0 = min((int)fx, w - 1), y0 = min((int)fy, h - 1);
        const int x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1);
        const float ax = fx - x0, ay = fy - y0;
        for (int c = 0; c < 3; ++c) {
            const float top = (1.f - ax) * s[(y0 * w + x0) * 3 + c] + ax * s[(y0 * w + x1) * 3 + c];
            const float bottom = (1.f - ax) * s[(y1 * w + x0) * 3 + c] + ax * s[(y1 * w + x1) * 3 + c];
            acc[c] = (1.f - ay) * top + ay * bottom;
        }
    } else {  /* shrinking: the mean of the source area this pixel covers, partial pixels weighted */
        const float x0 = x * sx, x1 = fminf((x + 1) * sx, (float)w), y0 = y * sy, y1 = fminf((y + 1) * sy, (float)h);
        float weight = 0.f;
        for (int py = (int)y0; py < (int)ceilf(y1); ++py) {
            const float wy = fminf(py + 1.f, y1) - fmaxf((float)py, y0);
            for (int px = (int)x0; px < (int)ceilf(x1); ++px) {
                const float wxy = wy * (fminf(px + 1.f, x1) - fmaxf((float)px, x0));
                const unsigned char* p = s + (py * w + px) * 3;
                acc[0] += wxy * p[0]; acc[1] += wxy * p[1]; acc[2] += wxy * p[2];
                weight += wxy;
            }
        }
        for (int c = 0; c < 3; ++c) acc[c] /= weight;
    }
    for (int c = 0; c < 3; ++c) {  /* decoded RGB -> the engine's BGR */
        o[2 - c] = (unsigned char)fminf(fmaxf(acc[c] + 0.5f, 0.f), 255.f);
    }
}
"""
_THREADS = 256

# One decoding stream per device (and priority) for the whole process, never destroyed: nvImageCodec
# keeps state per stream, and on the H200 making a fourth decoder after three (each with a stream of its
# own) had come and gone crashed the process.
_STREAMS: dict = {}
_HIGHEST = -100  # a stream priority beyond any GPU's range: CUDA clamps it to the highest there is


def available() -> str | None:
    """None if GPU decoding can run here, else why not (for a loud fallback to the CPU pool)."""
    missing = nvimgcodec_extensions.select_jpeg_only()  # before nvImageCodec's first import
    if missing is not None:
        return missing
    try:
        import cupy  # noqa: F401
        from nvidia import nvimgcodec  # noqa: F401
    except ImportError as exc:
        return f"{exc.name or exc} is not installed (the gpu extra)"
    return None


class GpuPreprocessor:
    def __init__(
        self,
        input_hw: tuple[int, int],
        device_id: int = 0,
        settings: GpuDecodeSettings | None = None,
        keep_frames: bool = False,
        batches_under_way: int = 2,
    ) -> None:
        missing = available()
        if missing is not None:
            raise ConfigError(f"GPU JPEG decoding cannot run: {missing}")
        import cupy as cp
        from nvidia import nvimgcodec

        self.input_hw = input_hw
        self.settings = settings or GpuDecodeSettings()
        self.keep_frames = keep_frames
        self._generations = batches_under_way
        self._cp = cp
        self._device = cp.cuda.Device(device_id)
        options: dict[str, object] = {}  # only what differs from nvImageCodec's defaults
        if self.settings.cpu_threads:
            options["max_num_cpu_threads"] = self.settings.cpu_threads
        if BACKENDS[self.settings.backends]:
            options["backends"] = [
                nvimgcodec.Backend(getattr(nvimgcodec.BackendKind, kind)) for kind in BACKENDS[self.settings.backends]
            ]
        self._native: native_decoder.NativeDecoder | None = None
        if self.settings.native:
            self._native = self._new_native(device_id)
        self._arenas: dict[int, Any] = {}  # generation -> the CuPy buffer native decoding decodes into
        count = 0 if self._native is not None else self.settings.decoders
        self._decoders = [self._new_decoder(nvimgcodec, device_id, options) for _ in range(count)]
        self._params = nvimgcodec.DecodeParams(color_spec=nvimgcodec.ColorSpec.SRGB)
        with self._device:
            self._streams = [self._stream_for(device_id, index) for index in range(self.settings.decoders)]
            self._kernel = cp.RawKernel(_LETTERBOX, "letterbox")
        # Decoders after the first decode their share of a batch on threads of their own, while the
        # calling thread decodes the first share: nvImageCodec lets go of the interpreter while it waits.
        helpers = max(len(self._decoders) - 1, 0)  # native decoding has no nvImageCodec decoders here
        self._helpers = ThreadPoolExecutor(helpers, "decode-share") if helpers else None
        # With keep_images: per (generation, decoder, chunk index), the Images decoded into last. Frames
        # handed out with their batch (keep_frames) stay in use until the caller finishes that batch, while
        # the next ones decode: one generation per batch the caller may have under way, in turn, so a
        # batch's Images are reused only that many batches later.
        self._kept: dict[tuple[int, int, int], list] = {}
        self._generation = 0

    def _new_decoder(self, nvimgcodec, device_id: int, options: dict):
        try:
            return nvimgcodec.Decoder(device_id=device_id, **options)
        except RuntimeError as exc:  # e.g. the GPU_ONLY backend alone, refused on the H200
            raise ConfigError(
                f"nvImageCodec cannot make a decoder with backends {self.settings.backends!r} on GPU "
                f"{device_id}: {exc}; try --gpu-decoder all"
            ) from None

    def _new_native(self, device_id: int):
        missing = native_decoder.available()
        if missing is not None:
            raise ConfigError(f"--gpu-decoder {self.settings} cannot run: {missing}")
        backends = BACKENDS[self.settings.backends]
        return native_decoder.NativeDecoder(
            device_id, backends, self.settings.cpu_threads, os.environ.get(nvimgcodec_extensions.ENV, "")
        )

    def _stream_for(self, device_id: int, index: int):
        """The process's decoding stream number ``index`` on this device (and priority)."""
        key = (device_id, self.settings.first, index)
        if key not in _STREAMS:  # CUDA takes the lower number first and clamps it to the GPU's range
            _STREAMS[key] = self._cp.cuda.Stream(non_blocking=True, priority=_HIGHEST if self.settings.first else 0)
        return _STREAMS[key]

    def _decode_share(self, decoder: int, share: Sequence[Frame]) -> list:
        """Decoder ``decoder``'s share of a batch, in calls of ``chunk`` images, complete when returned."""
        images, step = [], self.settings.chunk or len(share) or 1
        for index, start in enumerate(range(0, len(share), step)):
            images += self._decode(decoder, index, [f.data for f in share[start : start + step]])
        self._streams[decoder].synchronize()
        return images

    def _decode(self, decoder: int, index: int, chunk: list) -> list:
        """One nvImageCodec call; into the Images this decoder's chunk ``index`` used last, when asked
        and there are enough."""
        key = (self._generation, decoder, index)
        kept = self._kept.get(key, [])
        call = {"params": self._params, "cuda_stream": self._streams[decoder].ptr}
        if self.settings.keep_images and len(kept) >= len(chunk):
            call["images"] = kept[: len(chunk)]
        images = self._decoders[decoder].decode(chunk, **call)
        # A frame that failed leaves no Image: a chunk is kept only with one per frame.
        if self.settings.keep_images and len(images) > len(kept) and all(i is not None for i in images):
            self._kept[key] = list(images)
        return images

    def _decode_all(self, frames: Sequence[Frame]) -> list:
        """Every frame's Image (None where it failed), the batch shared out among the decoders."""
        count = len(self._decoders)
        bounds = [len(frames) * k // count for k in range(count + 1)]
        shares = [frames[bounds[k] : bounds[k + 1]] for k in range(count)]
        helpers = self._helpers
        helped = [helpers.submit(self._decode_share, k, shares[k]) for k in range(1, count) if helpers is not None]
        images = self._decode_share(0, shares[0])
        for share in helped:
            images += share.result()
        return images

    def run(self, frames: Sequence[Frame]) -> tuple[Any, Placements]:
        """(CuPy uint8 (N, H, W, 3) BGR batch, where each frame landed); ready when returned.

        With ``keep_frames`` the Placements hold the decoded images (RGB, on the device: DeviceImages),
        valid until ``batches_under_way`` more batches are decoded: the caller never has more under way."""
        cp = self._cp
        height, width = self.input_hw
        if self.keep_frames:
            self._generation = (self._generation + 1) % self._generations
        with self._device:
            if self._native is not None:
                table, placed = self._decode_natively(self._native, frames)
            else:
                images = self._decode_all(frames)
                table, placed = _placement(frames, images, height, width, self.keep_frames)
            stream = self._streams[0]
            with stream:
                batch = cp.empty((len(frames), height, width, 3), dtype=cp.uint8)
                args = cp.asarray(table[0].astype(np.uint64)), *(cp.asarray(row.astype(np.int32)) for row in table[1:])
                total = batch.size // 3
                self._kernel(
                    ((total + _THREADS - 1) // _THREADS,),
                    (_THREADS,),
                    (*args, batch, np.int32(height), np.int32(width), np.int64(total)),
                )
                stream.synchronize()  # the batch is complete; Images no Placed keeps are freed after this
        return batch, placed

    def _decode_natively(self, native: "native_decoder.NativeDecoder", frames: Sequence[Frame]):
        """The batch through nvImageCodec's C API in one call: the JPEGs read where they lie (the GPU
        owner's PackedFrames; other frames' bytes are first joined into one buffer), decoded into one
        device buffer (one per batch that may be under way), each image where its message's size puts
        it. Python's work here is per batch: only a frame that failed is looked at on its own."""
        cp = self._cp
        packed = frames
        if not isinstance(packed, PackedFrames):  # frames of their own: their bytes joined into one buffer
            ends = np.cumsum(np.fromiter((len(f.data) for f in frames), dtype=np.int64, count=len(frames)))
            joined = np.frombuffer(b"".join(f.data for f in frames) or b"\0", dtype=np.uint8)
            sizes = np.array([(f.width, f.height) for f in frames], dtype=np.int32).reshape(-1, 2)
            packed = PackedFrames.of(joined, ends, sizes)
        said = packed.sizes.astype(np.int64)
        bytes_each = np.maximum(said, 0).prod(axis=1) * 3
        places = np.concatenate(([0], np.cumsum(bytes_each)[:-1])).astype(np.int64)
        total = int(bytes_each.sum())
        arena = self._arenas.get(self._generation)
        if arena is None or arena.size < total:
            arena = self._arenas[self._generation] = cp.empty(max(total, 1), dtype=cp.uint8)
        addresses, lengths = packed.addresses(), packed.ends - packed.starts
        result, seen = native.decode(addresses, lengths, arena.data.ptr, places, said, self._streams[0].ptr)
        good = result == native_decoder.OK
        channels = np.where(good, 3, 0)
        pointers = np.where(good, arena.data.ptr + places, 0)
        errors = {
            i: str(_native_why(frames[i], int(result[i]), (int(seen[i, 0]), int(seen[i, 1]))))
            for i in np.flatnonzero(~good).tolist()
        }
        keeps = arena if self.keep_frames else None
        return _table(np.column_stack([seen, channels]), good, pointers, *self.input_hw, errors, keeps)

    def close(self) -> None:
        """Release nvImageCodec's kept Images, then its decoders, in that order and now, rather than in
        whatever order the interpreter's shutdown would free them (the streams are the process's)."""
        if self._helpers is not None:
            self._helpers.shutdown(wait=True)
        with self._device:
            for stream in self._streams:
                stream.synchronize()
        self._kept.clear()
        self._decoders = []
        if self._native is not None:
            self._native.close()
        self._arenas.clear()


def _placement(frames: Sequence[Frame], images: list, height: int, width: int, keep: bool):
    """The letterbox kernel's table and the Placements, for the Images nvImageCodec's Python binding
    returned (None where a frame failed); with ``keep``, the Images stay in them. Per image only its
    attributes are read."""
    seen = np.array(
        [(0, 0, 0) if image is None else (image.width, image.height, image.num_channels) for image in images],
        dtype=np.int64,
    ).reshape(-1, 3)
    said = np.array([(f.width, f.height) for f in frames], dtype=np.int64).reshape(-1, 2)
    good = (seen[:, 2] == 3) & (seen[:, :2] == said).all(axis=1)
    pointers = np.zeros(len(frames), dtype=np.int64)
    rows = np.flatnonzero(good)
    pointers[rows] = [images[i].__cuda_array_interface__["data"][0] for i in rows.tolist()]
    errors = {i: str(_why(frames[i], images[i])) for i in np.flatnonzero(~good).tolist()}
    return _table(seen, good, pointers, height, width, errors, images if keep else None)


def _table(
    seen: np.ndarray,
    good: np.ndarray,
    pointers: np.ndarray,
    height: int,
    width: int,
    errors: dict[int, str],
    keeps: object | None,
) -> tuple[np.ndarray, Placements]:
    """The letterbox kernel's table (source pointer, height, width, fitted height, fitted width per
    frame; zeros for a frame that failed) and the Placements, from (width, height, channels) per frame
    and why each failed frame did: array arithmetic over the batch. With ``keeps`` (what owns the
    decoded images' memory), the Placements hold the images as a table of their addresses."""
    safe = np.maximum(seen[:, :2], 1)
    scale = np.minimum(height / safe[:, 1], width / safe[:, 0])
    fit = np.maximum(1, np.round(safe * scale[:, None])).astype(np.int64)  # as ``fitted``: half to even, never 0
    table = np.zeros((5, len(seen)), dtype=np.int64)  # src ptr, h, w, fit h, fit w
    rows = np.flatnonzero(good)
    table[0, rows] = pointers[rows]
    table[1:, rows] = np.stack([seen[rows, 1], seen[rows, 0], fit[rows, 1], fit[rows, 0]])
    images = None if keeps is None else DeviceImages(table[0], table[1], table[2], keeps)
    return table, Placements(np.where(good, scale, 0.0), np.where(good[:, None], seen[:, :2], 0), errors, images)


def _native_why(frame: Frame, code: int, seen: tuple[int, int]) -> DecodeError:
    if code == native_decoder.SIZE_DIFFERS:
        return DecodeError(f"message says {frame.width}x{frame.height}, image is {seen[0]}x{seen[1]}")
    if code == native_decoder.NOT_AN_IMAGE:
        return DecodeError(f"{len(frame.data)} bytes of {frame.encoding} data do not decode to an image")
    return DecodeError(f"{len(frame.data)} bytes of {frame.encoding} data failed in nvImageCodec's decoder")


def _why(frame: Frame, image) -> DecodeError:
    if image is None:
        return DecodeError(f"{len(frame.data)} bytes of {frame.encoding} data do not decode to an image")
    if (image.width, image.height) != (frame.width, frame.height):
        return DecodeError(f"message says {frame.width}x{frame.height}, image is {image.width}x{image.height}")
    return DecodeError(f"decoded to {image.num_channels} channels, expected 3")
