"""MoveNet MultiPose's decoding of people, rewritten so that one run takes a batch of images.

The converted graph ends in TensorFlow's own decoding, written for one image (its shape arithmetic
fixes the batch at 1): the six heads at a quarter of the input's size (person centres, keypoint
heatmaps, keypoint offsets from each centre, sub-pixel keypoint offsets, box sizes and box
offsets) become six people of 17 keypoints each. One image per run left the GPU idle between runs
(about 700 frames/s whatever the batch). ``batch_decoding`` cuts the graph at the heads and appends
the same arithmetic for N images, operation for operation in the original's order, so that each
image's output equals what the original graph gives it alone:

1. Person centres: local maxima of the centre heatmap (equal to their 5x5 neighbourhood's maximum),
   the six best per image.
2. Per centre: its box (centre plus offset, plus and minus half the predicted size, clipped to the
   map) and a first guess of each keypoint (the centre plus the regressed displacement).
3. Per keypoint: the heatmap weighted by a Gaussian around that guess (sigma from the map's shorter
   side) and zeroed outside the person's box; its best cell plus the sub-pixel offset there is the
   keypoint, and the largest weighted value any person has at that cell is its score.
4. A person's score: its centre's score times the mean score of its keypoints over 0.127.

Coordinates come out in [0, 1] of the input, (y, x) as the original's: (N, 6, 56) per image.
"""

import numpy as np

PEOPLE = 6
KEYPOINTS = 17
STRIDE = 4  # the heads' cells are 4x4 input pixels
POOL = 5  # a centre is a maximum of its 5x5 neighbourhood
PEAK_TOLERANCE = 1.0132789611816406e-06  # the original's test for "equals its neighbourhood's maximum"
SIGMA_PER_SIDE = 0.300048828125  # the Gaussian's scale, per cell of the map's shorter side
KEYPOINT_FLOOR = 0.126953125  # keypoints over this score count towards their person's score
OUTPUT = "people"
# Where each head starts in the converted graph's tensor names (TensorFlow's layer names).
HEADS = ("kpt_heatmap", "center", "kpt_regress", "kpt_offset", "box_scale", "box_offset")


class _Builder:
    """Appends nodes with generated names, one output each unless asked for more."""

    def __init__(self, graph) -> None:
        self.graph = graph
        self._count = 0

    def _name(self) -> str:
        self._count += 1
        return f"{OUTPUT}_{self._count}"

    def const(self, value, dtype) -> str:
        from onnx import numpy_helper

        name = self._name()
        self.graph.initializer.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, *inputs: str, outputs: int = 1, **attrs):
        from onnx import helper

        names = [self._name() for _ in range(outputs)]
        self.graph.node.append(helper.make_node(op_type, list(inputs), names, name=names[0], **attrs))
        return names[0] if outputs == 1 else names


def find_heads(model) -> dict[str, str]:
    """The six head tensors by role (a key of HEADS), found by the layer names they start with."""
    found: dict[str, str] = {}
    for node in model.graph.node:
        if node.op_type != "Conv":
            continue
        for role in HEADS:
            if node.output[0].startswith(f"{role}_"):
                found[role] = node.output[0]
    missing = [role for role in HEADS if role not in found]
    if missing:
        raise ValueError(f"not a MoveNet MultiPose graph: no head for {', '.join(missing)}")
    return found


def batch_decoding(model) -> None:
    """Replace the graph's decoding with ``_decode`` for a batch; the output is ``OUTPUT``. A graph this
    has already rewritten is rewritten again to the same (a float16 copy carries the rewrite)."""
    from onnx import TensorProto, helper

    heads = find_heads(model)
    graph = model.graph
    _keep_only_ancestors(graph, set(heads.values()))
    del graph.value_info[:]  # shapes inferred with a batch of 1
    del graph.output[:]
    builder = _Builder(graph)
    # The decoding runs in float32 whatever the network's precision (a float16 copy's heads are float16;
    # for float32 heads ONNX Runtime drops the cast).
    _decode(builder, {role: builder.op("Cast", head, to=TensorProto.FLOAT) for role, head in heads.items()})
    graph.output.append(helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", PEOPLE, 56]))


def _keep_only_ancestors(graph, targets: set[str]) -> None:
    """Drop every node (and initializer) that the ``targets`` do not depend on."""
    producers = {out: node for node in graph.node for out in node.output}
    needed, stack = set(), list(targets)
    while stack:
        node = producers.get(stack.pop())
        if node is None or id(node) in needed:
            continue
        needed.add(id(node))
        stack.extend(node.input)
    kept = [node for node in graph.node if id(node) in needed]
    del graph.node[:]
    graph.node.extend(kept)
    used = {name for node in kept for name in node.input}
    initializers = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(initializers)


def _decode(b: _Builder, heads: dict[str, str]) -> None:
    from onnx import TensorProto

    f32, i64 = np.float32, np.int64

    def cast(value: str, to: int = TensorProto.FLOAT) -> str:
        return b.op("Cast", value, to=to)

    def part(value: str, index: int, axis: int) -> str:  # one slice of ``axis``, the axis dropped
        return b.op("Gather", value, b.const(index, i64), axis=axis)

    def reshape(value: str, shape) -> str:
        return b.op("Reshape", value, b.const(shape, i64))

    def nhwc(head: str, channels: int) -> str:  # (N*h*w, channels): a row per cell, images one after another
        return reshape(b.op("Transpose", head, perm=[0, 2, 3, 1]), [-1, channels])

    # Sizes: n images, maps of h x w cells.
    shape = b.op("Shape", heads["center"])
    n, h, w = (b.op("Gather", shape, b.const([axis], i64), axis=0) for axis in (0, 2, 3))
    cells = b.op("Mul", h, w)
    hf, wf = cast(h), cast(w)

    def count_up(limit: str) -> str:  # 0, 1, ..., limit - 1 (int64: ORT's optimiser mistypes a float Range here)
        return b.op("Range", b.const(0, i64), b.op("Squeeze", limit), b.const(1, i64))

    rows, cols = cast(count_up(h)), cast(count_up(w))
    first_cell = b.op(
        "Mul", reshape(b.op("Range", b.const(0, i64), b.op("Squeeze", n), b.const(1, i64)), [-1, 1]), cells
    )

    # 1. The six best local maxima of each image's centre heatmap.
    center = b.op("Sigmoid", heads["center"])
    pooled = b.op("MaxPool", center, kernel_shape=[POOL, POOL], strides=[1, 1], auto_pad="SAME_UPPER")
    peak = b.op("Less", b.op("Abs", b.op("Sub", center, pooled)), b.const(PEAK_TOLERANCE, f32))
    peaks = reshape(b.op("Where", peak, center, b.const(0.0, f32)), [0, -1])
    best, index = b.op("TopK", peaks, b.const([PEOPLE], i64), axis=-1, largest=1, sorted=1, outputs=2)
    y = b.op("Div", index, w)
    x = b.op("Sub", index, b.op("Mul", y, w))
    yf, xf = cast(y), cast(x)
    at_centre = b.op("Add", index, first_cell)  # (N, 6) rows of the nhwc tables

    def at(head: str, channels: int) -> str:
        return b.op("Gather", nhwc(heads[head], channels), at_centre, axis=0)

    # 2. Boxes and first guesses of the keypoints, in cells.
    regressed = reshape(at("kpt_regress", 2 * KEYPOINTS), [0, PEOPLE, KEYPOINTS, 2])
    guess_y = b.op("Add", b.op("Unsqueeze", yf, b.const([-1], i64)), part(regressed, 0, 3))
    guess_x = b.op("Add", b.op("Unsqueeze", xf, b.const([-1], i64)), part(regressed, 1, 3))
    offset = at("box_offset", 2)
    centre_y, centre_x = b.op("Add", yf, part(offset, 0, 2)), b.op("Add", xf, part(offset, 1, 2))
    size = b.op("Relu", at("box_scale", 2))
    half_h, half_w = (b.op("Mul", part(size, i, 2), b.const(0.5, f32)) for i in (0, 1))

    def edge(centre: str, half: str, op: str, limit: str) -> str:
        return b.op("Relu", b.op("Min", b.op(op, centre, half), limit))

    y0, x0 = edge(centre_y, half_h, "Sub", hf), edge(centre_x, half_w, "Sub", wf)
    y1, x1 = edge(centre_y, half_h, "Add", hf), edge(centre_x, half_w, "Add", wf)
    last = b.const([-1], i64)
    box = b.op("Concat", *(b.op("Unsqueeze", v, last) for v in (y0, x0, y1, x1)), axis=-1)
    h4, w4 = b.op("Mul", h, b.const([STRIDE], i64)), b.op("Mul", w, b.const([STRIDE], i64))
    input_size = cast(b.op("Concat", h4, w4, h4, w4, axis=0))
    box = b.op(
        "Relu", b.op("Min", b.op("Div", b.op("Mul", box, b.const(float(STRIDE), f32)), input_size), b.const(1.0, f32))
    )

    # 3. Keypoints: the heatmap weighted around each guess, inside each box.
    ys, xs = reshape(rows, [1, -1, 1, 1]), reshape(cols, [1, 1, -1, 1])
    around = b.const([1, 2], i64)

    def per_person(value: str) -> str:  # (N, 6) -> (N, 1, 1, 6)
        return b.op("Unsqueeze", value, around)

    inside_x = b.op("And", b.op("GreaterOrEqual", xs, per_person(x0)), b.op("Less", xs, per_person(x1)))
    inside_y = b.op("And", b.op("GreaterOrEqual", ys, per_person(y0)), b.op("Less", ys, per_person(y1)))
    inside = b.op("Unsqueeze", cast(b.op("And", inside_y, inside_x)), last)  # (N, h, w, 6, 1)
    ys5, xs5 = reshape(rows, [1, -1, 1, 1, 1]), reshape(cols, [1, 1, -1, 1, 1])
    dy = b.op("Sub", ys5, b.op("Unsqueeze", guess_y, around))
    dx = b.op("Sub", xs5, b.op("Unsqueeze", guess_x, around))
    distance = b.op("Add", b.op("Mul", dy, dy), b.op("Mul", dx, dx))
    sigma = b.op("Mul", cast(b.op("Min", h, w)), b.const(SIGMA_PER_SIDE, f32))
    gauss = b.op("Exp", b.op("Div", b.op("Mul", distance, b.const(-1.0, f32)), sigma))
    heat = b.op(
        "Unsqueeze", b.op("Transpose", b.op("Sigmoid", heads["kpt_heatmap"]), perm=[0, 2, 3, 1]), b.const([3], i64)
    )
    weighted = b.op("Mul", b.op("Mul", heat, gauss), inside)  # (N, h, w, 6, 17)
    cell = b.op("ArgMax", reshape(weighted, [0, -1, PEOPLE * KEYPOINTS]), axis=1, keepdims=0)  # (N, 102)
    cell_y = b.op("Div", cell, w)
    cell_x = b.op("Sub", cell, b.op("Mul", cell_y, w))
    which = b.const(np.tile(np.arange(KEYPOINTS), PEOPLE), i64)
    at_keypoint = b.op("Add", b.op("Mul", b.op("Add", cell, first_cell), b.const(KEYPOINTS, i64)), which)
    fine = b.op(
        "Gather", reshape(b.op("Transpose", heads["kpt_offset"], perm=[0, 2, 3, 1]), [-1, 2]), at_keypoint, axis=0
    )
    point_y = b.op(
        "Mul", b.op("Add", part(fine, 0, 2), cast(cell_y)), b.op("Div", b.const(float(STRIDE), f32), cast(h4))
    )
    point_x = b.op(
        "Mul", b.op("Add", part(fine, 1, 2), cast(cell_x)), b.op("Div", b.const(float(STRIDE), f32), cast(w4))
    )
    strongest = b.op("ReduceMax", weighted, axes=[3], keepdims=0)  # (N, h, w, 17): over every person
    score = b.op("Gather", reshape(strongest, [-1]), at_keypoint, axis=0)

    # 4. People's scores, and the output rows.
    scores = reshape(score, [0, PEOPLE, KEYPOINTS])
    counted = cast(b.op("Greater", scores, b.const(KEYPOINT_FLOOR, f32)))
    count = b.op("Max", b.op("ReduceSum", counted, last, keepdims=0), b.const(1.0, f32))
    weighted_sum = b.op(
        "ReduceSum", b.op("Mul", b.op("Unsqueeze", best, last), b.op("Mul", counted, scores)), last, keepdims=0
    )
    person = b.op("Mul", b.op("Div", b.const(1.0, f32), count), weighted_sum)
    keypoints = reshape(
        b.op("Concat", *(reshape(v, [0, PEOPLE, KEYPOINTS, 1]) for v in (point_y, point_x, score)), axis=3),
        [0, PEOPLE, 3 * KEYPOINTS],
    )
    b.graph.node.append(_concat_output(keypoints, box, b.op("Unsqueeze", person, last)))


def _concat_output(*parts: str):
    from onnx import helper

    return helper.make_node("Concat", list(parts), [OUTPUT], name=OUTPUT, axis=-1)
