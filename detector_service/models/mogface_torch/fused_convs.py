"""Convolutions that apply their batch norm, ReLU and residual Add in the same cuDNN kernel.

Inductor (PyTorch 2.11) runs every convolution as a call into cuDNN and whatever follows it (the
batch norm, the ReLU, a bottleneck's residual Add) as a Triton kernel of its own, which reads and
writes the whole activation once more. In the profile of the PyTorch engine's module at batch 32 on
the H200 (bench/results/profile-mogface-fp16-cuda-separate-heads-b32.json) those Triton kernels took
11.8 of 66.7 ms of GPU time without this module and 6.5 of 62.1 with it. cuDNN can run a convolution with
its bias, a residual Add and the ReLU as one kernel (``torch.cudnn_convolution_relu`` and
``torch.cudnn_convolution_add_relu``), so this module folds each batch norm into its convolution's
weights and bias and calls those. It covers what MogFace runs at full resolution outside its heads:
the ResNet backbone (stem and bottlenecks) and the SSH context module. The heads' GroupNorms need
statistics of a convolution's whole output before normalising it, so they stay in Triton.

The call is registered as a PyTorch custom op with a shape rule, so ``torch.compile`` keeps it as one
call. Off the GPU (the CPU tests) the same op runs the plain convolution, Add and ReLU.
"""

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from facestream.detector_service.models.mogface_torch.net import Bottleneck, MogFace, ResNet, SSHContext

LAYOUT = "fused-convs-1"  # what the engine's builds record: the modules and names below


def _channels_last(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous(memory_format=torch.channels_last)


def _output(x: torch.Tensor, weight: torch.Tensor, stride: list[int], padding: list[int], dilation: list[int]):
    """An empty tensor of the convolution's output shape, in channels-last memory (the ops' rule)."""
    size = [x.shape[0], weight.shape[0]]
    for axis in range(2):
        reach = dilation[axis] * (weight.shape[2 + axis] - 1) + 1
        size.append((x.shape[2 + axis] + 2 * padding[axis] - reach) // stride[axis] + 1)
    return x.new_empty(size).contiguous(memory_format=torch.channels_last)


@torch.library.custom_op("facestream::conv_relu", mutates_args=())
def conv_relu(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    residual: torch.Tensor | None,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
) -> torch.Tensor:
    """relu(conv(x) + bias [+ residual]), one cuDNN kernel on the GPU."""
    if not x.is_cuda:
        out = F.conv2d(x, weight, bias, stride, padding, dilation)
        return _channels_last(F.relu(out if residual is None else out + residual))
    if residual is None:
        return _channels_last(torch.cudnn_convolution_relu(x, weight, bias, stride, padding, dilation, 1))
    fused = torch.cudnn_convolution_add_relu(x, weight, residual, 1.0, bias, stride, padding, dilation, 1)
    return _channels_last(fused)


@conv_relu.register_fake
def _conv_relu_shape(x, weight, bias, residual, stride, padding, dilation):
    return _output(x, weight, stride, padding, dilation)


class FoldedConv(nn.Module):
    """A convolution with the batch norm after it folded into its weight and bias; ``forward`` ends
    in a ReLU (with ``residual`` added before it), ``linear`` has neither."""

    def __init__(self, conv: nn.Conv2d, norm: nn.BatchNorm2d | None = None) -> None:
        super().__init__()
        if conv.groups != 1 or not isinstance(conv.padding, tuple):
            raise ValueError("only ungrouped convolutions with numeric padding fold")
        weight = conv.weight.detach()
        bias = conv.bias.detach() if conv.bias is not None else weight.new_zeros(weight.shape[0])
        if norm is not None:
            mean, variance = norm.running_mean, norm.running_var
            if mean is None or variance is None:
                raise ValueError("a batch norm without running statistics does not fold")
            scale = norm.weight.detach() / torch.sqrt(variance + norm.eps)
            weight = weight * scale[:, None, None, None]
            bias = (bias - mean) * scale + norm.bias.detach()
        self.weight = nn.Parameter(weight.clone(), requires_grad=False)
        self.bias = nn.Parameter(bias.clone(), requires_grad=False)
        self.stride, self.padding, self.dilation = list(conv.stride), list(conv.padding), list(conv.dilation)

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None, bias: torch.Tensor | None = None):
        """relu(conv(x) + residual + bias); ``bias`` replaces the folded one (a shortcut's is added in)."""
        bias = self.bias if bias is None else bias
        return torch.ops.facestream.conv_relu(x, self.weight, bias, residual, self.stride, self.padding, self.dilation)

    def linear(self, x: torch.Tensor) -> torch.Tensor:
        """conv(x) without its bias or a ReLU (a projection shortcut: its bias joins the next sum)."""
        return F.conv2d(x, self.weight, None, self.stride, self.padding, self.dilation)


class FusedBottleneck(nn.Module):
    """A ResNet bottleneck in three cuDNN calls: 1x1 + ReLU, 3x3 + ReLU, 1x1 + shortcut + ReLU. A
    projection shortcut runs without its bias, which is added to the last call's instead."""

    def __init__(self, block: Bottleneck) -> None:
        super().__init__()
        self.conv1 = FoldedConv(block.conv1, block.bn1)
        self.conv2 = FoldedConv(block.conv2, block.bn2)
        self.conv3 = FoldedConv(block.conv3, block.bn3)
        self.downsample = None
        if block.downsample is not None:
            conv, norm = block.downsample  # net.Bottleneck's (Conv2d, BatchNorm2d)
            self.downsample = FoldedConv(cast(nn.Conv2d, conv), cast(nn.BatchNorm2d, norm))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv2(self.conv1(x))
        if self.downsample is None:
            return self.conv3(out, residual=x)
        return self.conv3(out, residual=self.downsample.linear(x), bias=self.conv3.bias + self.downsample.bias)


class FusedResNet(nn.Module):
    """``net.ResNet`` with its stem and bottlenecks fused; returns the same C2..C5."""

    def __init__(self, resnet: ResNet) -> None:
        super().__init__()
        self.stem = FoldedConv(resnet.conv1, resnet.bn1)
        self.maxpool = resnet.maxpool
        self.layers = nn.ModuleList(
            nn.Sequential(*(FusedBottleneck(cast(Bottleneck, block)) for block in layer))
            for layer in (resnet.layer1, resnet.layer2, resnet.layer3, resnet.layer4)
        )

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = self.maxpool(self.stem(x))
        features = []
        for layer in self.layers:
            x = layer(x)
            features.append(x)
        return features


class FusedSSHContext(nn.Module):
    """``net.SSHContext`` with each convolution's ReLU in its cuDNN call."""

    def __init__(self, context: SSHContext) -> None:
        super().__init__()
        self.conv1, self.conv2 = FoldedConv(context.conv1), FoldedConv(context.conv2)
        self.conv2_1, self.conv2_2 = FoldedConv(context.conv2_1), FoldedConv(context.conv2_2)
        self.conv2_2_1 = FoldedConv(context.conv2_2_1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = self.conv2(x)
        return torch.cat([self.conv1(x), self.conv2_1(b), self.conv2_2_1(self.conv2_2(b))], dim=1)


@torch.no_grad()
def fuse_convolutions(model: MogFace) -> None:
    """Swap ``model``'s backbone (and its SSH context module, where it has one) for the fused forms,
    in place, batch norms folded from their running statistics (``model`` must be in eval mode)."""
    if model.training:
        raise ValueError("batch norms fold only in eval mode")
    setattr(model, "backbone", FusedResNet(model.backbone))  # noqa: B010 (another module type than declared)
    context = getattr(model.pred_net, "conv_SSH", None)
    if isinstance(context, SSHContext):
        setattr(model.pred_net, "conv_SSH", FusedSSHContext(context))  # noqa: B010
