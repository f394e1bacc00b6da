"""JPEG bytes -> one uint8 batch in GPU memory: nvImageCodec decodes, one CUDA kernel letterboxes.

The same contract as ``preprocess.Preprocessor`` (``run`` -> (batch, placed), a bad frame is a
DecodeError in its slot), but the batch is a CuPy array on the device: the engine copies
it into its bound input there, so pixels never cross to the host and no CPU core decodes. nvImageCodec
uses the GPU's hardware JPEG decoder where it has one (the H100/H200 do) and CUDA decoding otherwise.
The letterbox matches the CPU path: bilinear when enlarging, area averaging when shrinking (OpenCV's
INTER_LINEAR / INTER_AREA), image at the top-left, zeros elsewhere, BGR out. Needs the ``gpu``
extra (nvidia-nvimgcodec, cupy).
"""

from dataclasses import replace

import numpy as np

from facestream.detector_service.decoding import nvimgcodec_extensions
from facestream.detector_service.decoding.gpu_decode_settings import BACKENDS, GpuDecodeSettings
from facestream.detector_service.decoding.preprocess import DecodeError, Placed, fitted
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
    ) -> None:
        missing = available()
        if missing is not None:
            raise ConfigError(f"GPU JPEG decoding cannot run: {missing}")
        import cupy as cp
        from nvidia import nvimgcodec

        self.input_hw = input_hw
        self.settings = settings or GpuDecodeSettings()
        self.keep_frames = keep_frames
        self._cp = cp
        self._device = cp.cuda.Device(device_id)
        options = {}  # only what differs from nvImageCodec's defaults
        if self.settings.cpu_threads:
            options["max_num_cpu_threads"] = self.settings.cpu_threads
        if BACKENDS[self.settings.backends]:
            options["backends"] = [
                nvimgcodec.Backend(getattr(nvimgcodec.BackendKind, kind)) for kind in BACKENDS[self.settings.backends]
            ]
        try:
            self._decoder = nvimgcodec.Decoder(device_id=device_id, **options)
        except RuntimeError as exc:  # e.g. the GPU_ONLY backend alone, refused on the H200
            raise ConfigError(
                f"nvImageCodec cannot make a decoder with backends {self.settings.backends!r} on GPU "
                f"{device_id}: {exc}; try --gpu-decoder all"
            ) from None
        self._params = nvimgcodec.DecodeParams(color_spec=nvimgcodec.ColorSpec.SRGB)
        with self._device:
            key = (device_id, self.settings.first)
            if key not in _STREAMS:  # CUDA takes the lower number first and clamps it to the GPU's range
                _STREAMS[key] = cp.cuda.Stream(non_blocking=True, priority=_HIGHEST if self.settings.first else 0)
            self._stream = _STREAMS[key]
            self._kernel = cp.RawKernel(_LETTERBOX, "letterbox")
        # With keep_images: per (generation, chunk index), the Images decoded into last. Frames handed out
        # with their batch (keep_frames) stay in use until the caller finishes that batch, while the next
        # one decodes: two generations alternate, so a batch's Images are reused only two batches later.
        self._kept: dict[tuple[int, int], list] = {}
        self._generation = 0

    def _decode(self, index: int, chunk: list[bytes]) -> list:
        """One nvImageCodec call for chunk ``index``; into that chunk's kept Images when asked and there are enough."""
        key = (self._generation, index)
        kept = self._kept.get(key, [])
        if not self.settings.keep_images or len(kept) < len(chunk):
            images = self._decoder.decode(chunk, params=self._params, cuda_stream=self._stream.ptr)
        else:
            images = self._decoder.decode(
                chunk, images=kept[: len(chunk)], params=self._params, cuda_stream=self._stream.ptr
            )
        # A frame that failed leaves no Image: a chunk is kept only with one per frame.
        if self.settings.keep_images and len(images) > len(kept) and all(i is not None for i in images):
            self._kept[key] = list(images)
        return images

    def run(self, frames: list[Frame]):
        """(CuPy uint8 (N, H, W, 3) BGR batch, Placed or DecodeError per frame); ready when returned.

        With ``keep_frames`` each Placed holds its decoded Image (RGB, on the device), valid until the
        batch after next is decoded: the processor never has more than two batches under way."""
        cp = self._cp
        height, width = self.input_hw
        if self.keep_frames:
            self._generation ^= 1
        with self._device, self._stream:
            images, chunk = [], self.settings.chunk or len(frames)
            for index, start in enumerate(range(0, len(frames), chunk)):
                images += self._decode(index, [f.data for f in frames[start : start + chunk]])
            placed, table = [], np.zeros((5, len(frames)), dtype=np.int64)  # src ptr, h, w, fit h, fit w
            for i, (frame, image) in enumerate(zip(frames, images)):
                outcome = _place(frame, image, height, width)
                if isinstance(outcome, Placed):
                    fit_w, fit_h = fitted(image.width, image.height, outcome.scale)
                    if self.keep_frames:
                        outcome = replace(outcome, image=image)
                    table[:, i] = (image.__cuda_array_interface__["data"][0], image.height, image.width, fit_h, fit_w)
                placed.append(outcome)
            batch = cp.empty((len(frames), height, width, 3), dtype=cp.uint8)
            args = cp.asarray(table[0].astype(np.uint64)), *(cp.asarray(row.astype(np.int32)) for row in table[1:])
            total = batch.size // 3
            self._kernel(
                ((total + _THREADS - 1) // _THREADS,),
                (_THREADS,),
                (*args, batch, np.int32(height), np.int32(width), np.int64(total)),
            )
            self._stream.synchronize()  # the batch is complete; Images no Placed keeps are freed after this
        return batch, placed

    def close(self) -> None:
        """Release nvImageCodec's kept Images, then its decoder, in that order and now, rather than in
        whatever order the interpreter's shutdown would free them (the stream is the process's)."""
        with self._device:
            self._stream.synchronize()
        self._kept.clear()
        self._decoder = None


def _place(frame: Frame, image, height: int, width: int) -> Placed | DecodeError:
    if image is None:
        return DecodeError(f"{len(frame.data)} bytes of {frame.encoding} data do not decode to an image")
    if (image.width, image.height) != (frame.width, frame.height):
        return DecodeError(f"message says {frame.width}x{frame.height}, image is {image.width}x{image.height}")
    if image.num_channels != 3:
        return DecodeError(f"decoded to {image.num_channels} channels, expected 3")
    return Placed(scale=min(height / image.height, width / image.width), width=image.width, height=image.height)
