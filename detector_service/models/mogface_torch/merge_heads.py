"""MogFace's two prediction heads computed as one: the same numbers with half the GPU kernels.

``deep_cls_head`` and ``deep_loc_head`` read the same context features and have the same shape, so:

- their first convolutions become one with both sets of filters (twice the output channels);
- every later stage becomes a 2-group convolution (each head's filters see only its own channels)
  and a GroupNorm with twice the groups (each head's groups keep their channels and statistics);
- the predictors run on each head's half of the channels, as before.

The head is ~89% of MogFace's FLOPs and runs on six pyramid levels; on the small levels each
kernel is too small to fill a GPU, so fewer, wider kernels are the point. An export option
(``facestream export mogface --merge-heads``), applied after the official weights are loaded.
"""

import torch
from torch import nn

from facestream.detector_service.models.mogface_torch.net import DeepHead, MogFace


class MergedHeads(nn.Module):
    def __init__(self, cls_head: DeepHead, loc_head: DeepHead, pred_cls: nn.Conv2d, pred_loc: nn.Conv2d) -> None:
        super().__init__()
        ch = cls_head.conv1.out_channels
        self.ch = ch
        # DeepHead's quirk: conv1 serves all four stages, so one weight tensor serves both convolutions here.
        weight = torch.cat([cls_head.conv1.weight, loc_head.conv1.weight]).detach().clone()
        assert cls_head.conv1.bias is not None and loc_head.conv1.bias is not None  # made with biases
        bias = torch.cat([cls_head.conv1.bias, loc_head.conv1.bias]).detach().clone()
        self.first = nn.Conv2d(ch, 2 * ch, 3, padding=1)
        self.later = nn.Conv2d(2 * ch, 2 * ch, 3, padding=1, groups=2)
        for conv in (self.first, self.later):
            conv.weight, conv.bias = nn.Parameter(weight), nn.Parameter(bias)
        self.norms = nn.ModuleList()
        for i in range(1, 5):
            cls_gn, loc_gn = getattr(cls_head, f"gn{i}"), getattr(loc_head, f"gn{i}")
            norm = nn.GroupNorm(2 * cls_gn.num_groups, 2 * ch, eps=cls_gn.eps)
            norm.weight = nn.Parameter(torch.cat([cls_gn.weight, loc_gn.weight]).detach().clone())
            norm.bias = nn.Parameter(torch.cat([cls_gn.bias, loc_gn.bias]).detach().clone())
            self.norms.append(norm)
        self.pred_cls, self.pred_loc = pred_cls, pred_loc

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.relu(self.norms[0](self.first(x)))
        for norm in self.norms[1:]:
            y = torch.relu(norm(self.later(y)))
        cls, loc = y.split(self.ch, dim=1)
        return self.pred_cls(cls), self.pred_loc(loc)


def merge_heads(model: MogFace) -> None:
    """Make ``model`` run its prediction heads merged (after its weights are loaded or randomised)."""
    net = model.pred_net
    net.merged = MergedHeads(net.deep_cls_head, net.deep_loc_head, net.pred_cls, net.pred_loc)
