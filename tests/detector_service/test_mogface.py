"""MogFace's plugin without PyTorch: anchors, decoding and preprocessing against hand-computed values."""

import numpy as np
import pytest

from facestream.detector_service.models.base import InputSpec, Thresholds
from facestream.detector_service.models.mogface import MogFace, boxes_from_deltas, level_sizes, make_anchors
from facestream.errors import ConfigError
from facestream.schemas import ModelRef

REF = ModelRef("mogface", "mogface", "0" * 64)


@pytest.mark.parametrize(
    ("height", "width", "count"), [(480, 640, 25_600), (1080, 1920, 172_845), (97, 131, 825 + 221 + 63 + 20 + 6 + 2)]
)
def test_anchor_counts(height: int, width: int, count: int) -> None:
    assert len(make_anchors(height, width)) == count


def test_levels_halve_rounding_up() -> None:
    assert level_sizes(1080, 1920) == [(270, 480), (135, 240), (68, 120), (34, 60), (17, 30), (9, 15)]


def test_anchor_positions_and_sides() -> None:
    anchors = make_anchors(480, 640)
    np.testing.assert_allclose(anchors[0], [2.0, 2.0, 10.88, 10.88], rtol=1e-6)  # stride 4, row 0, col 0
    np.testing.assert_allclose(anchors[1], [6.0, 2.0, 10.88, 10.88], rtol=1e-6)  # next column
    np.testing.assert_allclose(anchors[160], [2.0, 6.0, 10.88, 10.88], rtol=1e-6)  # next row (160 columns)
    np.testing.assert_allclose(anchors[19_200], [4.0, 4.0, 21.76, 21.76], rtol=1e-6)  # first of stride 8
    np.testing.assert_allclose(anchors[-1], [4.5 * 128, 3.5 * 128, 348.16, 348.16], rtol=1e-6)  # last of stride 128


def test_decode_by_hand() -> None:
    anchors = np.array([[100.0, 50.0, 20.0, 20.0], [10.0, 10.0, 10.88, 10.88]], dtype=np.float32)
    deltas = np.array([[0.5, -0.25, np.log(2.0), 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    boxes = boxes_from_deltas(anchors, deltas)
    # cx = 100 + 0.5 * 20 = 110, w = 40: x0 = 110 - 39 / 2 = 90.5, x1 = x0 + 40 - 1 = 129.5
    # cy = 50 - 0.25 * 20 = 45, h = 20: y0 = 45 - 19 / 2 = 35.5, y1 = 35.5 + 19 = 54.5
    np.testing.assert_allclose(boxes[0], [90.5, 35.5, 129.5, 54.5], rtol=1e-6)
    np.testing.assert_allclose(boxes[1], [10 - 4.94, 10 - 4.94, 10 + 4.94, 10 + 4.94], rtol=1e-5)


def test_plugin_decodes_one_confident_anchor() -> None:
    model = MogFace(REF, {})
    target = 768 + 16 * 5 + 3  # stride 8, row 5, column 3: centre (28, 44), side 21.76
    # What the engine's top-k hands over: the best candidates, best first, with their anchor numbers.
    scores = np.array([[0.3, 0.2], [0.95, 0.3]], dtype=np.float32)
    deltas = np.zeros((2, 2, 4), dtype=np.float32)
    deltas[1, 0] = [0.1, 0.0, 0.0, 0.0]
    anchor = np.array([[5, 6], [target, 7]], dtype=np.int64)
    dets = model.to_detections({"scores": scores, "deltas": deltas, "anchor": anchor}, (96, 128), Thresholds(0.5, 0.4))
    assert len(dets[0]) == 0 and len(dets[1]) == 1
    x0 = 28 + 0.1 * 21.76 - (21.76 - 1) / 2
    # Events use continuous coordinates: x1 = x0 + w (the official inclusive x1 plus one).
    np.testing.assert_allclose(dets[1].boxes[0], [x0, 44 - 10.38, x0 + 21.76, 44 - 10.38 + 21.76], rtol=1e-5)
    assert dets[1].scores[0] == pytest.approx(0.95) and dets[1].landmarks is None


def test_preprocessing_in_the_graph_matches_the_official_formula(tmp_path) -> None:
    """The engine builds the transform into the graph: run it on an identity 'network' to see it."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from facestream.detector_service.models.graph_rewrite import IMAGE_INPUT, embed_preprocessing

    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 2, 1])
    y = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 3, 2, 1])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Identity", ["input"], ["out"])], "id", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    embed_preprocessing(model, MogFace.input_transform)
    onnx.checker.check_model(model)
    pixels = np.array([[[[0, 128, 255]], [[10, 20, 30]]]], dtype=np.uint8)  # (1, 2, 1, 3): two BGR pixels
    out = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {IMAGE_INPUT: pixels}
    )[0]
    for row, (b, g, r) in enumerate(pixels[0, :, 0].astype(float)):
        expected_rgb = [(r - 123.675) / 58.395 / 255, (g - 116.28) / 57.12 / 255, (b - 103.53) / 57.375 / 255]
        np.testing.assert_allclose(out[0, :, row, 0], expected_rgb, rtol=1e-5)


def test_input_size_policy_from_metadata() -> None:
    fixed = MogFace(REF, {"facestream.input_size": "128x96"}).input_spec
    assert fixed == InputSpec(height=96, width=128, fixed=True)
    assert fixed.resolve(None) == (96, 128)
    with pytest.raises(ConfigError, match="exported for 128x96 only"):
        fixed.resolve((640, 480))
    dynamic = MogFace(REF, {"facestream.input_size": "dynamic"}).input_spec
    assert dynamic.resolve((131, 97)) == (97, 131)
