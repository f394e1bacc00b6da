"""Faces warped out of the decoded frames on the GPU: the device twin of ``align.warp``.

On the GPU path the full-size frames exist only in device memory (nvImageCodec's Images), so the
faces are cut there: one CUDA kernel warps every face of a batch (one thread per output pixel),
bilinear with black outside the frame as OpenCV's ``warpAffine`` does, RGB in (nvImageCodec's order),
BGR out (every engine's input). Only each face's 2x3 matrix crosses from the host. Needs CuPy (the
``gpu`` extra).
"""

import numpy as np

from facestream.detector_service.decoding import align
from facestream.detector_service.decoding.placements import DeviceImages

# Output pixel (x, y) of face f samples its frame at inverse[f] @ (x, y, 1), as warpAffine does.
_WARP = r"""
extern "C" __global__ void warp_faces(
    const unsigned long long* src, const int* src_h, const int* src_w, const float* inverse,
    unsigned char* out, const int size, const long long total)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int x = idx % size, y = (idx / size) % size, f = idx / ((long long)size * size);
    const float* m = inverse + f * 6;
    const float sx = m[0] * x + m[1] * y + m[2], sy = m[3] * x + m[4] * y + m[5];
    const int x0 = (int)floorf(sx), y0 = (int)floorf(sy), h = src_h[f], w = src_w[f];
    const float ax = sx - x0, ay = sy - y0;
    const unsigned char* s = (const unsigned char*)src[f];
    float acc[3] = {0.f, 0.f, 0.f};
    for (int dy = 0; dy < 2; ++dy) {
        const int py = y0 + dy;
        if (py < 0 || py >= h) continue;
        for (int dx = 0; dx < 2; ++dx) {
            const int px = x0 + dx;
            if (px < 0 || px >= w) continue;
            const float weight = (dx ? ax : 1.f - ax) * (dy ? ay : 1.f - ay);
            const unsigned char* p = s + ((long long)py * w + px) * 3;
            acc[0] += weight * p[0]; acc[1] += weight * p[1]; acc[2] += weight * p[2];
        }
    }
    unsigned char* o = out + idx * 3;
    for (int c = 0; c < 3; ++c) o[2 - c] = (unsigned char)fminf(acc[c] + 0.5f, 255.f);
}
"""
_THREADS = 256


class GpuWarper:
    """Warps faces out of device images ((H, W, 3) uint8 RGB: the decoder's DeviceImages, or a list of
    arrays with ``__cuda_array_interface__``) on a stream of its own, so it never waits behind the next
    batch's decoding."""

    def __init__(self, device_id: int = 0) -> None:
        import cupy as cp

        self._cp = cp
        self._device = cp.cuda.Device(device_id)
        with self._device:
            self._stream = cp.cuda.Stream(non_blocking=True)
            self._kernel = cp.RawKernel(_WARP, "warp_faces")

    def __call__(self, images: DeviceImages | list, image_of: np.ndarray, matrices: np.ndarray, size: int):
        """CuPy uint8 (F, size, size, 3) BGR, complete when returned: face i from ``images[image_of[i]]``."""
        cp = self._cp
        table = images if isinstance(images, DeviceImages) else DeviceImages.of_arrays(images)
        with self._device, self._stream:
            out = cp.empty((len(matrices), size, size, 3), dtype=cp.uint8)
            if not len(matrices):
                return out
            args = (
                cp.asarray(table.addresses[image_of].astype(np.uint64)),
                cp.asarray(table.heights[image_of].astype(np.int32)),
                cp.asarray(table.widths[image_of].astype(np.int32)),
                cp.asarray(align.inverted(matrices).astype(np.float32)),
            )
            total = out.size // 3
            self._kernel(
                ((total + _THREADS - 1) // _THREADS,), (_THREADS,), (*args, out, np.int32(size), np.int64(total))
            )
            self._stream.synchronize()  # the embedder's engine copies it on a stream of its own
        return out
