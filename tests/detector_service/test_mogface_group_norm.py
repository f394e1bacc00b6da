"""The PyTorch engine's channels-last GroupNorm gives nn.GroupNorm's numbers, in MogFace and alone."""

import torch

from facestream.detector_service.models.mogface_torch.group_norm import (
    ChannelsLastGroupNorm,
    use_channels_last_group_norms,
)
from facestream.detector_service.models.mogface_torch.net import MogFace
from facestream.detector_service.models.mogface_torch.weights import randomise


def test_it_normalises_as_group_norm_does_even_far_from_zero() -> None:
    generator = torch.Generator().manual_seed(0)
    norm = torch.nn.GroupNorm(16, 64)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5, generator=generator)
        norm.bias.normal_(0.0, 0.5, generator=generator)
    # activations with a mean well away from zero per channel: what E[x^2] - E[x]^2 must survive
    x = (torch.randn(3, 64, 30, 40, generator=generator) * 2.0 + 8.0).to(memory_format=torch.channels_last)
    with torch.no_grad():
        torch.testing.assert_close(ChannelsLastGroupNorm(norm)(x), norm(x), atol=1e-4, rtol=1e-4)


def test_mogface_with_it_keeps_its_state_dict_and_its_outputs() -> None:
    model = MogFace("mogface")
    randomise(model, seed=1)
    model.eval()
    keys = list(model.state_dict())
    x = torch.randn(2, 3, 64, 96, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        scores, deltas = model(x)
        use_channels_last_group_norms(model)
        assert not any(isinstance(m, torch.nn.GroupNorm) for m in model.modules())
        assert list(model.state_dict()) == keys  # builds keep weights.pt by these names
        got_scores, got_deltas = model(x.to(memory_format=torch.channels_last))
    torch.testing.assert_close(got_scores, scores, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(got_deltas, deltas, atol=1e-3, rtol=1e-4)
