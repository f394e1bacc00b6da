"""Count what a network costs: FLOPs (2 x multiply-accumulate of every convolution run) and parameters.

Normalisation, activations, upsampling and additions are not counted (they are a rounding error
next to the convolutions and are how published figures are usually stated). Only modules that
actually run count, so MogFace's unused DSFD branch and ``DeepHead.conv2..4`` cost nothing.
"""

from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class Cost:
    flops: dict[str, int] = field(default_factory=dict)  # per top-level part (backbone, fpn, pred_net)
    params_total: int = 0  # everything in the state_dict's parameters (what a checkpoint holds)
    params_used: int = 0  # parameters of the modules that run at inference

    @property
    def total_flops(self) -> int:
        return sum(self.flops.values())


def measure(model: nn.Module, height: int, width: int) -> Cost:
    """Run one (1, 3, H, W) forward pass with hooks; FLOPs are per image."""
    cost = Cost(params_total=sum(p.numel() for p in model.parameters()))
    ran: set[nn.Module] = set()
    handles = []
    for name, module in model.named_modules():
        if next(module.children(), None) is not None:
            continue  # leaves only: a parent's parameters are its leaves'
        part = name.split(".", 1)[0]

        def hook(mod: nn.Module, _inputs, output, part: str = part) -> None:
            ran.add(mod)
            if isinstance(mod, nn.Conv2d):
                macs = output.numel() * (mod.in_channels // mod.groups) * mod.kernel_size[0] * mod.kernel_size[1]
                cost.flops[part] = cost.flops.get(part, 0) + 2 * macs

        handles.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad():
            model.eval()(torch.zeros(1, 3, height, width))
    finally:
        for handle in handles:
            handle.remove()
    cost.params_used = sum(p.numel() for module in ran for p in module.parameters(recurse=False))
    return cost
