"""The check that a float16 copy of a detector (``models.base.float16``) finds the same faces as float32
on real photos.

Faces are compared frame by frame: each float32 face must have a
float16 face over it (IoU >= 0.9), and the scores must agree closely.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from facestream import samples
from facestream.detector_service import models
from facestream.detector_service.decoding.preprocess import letterbox_into
from facestream.detector_service.inference.engine import Engine
from facestream.detector_service.models.postprocess import iou, to_frames

MATCH_IOU = 0.9


@dataclass(frozen=True)
class Agreement:
    images: int
    faces_fp32: int
    faces_fp16: int
    matched: int  # float32 faces with a float16 face at IoU >= MATCH_IOU
    max_score_diff: float  # over matched pairs

    @property
    def same_faces(self) -> bool:
        return self.matched == self.faces_fp32 == self.faces_fp16


def compare_on_photos(fp32: Path, fp16: Path, provider: str = "cpu") -> Agreement:
    """Run both files over the real sample photos with the detector's own engine and decoder."""
    folder = samples.fetch()
    photos = [samples.read_photo(folder / f.filename) for f in samples.PORTRAITS + samples.ANNOTATED]
    detections = [_detect(path, photos, provider) for path in (fp32, fp16)]
    matched, worst = 0, 0.0
    for a, b in zip(*detections):
        for box, score in zip(a.boxes, a.scores):
            if len(b):
                overlaps = iou(box, b.boxes)
                best = int(np.argmax(overlaps))
                if overlaps[best] >= MATCH_IOU:
                    matched += 1
                    worst = max(worst, abs(float(score) - float(b.scores[best])))
    return Agreement(
        images=len(photos),
        faces_fp32=sum(len(d) for d in detections[0]),
        faces_fp16=sum(len(d) for d in detections[1]),
        matched=matched,
        max_score_diff=worst,
    )


def _detect(path: Path, photos: list[np.ndarray], provider: str) -> list:
    plugin = models.plugin_for(models.read_metadata(path), str(path))
    input_hw = plugin.input_spec.resolve(None)
    engine = Engine(path, input_hw, batch=len(photos), plugin=plugin, provider=provider)
    batch = np.zeros((len(photos), *input_hw, 3), np.uint8)
    placed = [letterbox_into(photo, canvas) for photo, canvas in zip(photos, batch)]
    found = plugin.to_detections(engine.run(batch), input_hw, plugin.default_thresholds)
    return [to_frames([d], np.array([p.scale]), np.array([(p.width, p.height)]))[0] for d, p in zip(found, placed)]
