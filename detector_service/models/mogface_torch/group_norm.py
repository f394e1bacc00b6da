"""GroupNorm written for channels-last memory, for the PyTorch engine.

MogFace's heads run 48 GroupNorms per image (four per head, two heads, six levels). With the network
in channels-last memory, Inductor (PyTorch 2.11) lowers each to kernels that reduce group by group
(their names say they also copy the activations: ``clone``); in the committed profile of
``torch.compile`` at batch 16 on the H200 (bench/results/profile-mogface-fp16-cuda-separate-heads.json)
those kernels took about 30% of the GPU time, where ONNX Runtime's fused GroupNorm took 9% of its.
Written as sums over the picture per channel (a reduction whose reads stay side by side in
channels-last memory), then per group, then one scale and shift per channel, the statistics need no
copy and the normalisation can fold into the ReLU after it. The numbers are GroupNorm's, computed in
float32 (the variance as E[x^2] - E[x]^2).
"""

import torch
from torch import nn


class ChannelsLastGroupNorm(nn.Module):
    """``nn.GroupNorm``'s numbers, with the same parameters (so the same state-dict keys)."""

    def __init__(self, norm: nn.GroupNorm) -> None:
        super().__init__()
        self.num_groups, self.eps = norm.num_groups, norm.eps
        self.weight, self.bias = norm.weight, norm.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        per_group, count = c // self.num_groups, c // self.num_groups * h * w
        values = x.float()

        def group_means(per_channel: torch.Tensor) -> torch.Tensor:
            return per_channel.view(n, self.num_groups, per_group).sum(dim=2) / count

        mean = group_means(values.sum(dim=(2, 3)))
        variance = (group_means((values * values).sum(dim=(2, 3))) - mean * mean).clamp_min(0.0)
        scale = torch.rsqrt(variance + self.eps).repeat_interleave(per_group, dim=1) * self.weight.float()
        shift = self.bias.float() - mean.repeat_interleave(per_group, dim=1) * scale
        return (values * scale[:, :, None, None] + shift[:, :, None, None]).to(x.dtype)


def use_channels_last_group_norms(model: nn.Module) -> None:
    """Replace every ``nn.GroupNorm`` inside ``model`` by its channels-last form, in place."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.GroupNorm):
                setattr(parent, name, ChannelsLastGroupNorm(child))
