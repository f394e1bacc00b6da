"""The PyTorch engine's fused convolutions give the numbers of the modules they replace (on the CPU the
ops run as plain convolution, Add and ReLU; test_torch_engine_gpu.py runs them through cuDNN)."""

import pytest
import torch

from facestream.detector_service.models.mogface_torch.fused_convs import FusedResNet, fuse_convolutions
from facestream.detector_service.models.mogface_torch.net import MogFace
from facestream.detector_service.models.mogface_torch.weights import randomise


def _randomised(variant: str) -> MogFace:
    """A MogFace with random weights and batch-norm statistics far from the identity, so that a fold that
    dropped any of them would show."""
    model = MogFace(variant)
    randomise(model, seed=1)
    generator = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                assert module.running_mean is not None and module.running_var is not None
                module.running_mean.normal_(0.0, 0.2, generator=generator)
                module.running_var.uniform_(0.5, 2.0, generator=generator)
                module.bias.normal_(0.0, 0.1, generator=generator)
    return model.eval()


@pytest.mark.parametrize("variant", ["mogface", "mogface_e"])
def test_fused_mogface_gives_the_outputs_of_the_plain_one(variant: str) -> None:
    model = _randomised(variant)
    x = torch.randn(2, 3, 64, 96, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        scores, deltas = model(x)
        fuse_convolutions(model)
        got_scores, got_deltas = model(x.to(memory_format=torch.channels_last))
    assert isinstance(model.backbone, FusedResNet)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in model.backbone.modules())
    torch.testing.assert_close(got_scores, scores, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(got_deltas, deltas, atol=1e-3, rtol=1e-4)


def test_batch_norms_fold_only_in_eval_mode() -> None:
    with pytest.raises(ValueError, match="eval mode"):
        fuse_convolutions(MogFace("mogface").train())
