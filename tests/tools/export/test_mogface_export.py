"""MogFace in PyTorch: official key names, strict loading, ONNX export and its equality, FLOPs."""

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from click.testing import CliRunner

from facestream.detector_service.models.mogface_torch.net import MogFace
from facestream.detector_service.models.mogface_torch.weights import load_official, randomise
from facestream.errors import ModelError
from facestream.tools.cli import cli
from facestream.tools.export.flops import measure
from facestream.tools.export.onnx_export import ExportSpec, export

BN = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
WB = ("weight", "bias")


def official_keys(variant: str) -> set[str]:
    """The official key names, written out from the release (docs/mogface.md), not from our modules."""
    keys = {"backbone.conv1.weight"} | {f"backbone.bn1.{k}" for k in BN}
    for stage, blocks in enumerate((3, 4, 23 if variant == "mogface" else 36, 3), start=1):
        for block in range(blocks):
            prefix = f"backbone.layer{stage}.{block}"
            keys |= {f"{prefix}.conv{i}.weight" for i in (1, 2, 3)}
            keys |= {f"{prefix}.bn{i}.{k}" for i in (1, 2, 3) for k in BN}
            if block == 0:
                keys |= {f"{prefix}.downsample.0.weight"} | {f"{prefix}.downsample.1.{k}" for k in BN}
    keys |= {f"fpn.dsfd_modules.{i}.{k}" for i in range(6) for k in WB}
    for name in ("c6", "c7"):
        keys |= {f"fpn.{name}.{i}.{k}" for i in (0, 3) for k in WB} | {
            f"fpn.{name}.{i}.{k}" for i in (1, 4) for k in BN
        }
    keys |= {f"fpn.{p}_lat.{k}" for p in ("p2", "p3", "p4", "c5", "c6", "c7") for k in WB}
    keys |= {f"fpn.ff_{a}.main_conv.{k}" for a in ("c5_c4", "c4_c3", "c3_c2") for k in WB}
    keys |= {f"pred_net.{n}.{k}" for n in ("dsfd_loc", "dsfd_conf", "pred_cls", "pred_loc") for k in WB}
    if variant == "mogface":
        keys |= {
            f"pred_net.conv_SSH.{c}.{k}" for c in ("conv1", "conv2", "conv2_1", "conv2_2", "conv2_2_1") for k in WB
        }
    else:
        for branch in ("branch1", "branch2a", "branch2b", "branch2c"):
            keys |= {f"pred_net.conv_CPM.{branch}.conv1.{k}" for k in WB}
            keys |= {f"pred_net.conv_CPM.{branch}.bn1.{k}" for k in BN}
        keys |= {f"pred_net.conv_CPM.{c}.{k}" for c in ("ssh_1", "ssh_dimred", "ssh_2", "ssh_3a", "ssh_3b") for k in WB}
    for head in ("deep_cls_head", "deep_loc_head"):
        keys |= {f"pred_net.{head}.{layer}{i}.{k}" for layer in ("conv", "gn") for i in range(1, 5) for k in WB}
    return keys


@pytest.mark.parametrize(("variant", "count"), [("mogface", 732), ("mogface_e", 994)])
def test_state_dict_keys_are_the_official_ones(variant: str, count: int) -> None:
    keys = set(MogFace(variant).state_dict())
    assert keys == official_keys(variant)
    assert len(keys) == count


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    """A synthetic checkpoint with exactly the official keys (random values), saved like the release."""
    path = tmp_path_factory.mktemp("ckpt") / "mogface.pth"
    model = MogFace("mogface")
    randomise(model, seed=3)
    torch.save(model.state_dict(), path)
    return path


def test_synthetic_checkpoint_loads_strictly(checkpoint: Path) -> None:
    model = MogFace("mogface")
    digest = load_official(model, checkpoint)
    assert len(digest) == 64
    saved = torch.load(checkpoint, weights_only=True)
    assert all(torch.equal(v, saved[k]) for k, v in model.state_dict().items())


@pytest.mark.parametrize("wrap", ["module_prefix", "state_dict_key"])
def test_common_checkpoint_wrappings_load(checkpoint: Path, tmp_path: Path, wrap: str) -> None:
    state = torch.load(checkpoint, weights_only=True)
    wrapped = {f"module.{k}": v for k, v in state.items()} if wrap == "module_prefix" else {"state_dict": state}
    torch.save(wrapped, tmp_path / "wrapped.pth")
    load_official(MogFace("mogface"), tmp_path / "wrapped.pth")


def test_missing_and_extra_keys_fail_clearly(checkpoint: Path, tmp_path: Path) -> None:
    state = torch.load(checkpoint, weights_only=True)
    broken = dict(state)
    del broken["pred_net.deep_cls_head.gn3.weight"]
    broken["pred_net.extra_head.weight"] = torch.zeros(1)
    torch.save(broken, tmp_path / "broken.pth")
    with pytest.raises(ModelError) as err:
        load_official(MogFace("mogface"), tmp_path / "broken.pth")
    message = str(err.value)
    assert "1 missing: pred_net.deep_cls_head.gn3.weight" in message
    assert "1 unexpected: pred_net.extra_head.weight" in message


def test_the_other_variant_is_named(checkpoint: Path) -> None:
    with pytest.raises(ModelError, match=r"not a mogface_e checkpoint .*--variant mogface\)"):
        load_official(MogFace("mogface_e"), checkpoint)


def test_a_file_that_is_not_a_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "junk.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(ModelError, match="cannot read checkpoint"):
        load_official(MogFace("mogface"), tmp_path / "junk.pth")


@pytest.fixture(scope="module")
def exported(checkpoint: Path, tmp_path_factory) -> tuple[MogFace, Path]:
    model = MogFace("mogface")
    digest = load_official(model, checkpoint)
    path = tmp_path_factory.mktemp("onnx") / "mogface-dyn.onnx"
    export(model, path, ExportSpec(height=96, width=128, dynamic_hw=True), digest, random_weights=False)
    return model, path


@pytest.mark.parametrize(("batch", "height", "width"), [(1, 96, 128), (3, 96, 128), (2, 97, 131)])
def test_onnx_runtime_equals_pytorch(exported, batch: int, height: int, width: int) -> None:
    model, path = exported
    x = torch.randn(batch, 3, height, width, generator=torch.Generator().manual_seed(batch))
    with torch.no_grad():
        expected = [t.numpy() for t in model(x)]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(["scores", "deltas"], {"input": x.numpy()})
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=0, atol=1e-4)


def test_export_metadata(exported, checkpoint: Path) -> None:
    from facestream.assets import sha256_of

    meta = {p.key: p.value for p in onnx.load(str(exported[1]), load_external_data=False).metadata_props}
    assert meta["facestream.model"] == "mogface" and meta["facestream.version"] == "mogface"
    assert meta["facestream.weights_sha256"] == sha256_of(checkpoint)
    assert meta["facestream.input_size"] == "dynamic" and meta["facestream.random_weights"] == "false"
    assert '"then_divide_by": 255' in meta["facestream.preprocess"]
    assert meta["facestream.exporter"].startswith("facestream ")
    graph = onnx.load(str(exported[1]), load_external_data=False)
    assert graph.opset_import[0].version >= 17
    assert graph.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"


@pytest.mark.parametrize(("variant", "gflops"), [("mogface", 1169), ("mogface_e", 481)])
def test_flops_match_the_published_cost(variant: str, gflops: int) -> None:
    cost = measure(MogFace(variant), 480, 640)
    assert cost.total_flops / 1e9 == pytest.approx(gflops, rel=0.02)
    if variant == "mogface":
        assert cost.params_total / 1e6 == pytest.approx(85.3, rel=0.01)
        assert cost.params_used / 1e6 == pytest.approx(61.1, rel=0.01)


def test_cli_random_init_fp16_fixed_size(tmp_path: Path) -> None:
    out = tmp_path / "tiny-fp16.onnx"
    result = CliRunner().invoke(
        cli,
        [
            "export",
            "mogface",
            "--variant",
            "mogface_e",
            "--random-init",
            "--fp16",
            "--height",
            "96",
            "--width",
            "128",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "self-check OK" in result.output and "random weights" in result.output
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert meta["facestream.random_weights"] == "true" and meta["facestream.precision"] == "fp16"
    assert meta["facestream.input_size"] == "128x96" and meta["facestream.version"] == "mogface_e"


def test_cli_needs_exactly_one_weight_source(checkpoint: Path, tmp_path: Path) -> None:
    for args in ([], ["--random-init", "--checkpoint", str(checkpoint)]):
        result = CliRunner().invoke(cli, ["export", "mogface", "--out", str(tmp_path / "x.onnx"), *args])
        assert result.exit_code == 2 and "exactly one of" in result.output


def test_cli_flops() -> None:
    result = CliRunner().invoke(cli, ["export", "flops", "--variant", "mogface", "--height", "480", "--width", "640"])
    assert "1169.2 GFLOPs" in result.output and "61.1 M used" in result.output


def test_engine_top_k_gives_the_same_faces_as_decoding_every_anchor(exported) -> None:
    """The engine keeps only the best anchors on the device; nothing above the threshold is lost."""
    from facestream.detector_service import models
    from facestream.detector_service.inference.engine import Engine
    from facestream.detector_service.models.base import Thresholds
    from facestream.detector_service.models.mogface import boxes_from_deltas
    from facestream.detector_service.models.postprocess import select

    _, path = exported
    plugin = models.plugin_for(models.read_metadata(path), str(path))
    engine = Engine(path, (96, 128), batch=2, plugin=plugin, provider="cpu")
    images = np.random.default_rng(5).integers(0, 256, (2, 96, 128, 3), dtype=np.uint8)
    thresholds = Thresholds(score_threshold=0.45, nms_iou=0.4)
    got = plugin.to_detections(engine.run(images), (96, 128), thresholds)
    tensor = (images.astype(np.float32) - [103.53, 116.28, 123.675]) / [57.375, 57.12, 58.395] / 255
    raw = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"input": np.ascontiguousarray(tensor[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32)}
    )
    anchors = plugin.anchors((96, 128))
    for i, det in enumerate(got):
        idx = np.flatnonzero(raw[0][i, :, 0] > thresholds.score_threshold)
        boxes = boxes_from_deltas(anchors[idx], raw[1][i, idx])
        boxes[:, 2:] += 1.0
        expected = select(boxes, raw[0][i, idx, 0], None, thresholds)
        assert len(det) == len(expected) > 0
        # Near-equal scores may swap places (the two paths round differently): compare as sets.
        order_got, order_expected = np.lexsort(det.boxes.T.round(1)), np.lexsort(expected.boxes.T.round(1))
        np.testing.assert_allclose(det.boxes[order_got], expected.boxes[order_expected], atol=1e-3)
        np.testing.assert_allclose(np.sort(det.scores), np.sort(expected.scores), atol=1e-4)
