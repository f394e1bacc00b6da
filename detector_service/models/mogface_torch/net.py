"""MogFace in PyTorch, built so that the official checkpoints load with ``strict=True``.

Module names follow the official release key for key (``backbone.``, ``fpn.``, ``pred_net.``); the
architecture facts are in docs/mogface.md. Two things are reproduced on purpose:

- the DSFD branch (``fpn.dsfd_modules``, ``pred_net.dsfd_*``) exists so its keys load, but is not
  run: the official evaluation computes and then discards it;
- ``DeepHead`` applies ``conv1`` four times and never uses ``conv2..conv4`` (the official forward
  pass does this; the released weights were trained with it).

Only the export tools and the PyTorch engine import this module (PyTorch is an extra, never a CPU
service's need).
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class Variant:
    name: str
    blocks: tuple[int, int, int, int]  # bottlenecks per ResNet stage
    context: str  # "ssh" or "cpm"
    head_ch: int  # DeepHead width


VARIANTS = {
    "mogface": Variant("mogface", (3, 4, 23, 3), "ssh", 512),  # ResNet-101, the "large" model
    "mogface_e": Variant("mogface_e", (3, 4, 36, 3), "cpm", 256),  # "ResNet-152" with 4 blocks in stage 2
}


# -- backbone: torchvision-v1.5 ResNet (stride on the 3x3), returning C2..C5 --------------------


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_ch: int, width: int, stride: int = 1) -> None:
        super().__init__()
        out_ch = width * self.expansion
        self.conv1 = nn.Conv2d(in_ch, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_ch, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_ch)
        self.downsample = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), nn.BatchNorm2d(out_ch)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        return F.relu(out + shortcut)


class ResNet(nn.Module):
    # Made by name in __init__ (the checkpoint's keys); declared here for type checkers.
    layer1: nn.Sequential
    layer2: nn.Sequential
    layer3: nn.Sequential
    layer4: nn.Sequential

    def __init__(self, blocks: tuple[int, int, int, int]) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        in_ch = 64
        for index, (count, width) in enumerate(zip(blocks, (64, 128, 256, 512))):
            stride = 1 if index == 0 else 2
            layers = [Bottleneck(in_ch, width, stride)]
            in_ch = width * Bottleneck.expansion
            layers += [Bottleneck(in_ch, width) for _ in range(count - 1)]
            setattr(self, f"layer{index + 1}", nn.Sequential(*layers))

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        c2 = self.layer1(x)
        c3 = self.layer2(c2)
        c4 = self.layer3(c3)
        c5 = self.layer4(c4)
        return [c2, c3, c4, c5]


# -- neck: LFPN -----------------------------------------------------------------------------


def _conv_bn_relu_down(in_ch: int, mid_ch: int, out_ch: int) -> nn.Sequential:
    """1x1 -> BN -> ReLU -> 3x3 stride 2 -> BN -> ReLU (Sequential indices 0, 1, 3, 4 hold weights)."""
    return nn.Sequential(
        nn.Conv2d(in_ch, mid_ch, 1),
        nn.BatchNorm2d(mid_ch),
        nn.ReLU(),
        nn.Conv2d(mid_ch, out_ch, 3, stride=2, padding=1),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(),
    )


class FeatureFusion(nn.Module):
    """Top-down step: 1x1 lateral on the lower level + bilinear x2 of the upper, cropped to fit."""

    def __init__(self, lower_ch: int, out_ch: int = 256) -> None:
        super().__init__()
        self.main_conv = nn.Conv2d(lower_ch, out_ch, 1)

    def forward(self, upper: torch.Tensor, lower: torch.Tensor) -> torch.Tensor:
        lateral = self.main_conv(lower)
        up = F.interpolate(upper, scale_factor=2.0, mode="bilinear", align_corners=False)
        return up[:, :, : lateral.shape[2], : lateral.shape[3]] + lateral


class LFPN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        # DSFD branch: loaded, never run (see module docstring).
        self.dsfd_modules = nn.ModuleList(nn.Conv2d(ch, 256, 3, padding=1) for ch in (256, 512, 1024, 2048, 256, 256))
        self.c6 = _conv_bn_relu_down(2048, 512, 512)
        self.c7 = _conv_bn_relu_down(512, 128, 256)
        self.p2_lat = nn.Conv2d(256, 256, 3, padding=1)
        self.p3_lat = nn.Conv2d(256, 256, 3, padding=1)
        self.p4_lat = nn.Conv2d(256, 256, 3, padding=1)
        self.c5_lat = nn.Conv2d(2048, 256, 3, padding=1)
        self.c6_lat = nn.Conv2d(512, 256, 3, padding=1)
        self.c7_lat = nn.Conv2d(256, 256, 3, padding=1)
        self.ff_c5_c4 = FeatureFusion(1024)
        self.ff_c4_c3 = FeatureFusion(512)
        self.ff_c3_c2 = FeatureFusion(256)

    def forward(self, features: list[torch.Tensor]) -> list[torch.Tensor]:
        c2, c3, c4, c5 = features
        c6 = self.c6(c5)
        c7 = self.c7(c6)
        p5 = self.c5_lat(c5)
        p4 = self.ff_c5_c4(p5, c4)
        p3 = self.ff_c4_c3(p4, c3)
        p2 = self.ff_c3_c2(p3, c2)
        return [self.p2_lat(p2), self.p3_lat(p3), self.p4_lat(p4), p5, self.c6_lat(c6), self.c7_lat(c7)]


# -- context modules and head ---------------------------------------------------------------


class SSHContext(nn.Module):
    """mogface: 3x3 -> half, and a dilated branch split into two quarter-width paths; concat, ReLU."""

    def __init__(self, in_ch: int, out_ch: int) -> None:
        super().__init__()
        half = out_ch // 2
        self.conv1 = nn.Conv2d(in_ch, half, 3, padding=1)
        self.conv2 = nn.Conv2d(in_ch, half // 2, 3, padding=2, dilation=2)
        self.conv2_1 = nn.Conv2d(half // 2, half // 2, 3, padding=1)
        self.conv2_2 = nn.Conv2d(half // 2, half // 2, 3, padding=2, dilation=2)
        self.conv2_2_1 = nn.Conv2d(half // 2, half // 2, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = F.relu(self.conv1(x))
        b = F.relu(self.conv2(x))
        b1 = F.relu(self.conv2_1(b))
        b2 = F.relu(self.conv2_2_1(F.relu(self.conv2_2(b))))
        return torch.cat([a, b1, b2], dim=1)


class ConvBN(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, kernel: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, kernel, padding=kernel // 2)
        self.bn1 = nn.BatchNorm2d(out_ch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn1(self.conv1(x))


class CPM(nn.Module):
    """mogface_e: residual 1x1 / 1x1-3x3-1x1 block at 512, then SSH-style 128 + 64 + 64 = 256."""

    def __init__(self, in_ch: int) -> None:
        super().__init__()
        self.branch1 = ConvBN(in_ch, 512, 1)
        self.branch2a = ConvBN(in_ch, 128, 1)
        self.branch2b = ConvBN(128, 128, 3)
        self.branch2c = ConvBN(128, 512, 1)
        self.ssh_1 = nn.Conv2d(512, 128, 3, padding=1)
        self.ssh_dimred = nn.Conv2d(512, 64, 3, padding=1)
        self.ssh_2 = nn.Conv2d(64, 64, 3, padding=1)
        self.ssh_3a = nn.Conv2d(64, 64, 3, padding=1)
        self.ssh_3b = nn.Conv2d(64, 64, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        residual = self.branch1(x)
        y = self.branch2c(F.relu(self.branch2b(F.relu(self.branch2a(x)))))
        combined = F.relu(y + residual)
        reduced = F.relu(self.ssh_dimred(combined))
        out = torch.cat([self.ssh_1(combined), self.ssh_2(reduced), self.ssh_3b(F.relu(self.ssh_3a(reduced)))], dim=1)
        return F.relu(out)


class DeepHead(nn.Module):
    """Four 3x3 conv + GroupNorm(16) + ReLU stages, all through ``conv1`` (the official quirk)."""

    # Made by name in __init__ (the checkpoint's keys); declared here for type checkers.
    conv1: nn.Conv2d
    gn1: nn.GroupNorm
    gn2: nn.GroupNorm
    gn3: nn.GroupNorm
    gn4: nn.GroupNorm

    def __init__(self, ch: int) -> None:
        super().__init__()
        for i in range(1, 5):
            setattr(self, f"conv{i}", nn.Conv2d(ch, ch, 3, padding=1))  # conv2..4: loaded, unused
            setattr(self, f"gn{i}", nn.GroupNorm(16, ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for gn in (self.gn1, self.gn2, self.gn3, self.gn4):
            x = F.relu(gn(self.conv1(x)))
        return x


class PredNet(nn.Module):
    def __init__(self, variant: Variant) -> None:
        super().__init__()
        ch = variant.head_ch
        self.dsfd_loc = nn.Conv2d(256, 4, 3, padding=1)  # DSFD branch: loaded, never run
        self.dsfd_conf = nn.Conv2d(256, 1, 3, padding=1)
        if variant.context == "ssh":
            self.conv_SSH = SSHContext(256, ch)
        else:
            self.conv_CPM = CPM(256)
        self.deep_cls_head = DeepHead(ch)
        self.deep_loc_head = DeepHead(ch)
        self.pred_cls = nn.Conv2d(ch, 1, 3, padding=1)
        self.pred_loc = nn.Conv2d(ch, 4, 3, padding=1)
        self._context_name = "conv_SSH" if variant.context == "ssh" else "conv_CPM"
        self.merged: nn.Module | None = None  # both heads as one (merge_heads.py), set for export only

    def forward(self, levels: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        scores, deltas = [], []
        context = getattr(self, self._context_name)
        for x in levels:  # one context module and one head, shared by all six levels
            x = context(x)
            if self.merged is None:
                cls, loc = self.pred_cls(self.deep_cls_head(x)), self.pred_loc(self.deep_loc_head(x))
            else:
                cls, loc = self.merged(x)
            scores.append(cls.flatten(2))
            deltas.append(loc.flatten(2))
        # (N, C, H*W) per level -> (N, anchors, C), anchors ordered by level, then row-major.
        return torch.cat(scores, dim=2).transpose(1, 2).sigmoid(), torch.cat(deltas, dim=2).transpose(1, 2)


class MogFace(nn.Module):
    """Input: (N, 3, H, W) RGB, normalised as docs/mogface.md says. Output: scores (N, A, 1), deltas (N, A, 4)."""

    def __init__(self, variant: str = "mogface") -> None:
        super().__init__()
        self.variant = VARIANTS[variant]
        self.backbone = ResNet(self.variant.blocks)
        self.fpn = LFPN()
        self.pred_net = PredNet(self.variant)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.pred_net(self.fpn(self.backbone(x)))
