"""How sharp each face is: the variance of the Laplacian of its aligned crop's grey levels.

Blur (motion, focus, a face enlarged from a few pixels) leaves a face's size, score and pose as they
were but takes the detail an embedding needs, and only the detector still has the pixels. The crops
are the embedder's (112x112, faces aligned to one template), so one scale fits every face whatever
its size in the frame. Computed for a batch at once, with NumPy on host crops and with a CUDA kernel
(CuPy) on device ones: nothing is copied but one number a face.
"""

import numpy as np

# BT.601 luma weights, in the crops' BGR order
GREY = (0.114, 0.587, 0.299)


# On the device, one block per crop: each thread takes pixels of the crop's inside, the block sums the
# Laplacian and its square, and thread 0 writes the variance. A batch of faces is one launch and F
# numbers back, where the array expression made a float copy of every crop and a kernel per step.
_KERNEL = r"""
extern "C" __global__ void sharpness(const unsigned char* crops, const int height, const int width, float* out)
{
    __shared__ double sums[256], squares[256];
    const unsigned char* crop = crops + (long long)blockIdx.x * height * width * 3;
    const int inner = (height - 2) * (width - 2);
    double sum = 0.0, square = 0.0;
    for (int i = threadIdx.x; i < inner; i += blockDim.x) {
        const int y = i / (width - 2) + 1, x = i % (width - 2) + 1;
        #define GREY(yy, xx) (0.114f * crop[((yy) * width + (xx)) * 3] + 0.587f * crop[((yy) * width + (xx)) * 3 + 1] \
                              + 0.299f * crop[((yy) * width + (xx)) * 3 + 2])
        const float value = GREY(y, x - 1) + GREY(y, x + 1) + GREY(y - 1, x) + GREY(y + 1, x) - 4.0f * GREY(y, x);
        sum += value;
        square += (double)value * value;
    }
    sums[threadIdx.x] = sum;
    squares[threadIdx.x] = square;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step >>= 1) {
        if (threadIdx.x < step) {
            sums[threadIdx.x] += sums[threadIdx.x + step];
            squares[threadIdx.x] += squares[threadIdx.x + step];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const double mean = sums[0] / inner;
        out[blockIdx.x] = (float)(squares[0] / inner - mean * mean);
    }
}
"""
_kernel = None


def sharpness(crops) -> np.ndarray:
    """(F,) float32 for (F, H, W, 3) uint8 BGR crops, host (NumPy) or device (CuPy)."""
    xp = array_module(crops)
    if len(crops) == 0:
        return np.zeros(0, np.float32)
    if xp is not np:
        return _on_device(crops)
    grey = crops.astype(xp.float32) @ xp.asarray(GREY, dtype=xp.float32)
    laplacian = (
        grey[:, 1:-1, :-2] + grey[:, 1:-1, 2:] + grey[:, :-2, 1:-1] + grey[:, 2:, 1:-1] - 4 * grey[:, 1:-1, 1:-1]
    )
    return laplacian.reshape(len(crops), -1).var(axis=1).astype(np.float32)


def _on_device(crops) -> np.ndarray:
    """``sharpness`` of CuPy crops by one kernel launch."""
    import cupy

    global _kernel
    if _kernel is None:
        _kernel = cupy.RawKernel(_KERNEL, "sharpness")
    crops = cupy.ascontiguousarray(crops)
    out = cupy.empty(len(crops), cupy.float32)
    _kernel((len(crops),), (256,), (crops, np.int32(crops.shape[1]), np.int32(crops.shape[2]), out))
    return out.get()


def array_module(array):
    """NumPy for a host array, CuPy for a device one (imported only when one is given)."""
    if isinstance(array, np.ndarray):
        return np
    import cupy

    return cupy.get_array_module(array)
