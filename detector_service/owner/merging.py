"""The owner's answer to several fronts' batches run as one: split back into each front's answer."""

import numpy as np

from facestream.detector_service.models.base import Detections
from facestream.detector_service.processor import Answer, Candidates


def split(answer: Answer, sizes: list[int]) -> list[Answer]:
    """The answer to batches merged into one, back as the answers to each: ``sizes`` frames, in order
    (a GPU owner merges the batches of several fronts into one run of its engine). Each part gets its
    share of the run's stage times, by frames, so the fronts' busy times add up to the owner's."""
    parts, start, first_good, first_face, total = [], 0, 0, 0, max(sum(sizes), 1)
    good = np.asarray(answer.good, dtype=np.int64)
    for size in sizes:
        end = start + size
        last_good = int(np.searchsorted(good, end))
        counts = answer.counts[first_good:last_good]  # empty while the answer holds candidates
        last_face = first_face + int(counts.sum())
        faces = candidates = None
        if answer.faces is not None and last_good > first_good:
            faces = _rows(answer.faces, first_face, last_face)
        if answer.candidates is not None and last_good > first_good:
            outputs = {name: rows[first_good:last_good] for name, rows in answer.candidates.outputs.items()}
            candidates = Candidates(outputs, answer.candidates.placed.take(slice(first_good, last_good)))
        parts.append(
            Answer(
                errors={i - start: why for i, why in answer.errors.items() if start <= i < end},
                good=(good[first_good:last_good] - start).tolist(),
                faces=faces,
                counts=counts,
                identity=None if answer.identity is None else answer.identity.of_faces(first_face, last_face),
                seconds={stage: s * size / total for stage, s in answer.seconds.items()},
                candidates=candidates,
            )
        )
        start, first_good, first_face = end, last_good, last_face
    return parts


def _rows(found: Detections, start: int, end: int) -> Detections:
    def cut(array: np.ndarray | None) -> np.ndarray | None:
        return None if array is None else array[start:end]

    return Detections(found.boxes[start:end], found.scores[start:end], cut(found.landmarks), cut(found.landmark_scores))
