"""Graph rewrites, on graphs exported the way facestream exports MogFace. The fused GroupNorm runs on
CUDA only: here its structure and parameters are checked; on the GPU the engine checks its outputs
against the exported graph at every start, and `python -m bench profile` reports the difference."""

import numpy as np
import onnx
import pytest
import torch  # the export extra, which `make test` installs

from facestream.detector_service.models.graph_rewrite import fuse_group_norm


def exported(module, tmp_path) -> onnx.ModelProto:
    path = tmp_path / "m.onnx"
    torch.onnx.export(
        module.eval(),
        (torch.randn(1, 8, 6, 5),),
        str(path),
        input_names=["input"],
        output_names=["out"],
        opset_version=17,
        dynamo=False,
        dynamic_axes={"input": {0: "batch"}, "out": {0: "batch"}},
    )
    return onnx.load(str(path))


def test_group_norm_becomes_the_fused_op_with_the_same_parameters(tmp_path) -> None:
    norm = torch.nn.GroupNorm(4, 8, eps=1e-5)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    model = exported(torch.nn.Sequential(torch.nn.Conv2d(8, 8, 3, padding=1), norm, torch.nn.ReLU()), tmp_path)
    assert fuse_group_norm(model) == 1
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert "InstanceNormalization" not in ops and ops.count("GroupNorm") == 1
    node = next(n for n in model.graph.node if n.op_type == "GroupNorm")
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert node.domain == "com.microsoft" and attrs["groups"] == 4 and attrs["channels_last"] == 1
    assert attrs["activation"] == 0 and attrs["epsilon"] == pytest.approx(1e-5)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    np.testing.assert_allclose(inits[node.input[1]], norm.weight.detach().numpy())
    np.testing.assert_allclose(inits[node.input[2]], norm.bias.detach().numpy())
    assert inits[node.input[1]].dtype == np.float32
    assert model.graph.output[0].name == "out"


def test_instance_norm_with_its_own_affine_is_left_alone(tmp_path) -> None:
    module = torch.nn.Sequential(torch.nn.InstanceNorm2d(8, affine=True))
    with torch.no_grad():
        module[0].weight.fill_(2.0)
    model = exported(module, tmp_path)
    assert fuse_group_norm(model) == 0
