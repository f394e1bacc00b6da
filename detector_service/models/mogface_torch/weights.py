"""MogFace weights: the official checkpoint, loaded strictly, or random ones for benchmarks."""

import hashlib
from pathlib import Path

import torch
from torch import nn

from facestream.assets import sha256_of
from facestream.detector_service.models.mogface_torch.net import Bottleneck, MogFace
from facestream.errors import ModelError


def load_official(model: MogFace, path: Path) -> str:
    """Load ``path`` into ``model`` with every key accounted for; return the file's sha256.

    Accepts a bare ``state_dict`` (the official release), one under a ``state_dict``/``model`` key,
    and DataParallel's ``module.`` prefix. Anything missing, extra or misshapen is refused, with
    the keys named.
    """
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a wrong or damaged file
        raise ModelError(f"cannot read checkpoint {path}: {exc}") from None
    state = _unwrap(loaded, path)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    misshapen = sorted(k for k in set(expected) & set(state) if tuple(state[k].shape) != tuple(expected[k].shape))
    if missing or extra or misshapen:
        problems = [
            f"{len(label_keys)} {label}: {', '.join(label_keys[:5])}{' ...' if len(label_keys) > 5 else ''}"
            for label, label_keys in (("missing", missing), ("unexpected", extra), ("with another shape", misshapen))
            if label_keys
        ]
        others = [v for v in ("mogface", "mogface_e") if v != model.variant.name]
        raise ModelError(
            f"{path} is not a {model.variant.name} checkpoint ({len(state)} keys, expected {len(expected)}): "
            + "; ".join(problems)
            + f". Is it the {others[0]} checkpoint (--variant {others[0]})?"
        )
    model.load_state_dict(state, strict=True)
    return sha256_of(path)


def _unwrap(loaded: object, path: Path) -> dict[str, torch.Tensor]:
    if isinstance(loaded, dict):
        for key in ("state_dict", "model"):
            if isinstance(loaded.get(key), dict):
                loaded = loaded[key]
                break
    if not isinstance(loaded, dict) or not all(isinstance(v, torch.Tensor) for v in loaded.values()):
        raise ModelError(f"{path} does not hold a state_dict (a mapping of names to tensors)")
    if loaded and all(k.startswith("module.") for k in loaded):
        loaded = {k[len("module.") :]: v for k, v in loaded.items()}
    return loaded


def randomise(model: MogFace, seed: int = 0) -> str:
    """Random weights with well-scaled activations, for benchmarks only; return a digest of them.

    Convolutions get LeCun-normal weights (variance 1/fan-in), batch norms stay the identity, and
    the last batch norm of each residual block is scaled by 1/sqrt(blocks in its stage), so the
    residual stream neither explodes nor vanishes over 100+ layers and float32 runtimes agree to
    ~1e-5. The two prediction convs start as the official training does, N(0, 0.01). Good for
    speed and for comparing runtimes; meaningless as a detector.
    """
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Conv2d):
                fan_in = module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
                module.weight.normal_(0.0, fan_in**-0.5, generator=generator)
                if module.bias is not None:
                    module.bias.zero_()
        for stage in (model.backbone.layer1, model.backbone.layer2, model.backbone.layer3, model.backbone.layer4):
            for block in stage:
                assert isinstance(block, Bottleneck)
                block.bn3.weight.fill_(len(stage) ** -0.5)
        for conv in (model.pred_net.pred_cls, model.pred_net.pred_loc):
            conv.weight.normal_(0.0, 0.01, generator=generator)
    model.eval()
    digest = hashlib.sha256()
    for key, tensor in model.state_dict().items():
        digest.update(key.encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()
