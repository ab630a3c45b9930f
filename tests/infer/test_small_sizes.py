"""At the small end of a dynamic dim, shape subgraphs can produce empty or negative spans:
PyTorch's ``unfold`` (``aten::im2col``) exported by OpenVINO's PyTorch frontend counts the
blocks of a row as ``Range(0, W + 2p - d(k-1) - 1, stride)``, and an image narrower than the
dilated kernel makes that stop negative. OpenVINO's shape inference gives such a Range 0
elements; so does ovgather. (OpenVINO 2026.4's CPU plugin runs it with
``ceil(|stop - start| / step)`` elements instead, so ``validate --all-layers`` reports the
layers after it as ``shape differs`` at that size; ovgather follows OpenVINO's shape
inference, which ``Model.reshape`` gives.)"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset8 as o8
import openvino.opset13 as o
import pytest
from op_graphs import C, P, compare_with_openvino


def _im2col_blocks(x, axis: int, kernel: int, dilation: int, pad: int, stride: int):
    """The block start positions along ``axis`` as the PyTorch frontend computes them,
    and the index grid (Range + Unsqueeze + Add) it gathers with."""
    size = o.squeeze(o8.gather(o.shape_of(x, "i32"), C([axis], np.int32), C(0, np.int32)),
                     C([0]))
    stop = o.add(size, C(2 * pad - dilation * (kernel - 1), np.int32))
    starts = o.range(C(0, np.int32), stop, C(stride, np.int32), ov.Type.i32)
    offsets = C(np.arange(kernel, dtype=np.int32).reshape(kernel, 1) * dilation, np.int32)
    return o.add(o.unsqueeze(starts, C(0)), offsets)


CASES = [  # kernel, dilation, pad, stride: the im2col layer test's parameters
    (2, 1, 0, 3), (3, 2, 0, 1), (3, 3, 1, 2), (2, 3, 0, 3), (1, 1, 0, 1), (3, 1, 1, 3),
]


@pytest.mark.parametrize(("kernel", "dilation", "pad", "stride"), CASES)
@pytest.mark.parametrize("width", [1, 2, 4])
def test_im2col_block_grid_at_small_sizes_is_what_openvino_infers(
        tmp_path, kernel, dilation, pad, stride, width):
    x = P(f"[1,1,1,{width}]")
    grid = _im2col_blocks(x, 3, kernel, dilation, pad, stride)
    flat = o.reshape(grid, C([-1]), False)
    _, diffs = compare_with_openvino(tmp_path, [grid, flat], [x], f"im2col{width}")
    assert diffs == []


def test_a_range_whose_stop_is_below_its_start_is_empty_as_openvino_infers_it(tmp_path):
    """The case ``validate --all-layers`` showed on an im2col export at 1x1: Range(0, -2, 3)
    is ``[0]`` in OpenVINO's shape inference (and ovgather's), ``[1]`` on the CPU plugin."""
    x = P("[1,1,1,1]")
    grid = _im2col_blocks(x, 3, 2, 1, 0, 3)
    report, diffs = compare_with_openvino(tmp_path, [grid], [x], "range_below")
    assert diffs == []
    assert report.ok
