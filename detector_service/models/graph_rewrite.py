"""Rewrites of an exported graph: preprocessing moved into it, and fusions for the CUDA provider.

``embed_preprocessing`` gives every model a uint8 NHWC BGR input (what letterboxing produces) and
does the cast, normalisation, channel order and layout change inside the graph: the host copies a
quarter of the bytes and does no per-pixel work; the device does it.

PyTorch exports ``GroupNorm`` as Reshape -> InstanceNormalization -> Reshape -> Mul -> Add. On the
CUDA provider with NHWC convolutions every such group costs layout transposes and five passes over
the tensor; MogFace's heads hold 48 of them on its largest feature maps. ONNX Runtime's fused
``com.microsoft.GroupNorm`` (NHWC, one pass) computes the same thing. The rewrite runs in memory when
a CUDA session is built, so the file itself stays portable (the CPU provider lacks that op).
"""

from typing import Any

import numpy as np

MS_DOMAIN = "com.microsoft"
IMAGE_INPUT = "image"  # the uint8 (N, H, W, 3) BGR input every engine graph takes
TOPK_OPSET = 13  # int64 Min, GatherND with batch_dims, Unsqueeze with axes as an input


def embed_preprocessing(model, transform) -> None:
    """Put ``transform`` (a models.base.InputTransform) in front of the graph's one float input."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    old = graph.input[0]
    dims = old.type.tensor_type.shape.dim
    # Free sizes get fixed names, which a GPU session pins per bucket (runtime.open_session).
    height = dims[1 if transform.uint8_nhwc else 2].dim_value or "height"
    width = dims[2 if transform.uint8_nhwc else 3].dim_value or "width"
    image = helper.make_tensor_value_info(IMAGE_INPUT, TensorProto.UINT8, ["batch", height, width, 3])
    order = [2, 1, 0] if transform.to_rgb else [0, 1, 2]
    if transform.uint8_nhwc:
        _reorder_channels(graph, old, image, order)
        return
    # Channel order folds into the constants: (x[:, order] - mean[order]) * scale[order].
    mean = np.asarray(transform.mean_bgr, dtype=np.float32)[order].reshape(1, 3, 1, 1)
    scale = np.asarray(transform.scale_bgr, dtype=np.float32)[order].reshape(1, 3, 1, 1)
    # Transpose while the pixels are still one byte each; skip the steps that would change nothing.
    nodes = [
        helper.make_node("Transpose", [IMAGE_INPUT], ["pre_nchw"], perm=[0, 3, 1, 2], name="pre_nchw"),
        helper.make_node("Cast", ["pre_nchw"], ["pre_float"], to=TensorProto.FLOAT, name="pre_cast"),
    ]
    steps: list[tuple[str, np.ndarray, bool]] = [
        ("Gather", np.asarray(order, dtype=np.int64), transform.to_rgb),
        ("Sub", mean, bool(np.any(mean != 0))),
        ("Mul", scale, bool(np.any(scale != 1))),
    ]
    value = "pre_float"
    for op, constant, needed in steps:
        if needed:
            graph.initializer.append(numpy_helper.from_array(constant, f"pre_{op.lower()}_const"))
            extra: dict[str, Any] = {"axis": 1} if op == "Gather" else {}
            nodes.append(
                helper.make_node(
                    op, [value, f"pre_{op.lower()}_const"], [f"pre_{op.lower()}"], name=f"pre_{op.lower()}", **extra
                )
            )
            value = f"pre_{op.lower()}"
    nodes.append(helper.make_node("Identity", [value], [old.name], name="pre_out"))
    existing = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes + existing)
    graph.input.remove(old)
    graph.input.insert(0, image)


def _reorder_channels(graph, old, image, order: list[int]) -> None:
    """The uint8 image straight in, its channels gathered into ``order`` (skipped when unchanged)."""
    from onnx import helper, numpy_helper

    if order == [0, 1, 2]:
        node = helper.make_node("Identity", [IMAGE_INPUT], [old.name], name="pre_out")
    else:
        graph.initializer.append(numpy_helper.from_array(np.asarray(order, dtype=np.int64), "pre_gather_const"))
        node = helper.make_node("Gather", [IMAGE_INPUT, "pre_gather_const"], [old.name], axis=3, name="pre_gather")
    existing = list(graph.node)
    del graph.node[:]
    graph.node.extend([node, *existing])
    graph.input.remove(old)
    graph.input.insert(0, image)


def fuse_group_norm(model) -> int:
    """Replace every exported GroupNorm pattern by the fused contrib op; return how many were replaced."""
    from onnx import helper, numpy_helper

    graph = model.graph
    consts = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    for node in graph.node:  # in graph order, so an Identity sees its source first
        if node.op_type == "Constant":
            consts[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
        elif node.op_type == "Identity" and node.input[0] in consts:  # shared weights, re-exported
            consts[node.output[0]] = consts[node.input[0]]
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def only_consumer(name: str, op_type: str):
        users = consumers.get(name, [])
        return users[0] if len(users) == 1 and users[0].op_type == op_type else None

    removed, added, count = set(), [], 0
    for norm in [n for n in graph.node if n.op_type == "InstanceNormalization"]:
        pre = producer.get(norm.input[0])
        if pre is None or pre.op_type != "Reshape" or pre.input[1] not in consts:
            continue
        shape = consts[pre.input[1]]
        scale, bias = consts.get(norm.input[1]), consts.get(norm.input[2])
        if shape.tolist()[0] != 0 or len(shape) != 3 or scale is None or bias is None:
            continue
        if not (np.all(scale == 1) and np.all(bias == 0)):
            continue  # an InstanceNorm with its own affine part is not a plain GroupNorm
        post = only_consumer(norm.output[0], "Reshape")
        mul = post and only_consumer(post.output[0], "Mul")
        add = mul and only_consumer(mul.output[0], "Add")
        if add is None or mul.input[1] not in consts or add.input[1] not in consts:
            continue
        # The contrib op takes float32 gamma and beta, also in a float16 graph.
        gamma = consts[mul.input[1]].reshape(-1).astype(np.float32)
        beta = consts[add.input[1]].reshape(-1).astype(np.float32)
        x, y, tag = pre.input[0], add.output[0], f"fused_gn_{count}"
        epsilon = next((a.f for a in norm.attribute if a.name == "epsilon"), 1e-5)
        graph.initializer.extend(
            [numpy_helper.from_array(gamma, f"{tag}_gamma"), numpy_helper.from_array(beta, f"{tag}_beta")]
        )
        added += [
            helper.make_node("Transpose", [x], [f"{tag}_nhwc"], perm=[0, 2, 3, 1], name=f"{tag}_to_nhwc"),
            helper.make_node(
                "GroupNorm",
                [f"{tag}_nhwc", f"{tag}_gamma", f"{tag}_beta"],
                [f"{tag}_out"],
                name=tag,
                domain=MS_DOMAIN,
                epsilon=epsilon,
                groups=int(shape[1]),
                activation=0,
                channels_last=1,
            ),
            helper.make_node("Transpose", [f"{tag}_out"], [y], perm=[0, 3, 1, 2], name=f"{tag}_to_nchw"),
        ]
        removed |= {id(pre), id(norm), id(post), id(mul), id(add)}
        shape_of = producer.get(post.input[1])
        if shape_of is not None and shape_of.op_type == "Shape" and len(consumers[shape_of.output[0]]) == 1:
            removed.add(id(shape_of))
        count += 1
    if count:
        kept = [n for n in graph.node if id(n) not in removed]
        used = {name for n in kept + added for name in n.input} | {o.name for o in graph.output}
        kept = [n for n in kept if n.op_type != "Constant" or n.output[0] in used]  # the patterns' shapes
        del graph.node[:]
        graph.node.extend(_topological(kept + added))
        if not any(op.domain == MS_DOMAIN for op in model.opset_import):
            model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    return count


def _topological(nodes: list) -> list:
    """Order nodes so each comes after the producers of its inputs (ONNX requires it)."""
    produced_by = {out: i for i, node in enumerate(nodes) for out in node.output}
    order, state = [], {}

    def visit(i: int) -> None:
        stack = [(i, False)]
        while stack:
            index, done = stack.pop()
            if done:
                state[index] = 2
                order.append(nodes[index])
                continue
            if state.get(index):
                continue
            state[index] = 1
            stack.append((index, True))
            for name in nodes[index].input:
                dep = produced_by.get(name)
                if dep is not None and not state.get(dep):
                    stack.append((dep, False))

    for i in range(len(nodes)):
        if not state.get(i):
            visit(i)
    return order


def _require_opset(model, version: int) -> None:
    """Convert ``model`` in place to ONNX opset ``version`` if it is older (e.g. YuNet's opset 11)."""
    from onnx import version_converter

    current = next((op.version for op in model.opset_import if op.domain in ("", "ai.onnx")), version)
    if current < version:
        model.CopyFrom(version_converter.convert_version(model, version))


def keep_top_k(model, score: str, carried: list[str], k: int, index_name: str) -> None:
    """Make the graph return only its ``k`` best candidates per image (fewer if it has fewer).

    ``score`` (N, A, 1) becomes (N, K), each output in ``carried`` (N, A, C) becomes (N, K, C) with the
    same rows, and ``index_name`` (N, K) says which of the A candidates each row is. Only these cross
    back to the host instead of every candidate; the official code also keeps the top 5000 first.
    """
    from onnx import TensorProto, helper, numpy_helper

    _require_opset(model, TOPK_OPSET)
    graph = model.graph
    producers = {out: node for node in graph.node for out in node.output}
    for name in [score, *carried]:  # the original tensors become internal, under new names
        node = producers[name]
        node.output[list(node.output).index(name)] = f"{name}_all"
    graph.initializer.extend(
        [
            numpy_helper.from_array(np.array([0, -1], dtype=np.int64), "topk_flat"),
            numpy_helper.from_array(np.array([k], dtype=np.int64), "topk_k"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "topk_axis1"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "topk_last"),
        ]
    )
    nodes = [
        helper.make_node("Reshape", [f"{score}_all", "topk_flat"], ["topk_scores_2d"], name="topk_flatten"),
        helper.make_node("Shape", ["topk_scores_2d"], ["topk_shape"], name="topk_shape"),
        helper.make_node("Gather", ["topk_shape", "topk_axis1"], ["topk_count"], axis=0, name="topk_count"),
        helper.make_node("Min", ["topk_count", "topk_k"], ["topk_kept"], name="topk_kept"),
        helper.make_node(
            "TopK", ["topk_scores_2d", "topk_kept"], [score, index_name], axis=1, largest=1, sorted=1, name="topk"
        ),
        helper.make_node("Unsqueeze", [index_name, "topk_last"], ["topk_index_3d"], name="topk_index_3d"),
    ]
    for name in carried:
        nodes.append(
            helper.make_node(
                "GatherND", [f"{name}_all", "topk_index_3d"], [name], batch_dims=1, name=f"topk_gather_{name}"
            )
        )
    graph.node.extend(nodes)
    outputs = {o.name: o for o in graph.output}
    kept = [helper.make_tensor_value_info(score, TensorProto.FLOAT, ["batch", "kept"])]
    for name in carried:
        channels = outputs[name].type.tensor_type.shape.dim[2].dim_value or None
        kept.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", "kept", channels]))
    kept.append(helper.make_tensor_value_info(index_name, TensorProto.INT64, ["batch", "kept"]))
    del graph.output[:]
    graph.output.extend(kept)
