"""How sharp each face is: the variance of the Laplacian of its aligned crop's grey levels.

Blur (motion, focus, a face enlarged from a few pixels) leaves a face's size, score and pose as they
were but takes the detail an embedding needs, and only the detector still has the pixels. The crops
are the embedder's (112x112, faces aligned to one template), so one scale fits every face whatever
its size in the frame. Computed for a batch at once, with NumPy on host crops and with CuPy on device
ones (the array's own module: nothing is copied but one number a face).
"""

import numpy as np

# BT.601 luma weights, in the crops' BGR order
GREY = (0.114, 0.587, 0.299)


def sharpness(crops) -> np.ndarray:
    """(F,) float32 for (F, H, W, 3) uint8 BGR crops, host (NumPy) or device (CuPy)."""
    xp = array_module(crops)
    if len(crops) == 0:
        return np.zeros(0, np.float32)
    grey = crops.astype(xp.float32) @ xp.asarray(GREY, dtype=xp.float32)
    laplacian = (
        grey[:, 1:-1, :-2] + grey[:, 1:-1, 2:] + grey[:, :-2, 1:-1] + grey[:, 2:, 1:-1] - 4 * grey[:, 1:-1, 1:-1]
    )
    found = laplacian.reshape(len(crops), -1).var(axis=1)
    return found.get().astype(np.float32) if xp is not np else found.astype(np.float32)


def array_module(array):
    """NumPy for a host array, CuPy for a device one (imported only when one is given)."""
    if isinstance(array, np.ndarray):
        return np
    import cupy

    return cupy.get_array_module(array)
