"""PyTorch-built models for ``validate --all-layers``' sizes proof (tests/data/torch_models/).

- ``gather_index.xml``: a module that indexes ``data[b, c, idx]`` (advanced indexing, the
  per-row gather of a [B, 3, K, 5] tensor by [B, 3, M] indices), converted by
  ``openvino.convert_model``. OpenVINO's PyTorch frontend lowers ``aten::index`` (from
  TorchScript or ``torch.export`` alike) to a chain of Gather-8 over flattened dims, never
  to a GatherND: this is the model PyTorch gives.
- ``gather_nd_batch.xml``: the same converted model with that chain replaced (OpenVINO's
  Python API, on the converted graph) by the GatherND-8 it computes: ``batch_dims=2``,
  data ``[?,3,?,5]`` (batch dim dynamic, from the torch side) against indices
  ``[2,3,4,1]`` (static): the batch dims merge to ``[2,3]``.
- ``kv_decoder.xml``: a one-layer attention decoder with a KV cache (past keys and values
  in, the concatenated cache out), converted, then made stateful by
  ``openvino._offline_transformations.apply_make_stateful_transformation``: its
  ReadValues have no initializer (a first call starts from an empty cache).

Run: ``python tools/make_torch_models.py [--out DIR]`` (needs torch and openvino).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "data", "torch_models")


def _gather_modules() -> Any:
    import torch

    class Index(torch.nn.Module):
        """data [B,3,K,5] (a linear layer over the last dim first), idx [B,3,M] ->
        [B,3,M,5]: row (b, c) of the data indexed by idx[b, c]."""

        def __init__(self) -> None:
            super().__init__()
            self.mix = torch.nn.Linear(5, 5)

        def forward(self, data: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
            data = torch.relu(self.mix(data))
            b = torch.arange(data.shape[0]).view(-1, 1, 1)
            c = torch.arange(data.shape[1]).view(1, -1, 1)
            return data[b, c, idx]

    return Index


def gather_models(out: str) -> None:
    import numpy as np
    import openvino as ov
    import openvino.opset8 as ops
    import torch

    torch.manual_seed(0)
    module = _gather_modules()().eval()
    data, idx = torch.randn(2, 3, 6, 5), torch.randint(0, 6, (2, 3, 4))
    with torch.no_grad():
        model = ov.convert_model(module, example_input=(data, idx))
    p_data, p_idx = model.get_parameters()
    p_data.output(0).get_tensor().set_names({"data"})
    p_idx.output(0).get_tensor().set_names({"idx"})
    model.reshape({p_data.output(0): ov.PartialShape("[?,3,?,5]")})
    model.outputs[0].get_tensor().set_names({"rows"})
    ov.save_model(model, os.path.join(out, "gather_index.xml"), compress_to_fp16=False)

    # the GatherND-8 the chain computes: batch dims [?,3] (data) and [2,3] (indices)
    with torch.no_grad():
        model = ov.convert_model(module, example_input=(data, idx))
    p_data, p_idx = model.get_parameters()
    p_data.set_partial_shape(ov.PartialShape("[?,3,?,5]"))
    p_idx.set_partial_shape(ov.PartialShape([2, 3, 4]))
    model.validate_nodes_and_infer_types()
    relu = next(n for n in model.get_ordered_ops() if n.get_type_name() == "Relu")
    indices = ops.unsqueeze(p_idx, ops.constant(np.array([-1], np.int64)))
    gnd = ops.gather_nd(relu.output(0), indices, batch_dims=2)
    gnd.set_friendly_name("rows_nd")
    result = ops.result(gnd)
    gnd.output(0).get_tensor().set_names({"rows"})
    p_data.output(0).get_tensor().set_names({"data"})
    p_idx.output(0).get_tensor().set_names({"idx"})
    nd = ov.Model([result], [p_data, p_idx], "gather_nd_batch")
    check = ov.Core().compile_model(nd, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got = check({0: data.numpy(), 1: idx.numpy().astype(np.int64)})[0]
    with torch.no_grad():
        want = module(data, idx).numpy()
    assert np.allclose(got, want, atol=1e-6), "the GatherND computes the torch model's rows"
    ov.save_model(nd, os.path.join(out, "gather_nd_batch.xml"), compress_to_fp16=False)


def _decoder_module() -> Any:
    import torch

    class Decoder(torch.nn.Module):
        """x [B, T, 16], past_k/past_v [B, 2, P, 8] -> out [B, T, 16] and the cache
        [B, 2, P+T, 8] (keys and values of the past and of x)."""

        def __init__(self) -> None:
            super().__init__()
            self.qkv = torch.nn.Linear(16, 48)
            self.proj = torch.nn.Linear(16, 16)

        def forward(self, x: torch.Tensor, past_k: torch.Tensor, past_v: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            b, t, _ = x.shape
            q, k, v = self.qkv(x).view(b, t, 3, 2, 8).permute(2, 0, 3, 1, 4)
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
            att = torch.softmax(q @ k.transpose(-1, -2) / 8 ** 0.5, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, 16)
            return self.proj(y), k, v

    return Decoder


def decoder_model(out: str) -> None:
    import openvino as ov
    import torch
    from openvino._offline_transformations import apply_make_stateful_transformation

    torch.manual_seed(0)
    module = _decoder_module()().eval()
    example = (torch.randn(1, 3, 16), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8))
    with torch.no_grad():
        model = ov.convert_model(module, example_input=example)
    names = ("x", "past_k", "past_v")
    for param, name in zip(model.get_parameters(), names, strict=True):
        param.output(0).get_tensor().set_names({name})
        param.set_friendly_name(name)
    for result, name in zip(model.outputs, ("out", "present_k", "present_v"), strict=True):
        result.get_tensor().set_names({name})
    model.reshape({"x": ov.PartialShape("[?,?,16]"), "past_k": ov.PartialShape("[?,2,?,8]"),
                   "past_v": ov.PartialShape("[?,2,?,8]")})
    apply_make_stateful_transformation(model, {"past_k": "present_k", "past_v": "present_v"})
    ov.save_model(model, os.path.join(out, "kv_decoder.xml"), compress_to_fp16=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    gather_models(args.out)
    decoder_model(args.out)
    print(f"written to {args.out}: {sorted(os.listdir(args.out))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
