"""Float16 conversion, checked the way a user would: the same faces on real photos."""

from pathlib import Path

import onnx
from click.testing import CliRunner

from facestream.tools.cli import cli
from facestream.tools.export import fp16


def test_yunet_in_float16_finds_the_same_faces(yunet_path: Path, sample_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "yunet-fp16.onnx"
    result = CliRunner().invoke(cli, ["export", "fp16", str(yunet_path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    model = onnx.load(str(out))
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["facestream.precision"] == "fp16" and meta["facestream.model"] == "yunet"
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT  # I/O stay float32
    agreement = fp16.compare_on_photos(yunet_path, out)
    assert agreement.same_faces and agreement.faces_fp32 == 9
    assert agreement.max_score_diff < 0.01
