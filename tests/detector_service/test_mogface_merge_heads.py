"""The merged prediction heads (the export default) give the numbers of the two separate ones (--separate-heads)."""

import pytest
import torch

from facestream.detector_service.models.mogface_torch.merge_heads import merge_heads
from facestream.detector_service.models.mogface_torch.net import MogFace
from facestream.detector_service.models.mogface_torch.weights import randomise


@pytest.mark.parametrize("variant", ["mogface", "mogface_e"])
def test_merged_heads_match_the_separate_ones(variant: str) -> None:
    model = MogFace(variant)
    randomise(model, seed=1)
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():  # random biases and GroupNorm affines too: the merge must keep each head's own
        for head in (model.pred_net.deep_cls_head, model.pred_net.deep_loc_head):
            for module in head.modules():
                if isinstance(module, (torch.nn.Conv2d, torch.nn.GroupNorm)):
                    module.bias.normal_(0.0, 0.1, generator=generator)
                if isinstance(module, torch.nn.GroupNorm):
                    module.weight.uniform_(0.5, 1.5, generator=generator)
    x = torch.randn(2, 3, 64, 96, generator=generator)
    with torch.no_grad():
        scores, deltas = model(x)
        merge_heads(model)
        merged_scores, merged_deltas = model(x)
    assert model.pred_net.merged is not None
    torch.testing.assert_close(merged_scores, scores, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(merged_deltas, deltas, atol=1e-4, rtol=1e-4)


def test_cli_exports_merged_heads_with_half_the_group_norms(tmp_path) -> None:
    import onnx
    from click.testing import CliRunner

    from facestream.detector_service.models.graph_rewrite import fuse_group_norm
    from facestream.tools.cli import cli

    counts = {}
    for name, extra in (("separate", ["--separate-heads"]), ("merged", [])):
        out = tmp_path / f"{name}.onnx"
        result = CliRunner().invoke(
            cli, ["export", "mogface", "--random-init", "--height", "64", "--width", "96", "--out", str(out), *extra]
        )
        assert result.exit_code == 0, result.output
        assert "self-check OK" in result.output
        counts[name] = fuse_group_norm(onnx.load(str(out)))
    # Two heads x four stages on six levels, then one head of twice the groups.
    assert counts == {"separate": 48, "merged": 24}
