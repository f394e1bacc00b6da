"""Pictures as the producer holds them (see ``pythonpath`` in pyproject)."""

import av
import numpy as np


def picture(image: np.ndarray) -> av.VideoFrame:
    """A BGR array as a decoded picture: an ``av.VideoFrame``."""
    return av.VideoFrame.from_ndarray(image, format="bgr24")
