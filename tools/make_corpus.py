"""Build the real-model corpus in ``ir_corpus/``: transformer architectures, random weights.

Run ``python tools/make_corpus.py [--out DIR] [--only NAME ...] [--variants VARIANT ...]
[--list]``.

Hand-written IR samples show that a rule is right on the cases someone thought of; real
models show which ops and which shape computations users actually meet. Each model here
is built from a ``transformers`` config written out below (small widths, real depth),
with random weights from a fixed seed: nothing is downloaded, ``HF_HUB_OFFLINE=1`` is set
before ``transformers`` is imported. Each is converted by ``openvino.convert_model``
through the PyTorch frontend (traced from an example input; dynamic dims given through
``input=`` as ``-1`` or as an interval) and through the ONNX frontend (``torch.onnx.export``
with the dynamo exporter, dynamic dims through ``dynamic_shapes``; or with the TorchScript
exporter, dynamic dims through ``dynamic_axes``), and saved with
``compress_to_fp16=True`` to keep the files small. One decoder is made stateful, its
KV-cache moved into ReadValue/Assign pairs by
``openvino._offline_transformations.apply_make_stateful_transformation``, as
optimum-intel does for the LLMs it exports.

``ir_corpus/README.md`` is written from the same table, so each file's origin
(architecture, frontend, static/dynamic, input shapes, config values) is recorded next
to it. Names OpenVINO makes from a global counter are renumbered per model (as for
``ir_samples/``), so a rebuild with the same packages writes the same files; across
torch, transformers or openvino versions they may differ, and nothing tests that they
do not: the tests need no torch, only that OpenVINO and ovgather read the files.

Requirements (only to regenerate; the tests read the committed files and need no torch):
``pip install torch==2.13.0 transformers onnx onnxscript`` (the pinned torch is a CPU
wheel; an unpinned one pulls GBs of CUDA), or ``pip install -e ".[corpus]"``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported: never reach a hub
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import openvino as ov  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from make_samples import _canonical_names  # noqa: E402
from openvino import opset13  # noqa: E402
from openvino._offline_transformations import apply_make_stateful_transformation  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "ir_corpus"
SEED = 20261123
VARIANTS = ("pytorch_static", "pytorch_dynamic", "onnx_static", "onnx_dynamic",
            "onnx_legacy_dynamic", "pytorch_stateful")


@dataclass(frozen=True)
class Input:
    """One model input: its example shape and which dims a dynamic variant frees.

    ``dynamic`` maps an axis to ``-1`` (any size) or to ``(lo, hi)`` (an interval, so the
    PyTorch variant carries bounds; the ONNX export only says "any").
    """

    name: str
    shape: tuple[int, ...]
    dtype: str = "i64"  # i64 token ids / masks, i32 beam indices, f32 pixels and audio
    high: int = 100  # token ids are drawn below this
    dynamic: dict[int, int | tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Arch:
    """One architecture of the corpus and the variants it is converted to."""

    name: str
    model_class: str  # a class of ``transformers``
    config_class: str
    config: dict
    inputs: tuple[Input, ...]
    outputs: tuple[str, ...]
    variants: tuple[str, ...]
    why: str  # what this model brings to the corpus
    call_kwargs: dict = field(default_factory=dict)


def _ids(name: str, seq: int = 12, high: int = 100, batch: int = 1,
         seq_range: tuple[int, int] | int = -1) -> Input:
    return Input(name, (batch, seq), "i64", high, {0: -1, 1: seq_range})


def _mask(name: str = "attention_mask", seq: int = 12,
          seq_range: tuple[int, int] | int = -1) -> Input:
    return Input(name, (1, seq), "i64", 2, {0: -1, 1: seq_range})


def _pixels(size: int | tuple[int, int], channels: int = 3, dynamic_hw: bool = False) -> Input:
    h, w = (size, size) if isinstance(size, int) else size
    dynamic: dict = {0: -1, 2: -1, 3: -1} if dynamic_hw else {0: -1}
    return Input("pixel_values", (1, channels, h, w), "f32", 0, dynamic)


TEXT_SMALL = dict(hidden_size=32, num_attention_heads=4, intermediate_size=64)
IMAGE_STAGES = dict(num_channels=3, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 2, 1])

ARCHS: dict[str, Arch] = {a.name: a for a in [
    Arch("bert", "BertModel", "BertConfig",
         dict(vocab_size=500, num_hidden_layers=4, max_position_embeddings=64, **TEXT_SMALL),
         (_ids("input_ids", high=500), _mask(), _ids("token_type_ids", high=2)),
         ("last_hidden_state", "pooler_output"),
         ("pytorch_dynamic", "onnx_dynamic", "onnx_legacy_dynamic"),
         "encoder: embeddings, LayerNorm (MVN), SDPA attention with a padding mask"),
    Arch("distilbert", "DistilBertModel", "DistilBertConfig",
         dict(vocab_size=300, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
              max_position_embeddings=64),
         (_ids("input_ids", high=300), _mask()), ("last_hidden_state",),
         ("onnx_dynamic", "onnx_legacy_dynamic"),
         "encoder without token types: position ids from the sequence length, the padding "
         "mask expanded to the attention's shape"),
    Arch("deberta", "DebertaV2Model", "DebertaV2Config",
         dict(vocab_size=300, num_hidden_layers=2, max_position_embeddings=64,
              relative_attention=True, position_buckets=16, max_relative_positions=-1,
              pos_att_type=["p2c", "c2p"], position_biased_input=False, **TEXT_SMALL),
         (_ids("input_ids", high=300), _mask()), ("last_hidden_state",),
         ("pytorch_dynamic",),
         "disentangled attention: log-bucketed relative positions computed from the "
         "sequence length, content-to-position Gathers along both axes"),
    Arch("gpt2", "GPT2LMHeadModel", "GPT2Config",
         dict(vocab_size=300, n_embd=32, n_layer=3, n_head=4, n_positions=128),
         (_ids("input_ids", high=300, seq_range=(1, 128)), _mask(seq_range=(1, 128))),
         ("logits",), ("pytorch_dynamic", "onnx_static", "onnx_dynamic", "onnx_legacy_dynamic"),
         "decoder with a causal mask and tied LM head; interval sequence length",
         dict(use_cache=False)),
    Arch("llama", "LlamaForCausalLM", "LlamaConfig",
         dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256),
         (_ids("input_ids", high=300), _mask()), ("logits",),
         ("pytorch_dynamic", "onnx_dynamic"),
         "decoder with rotary embeddings, RMSNorm, SwiGLU and grouped-query attention",
         dict(use_cache=False)),
    Arch("qwen2", "Qwen2ForCausalLM", "Qwen2Config",
         dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256),
         (_ids("input_ids", high=300), _mask()), ("logits",),
         ("onnx_dynamic", "onnx_legacy_dynamic"),
         "decoder with rotary embeddings, grouped-query attention and biased q/k/v "
         "projections",
         dict(use_cache=False)),
    Arch("llama_deep", "LlamaForCausalLM", "LlamaConfig",
         dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=44,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256),
         (_ids("input_ids", high=300), _mask()), ("logits",), ("pytorch_dynamic",),
         "the llama decoder at a real LLM's depth (44 blocks, ~5k IR layers): what "
         "`tools/bench_check.py` times `check` on",
         dict(use_cache=False)),
    Arch("llama_kv", "LlamaForCausalLM", "LlamaConfig",
         dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256),
         (_ids("input_ids", seq=4, high=300), _mask(seq=7), _ids("position_ids", seq=4),
          Input("beam_idx", (1,), "i32", 1, {0: -1})),
         ("logits",), ("pytorch_stateful",),
         "stateful LLM: the KV-cache as ReadValue/Assign pairs reordered by `beam_idx` "
         "(as optimum-intel's exports are), grouped-query attention"),
    Arch("mixtral", "MixtralForCausalLM", "MixtralConfig",
         dict(vocab_size=300, hidden_size=32, intermediate_size=32, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
              num_experts_per_tok=2, max_position_embeddings=256,
              experts_implementation="batched_mm"),
         (_ids("input_ids", high=300), _mask()), ("logits",), ("pytorch_dynamic",),
         "mixture of experts: router TopK and Softmax, the chosen experts' weights "
         "gathered per token (transformers' `batched_mm` experts: the default loop "
         "uses `torch.histc`, which OpenVINO's PyTorch frontend cannot convert)",
         dict(use_cache=False)),
    Arch("t5", "T5Model", "T5Config",
         dict(vocab_size=300, d_model=32, d_kv=8, d_ff=64, num_layers=2,
              num_decoder_layers=2, num_heads=4, relative_attention_num_buckets=16),
         (_ids("input_ids", high=300), _mask(),
          _ids("decoder_input_ids", seq=5, high=300)),
         ("last_hidden_state", "encoder_last_hidden_state"),
         ("pytorch_dynamic", "onnx_static", "onnx_dynamic", "onnx_legacy_dynamic"),
         "encoder-decoder with relative position buckets and cross-attention",
         dict(use_cache=False)),
    Arch("vit", "ViTModel", "ViTConfig",
         dict(image_size=32, patch_size=8, num_hidden_layers=3, **TEXT_SMALL),
         (_pixels(32),), ("last_hidden_state", "pooler_output"),
         ("pytorch_static", "onnx_dynamic"),
         "vision transformer: patch Convolution, class token Concat"),
    Arch("resnet", "ResNetModel", "ResNetConfig",
         dict(embedding_size=8, layer_type="basic", **IMAGE_STAGES),
         (_pixels(64, dynamic_hw=True),), ("last_hidden_state", "pooler_output"),
         ("pytorch_static", "pytorch_dynamic", "onnx_dynamic"),
         "ConvNet: Convolution, MaxPool, adaptive average pooling"),
    Arch("convnext", "ConvNextModel", "ConvNextConfig",
         dict(**IMAGE_STAGES, patch_size=4),
         (_pixels(64, dynamic_hw=True),), ("last_hidden_state", "pooler_output"),
         ("pytorch_dynamic", "onnx_static"),
         "ConvNet: depthwise GroupConvolution, LayerNorm over channels"),
    Arch("poolformer", "PoolFormerModel", "PoolFormerConfig",
         dict(hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 2, 1], pool_size=3,
              patch_sizes=[7, 3, 3, 3], strides=[4, 2, 2, 2], padding=[2, 1, 1, 1]),
         (_pixels(64, dynamic_hw=True),), ("last_hidden_state",),
         ("pytorch_static", "onnx_dynamic"),
         "token mixing by AvgPool (count_include_pad=False), GroupNorm"),
    Arch("segformer", "SegformerForSemanticSegmentation", "SegformerConfig",
         dict(num_encoder_blocks=4, depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 24, 32],
              num_attention_heads=[1, 2, 2, 4], sr_ratios=[8, 4, 2, 1],
              decoder_hidden_size=32, num_labels=5),
         (_pixels(64, dynamic_hw=True),), ("logits",), ("pytorch_dynamic", "onnx_dynamic"),
         "segmentation: overlapping patch Convolutions, bilinear Interpolate to one size"),
    Arch("swin", "SwinModel", "SwinConfig",
         dict(image_size=40, patch_size=4, embed_dim=16, depths=[2, 2], num_heads=[2, 4],
              window_size=4),
         (_pixels(40),), ("last_hidden_state", "pooler_output"),
         ("pytorch_static", "onnx_static", "pytorch_dynamic"),
         "windowed attention: window Reshape/Transpose, shifted windows (Roll), Pad of "
         "10x10 patches to 12x12 windows, patch merging"),
    Arch("wav2vec2", "Wav2Vec2Model", "Wav2Vec2Config",
         dict(vocab_size=32, num_hidden_layers=2, conv_dim=(16, 16, 16),
              conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
              num_conv_pos_embedding_groups=4, do_stable_layer_norm=False,
              **TEXT_SMALL),
         (Input("input_values", (1, 1600), "f32", 0, {0: -1, 1: -1}),),
         ("last_hidden_state", "extract_features"),
         ("pytorch_dynamic", "onnx_dynamic"),
         "audio: strided Conv1d front-end (Convolution on 3-D), grouped positional "
         "convolution with padding"),
    Arch("whisper", "WhisperForConditionalGeneration", "WhisperConfig",
         dict(vocab_size=300, num_mel_bins=16, d_model=32, encoder_layers=2,
              decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
              encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=30,
              max_target_positions=64, pad_token_id=1, bos_token_id=2, eos_token_id=3,
              decoder_start_token_id=2),
         (Input("input_features", (1, 16, 60), "f32", 0, {0: -1}),
          _ids("decoder_input_ids", seq=5, high=300), _mask("decoder_attention_mask", seq=5)),
         ("logits",), ("pytorch_dynamic", "onnx_static"),
         "speech encoder-decoder: Conv1d front-end with stride 2, GELU, cross-attention",
         dict(use_cache=False)),
    Arch("clip", "CLIPModel", "CLIPConfig",
         dict(text_config=dict(vocab_size=300, num_hidden_layers=2,
                               max_position_embeddings=32, **TEXT_SMALL),
              vision_config=dict(image_size=32, patch_size=8, num_hidden_layers=2,
                                 **TEXT_SMALL),
              projection_dim=16),
         (_ids("input_ids", seq=8, high=300), _mask(seq=8), _pixels(32)),
         ("logits_per_image", "logits_per_text", "text_embeds", "image_embeds"),
         ("pytorch_dynamic", "onnx_static"),
         "two towers: argmax-pooled text (the EOS Gather), quick-GELU vision, matmul of "
         "normalized embeddings"),
    # batch-1 exports whose constants bake the batch in: what ``reshape --fix`` meets
    Arch("roberta", "RobertaModel", "RobertaConfig",
         dict(vocab_size=300, num_hidden_layers=2, max_position_embeddings=40, pad_token_id=1,
              **TEXT_SMALL),
         (_ids("input_ids", high=300), _mask()), ("last_hidden_state", "pooler_output"),
         ("pytorch_static", "onnx_static"),
         "encoder whose position ids count the non-padding tokens (a cumulative sum "
         "gathered per row), traced at batch 1"),
    Arch("bart", "BartForConditionalGeneration", "BartConfig",
         dict(vocab_size=300, d_model=32, encoder_layers=2, decoder_layers=2,
              encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
              decoder_ffn_dim=64, max_position_embeddings=64),
         (_ids("input_ids", high=300), _mask(), _ids("decoder_input_ids", seq=5, high=300)),
         ("logits",), ("pytorch_static", "onnx_static"),
         "encoder-decoder with learned positions and a causal decoder mask, traced at "
         "batch 1", dict(use_cache=False)),
    Arch("mistral", "MistralForCausalLM", "MistralConfig",
         dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
              sliding_window=8),
         (_ids("input_ids", high=300), _mask()), ("logits",), ("pytorch_static",),
         "decoder with a sliding-window causal mask and grouped-query attention, traced at "
         "batch 1", dict(use_cache=False)),
    Arch("detr", "DetrForObjectDetection", "DetrConfig",
         dict(use_timm_backbone=False, use_pretrained_backbone=False,
              backbone_config=dict(model_type="resnet", embedding_size=8,
                                   hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1],
                                   out_features=["stage4"]),
              d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
              decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
              num_queries=8, num_labels=5),
         (_pixels(64),), ("logits", "pred_boxes"), ("pytorch_static", "onnx_static"),
         "detector: ResNet backbone, a pixel mask of ones and learned object queries "
         "(a constant batch-1 operand of the decoder), traced at batch 1"),
]}


# --------------------------------------------------------------------------------------
# Building the torch models


class _Named(torch.nn.Module):
    """Call a transformers model with positional tensors as named inputs and give back a
    flat tuple of the requested outputs: both tracers want plain tensors in and out."""

    def __init__(self, model: torch.nn.Module, arch: Arch) -> None:
        super().__init__()
        self.model, self.arch = model, arch

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        names = [i.name for i in self.arch.inputs]
        out = self.model(**dict(zip(names, tensors, strict=True)), **self.arch.call_kwargs,
                         return_dict=True)
        return tuple(out[name] for name in self.arch.outputs)


class _KVDecoder(torch.nn.Module):
    """A causal LM with its KV-cache as flat tensors: ``(ids, mask, positions, beam_idx,
    k0, v0, k1, v1, ...) -> (logits, k0', v0', ...)``, the form make_stateful turns into
    state. The cache is first reordered by ``beam_idx``, the Gather that optimum-intel
    puts after each ReadValue for beam search."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, position_ids, beam_idx, *past):
        past = [t.index_select(0, beam_idx) for t in past]
        cache = transformers.DynamicCache(config=self.model.config)
        for layer, key, value in zip(cache.layers, past[0::2], past[1::2], strict=True):
            # filled directly: DynamicCache's own fill concatenates onto an empty 1-D
            # tensor, which torch allows and OpenVINO's Concat rightly refuses
            layer.lazy_initialization(key, value)
            layer.keys, layer.values = key, value
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids, past_key_values=cache, use_cache=True,
                         return_dict=True)
        present = []
        for layer in out.past_key_values.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def build_model(arch: Arch) -> torch.nn.Module:
    """The transformers model of ``arch`` with seeded random weights, in eval mode."""
    torch.manual_seed(SEED)
    config = getattr(transformers, arch.config_class)(**arch.config)
    return getattr(transformers, arch.model_class)(config).eval()


def example_inputs(arch: Arch) -> list[torch.Tensor]:
    """Seeded example tensors for ``arch``'s inputs (a mask of ones, ids below ``high``)."""
    gen = torch.Generator().manual_seed(SEED)
    out = []
    for inp in arch.inputs:
        if inp.dtype == "f32":
            out.append(torch.randn(inp.shape, generator=gen))
        elif inp.name.endswith("attention_mask"):
            out.append(torch.ones(inp.shape, dtype=torch.int64))
        elif inp.name == "position_ids":
            start = arch_past_len(arch)
            out.append(torch.arange(start, start + inp.shape[1]).reshape(inp.shape))
        else:
            dtype = torch.int32 if inp.dtype == "i32" else torch.int64
            out.append(torch.randint(0, inp.high, inp.shape, generator=gen, dtype=dtype))
    return out


def arch_past_len(arch: Arch) -> int:
    """For a KV-cache model: the cached length, mask length minus the new tokens."""
    seq = {i.name: i.shape[-1] for i in arch.inputs}
    return seq["attention_mask"] - seq["input_ids"]


# --------------------------------------------------------------------------------------
# Conversion


def _partial_shape(inp: Input, dynamic: bool) -> ov.PartialShape:
    dims = []
    for axis, size in enumerate(inp.shape):
        free = inp.dynamic.get(axis) if dynamic else None
        if free is None:
            dims.append(ov.Dimension(size))
        elif free == -1:
            dims.append(ov.Dimension())
        else:
            dims.append(ov.Dimension(*free))
    return ov.PartialShape(dims)


def _ov_type(dtype: str) -> ov.Type:
    return {"f32": ov.Type.f32, "i32": ov.Type.i32}.get(dtype, ov.Type.i64)


def _name_ports(model: ov.Model, inputs: Sequence[str], outputs: Sequence[str]) -> None:
    """Give the converted model's inputs and outputs the names users see in
    transformers (the PyTorch frontend names them after the wrapper's ``*tensors``)."""
    for port, name in zip(model.inputs, inputs, strict=True):
        port.get_tensor().set_names({name})
        port.get_node().set_friendly_name(name)
    for port, name in zip(model.outputs, outputs, strict=True):
        port.get_tensor().set_names({name})


def convert_pytorch(arch: Arch, dynamic: bool) -> ov.Model:
    """Trace the model through OpenVINO's PyTorch frontend."""
    module = _Named(build_model(arch), arch)
    examples = example_inputs(arch)
    shapes = [(_partial_shape(i, dynamic), _ov_type(i.dtype)) for i in arch.inputs]
    with torch.no_grad():
        model = ov.convert_model(module, example_input=tuple(examples), input=shapes)
    _name_ports(model, [i.name for i in arch.inputs], arch.outputs)
    return model


def convert_onnx(arch: Arch, dynamic: bool, tmp: Path, legacy: bool = False) -> ov.Model:
    """Export to ONNX with torch's dynamo exporter (``legacy``: the TorchScript exporter,
    whose graphs compute shapes in Shape -> Gather -> Unsqueeze -> Concat chains,
    ConstantOfShape, Expand and Where, as most ONNX models in the wild do), then read it
    with OpenVINO's ONNX frontend (which takes a path, hence the temporary file)."""
    module = _Named(build_model(arch), arch)
    examples = tuple(example_inputs(arch))
    names = [i.name for i in arch.inputs]
    path = tmp / f"{arch.name}.onnx"
    with torch.no_grad():
        if legacy:
            axes = {i.name: {a: f"{i.name}_{a}" for a in i.dynamic} for i in arch.inputs}
            torch.onnx.export(module, examples, str(path), input_names=names,
                              output_names=list(arch.outputs), opset_version=17,
                              dynamic_axes=axes if dynamic else None, dynamo=False)
        else:
            # the wrapper takes *tensors: torch.export wants their dims as one list
            shapes = (tuple({a: torch.export.Dim.DYNAMIC for a in i.dynamic}
                            for i in arch.inputs),)
            torch.onnx.export(module, examples, str(path), input_names=names,
                              output_names=list(arch.outputs),
                              dynamic_shapes=shapes if dynamic else None, dynamo=True,
                              verbose=False)
    return ov.convert_model(str(path))


def kv_names(n_layers: int) -> tuple[list[str], list[str]]:
    """The cache tensor names optimum-intel uses: past_key_values.i.key -> present.i.key."""
    past = [f"past_key_values.{i}.{kv}" for i in range(n_layers) for kv in ("key", "value")]
    present = [f"present.{i}.{kv}" for i in range(n_layers) for kv in ("key", "value")]
    return past, present


def convert_stateful(arch: Arch) -> ov.Model:
    """Trace a decoder with explicit cache tensors, then move the cache into state."""
    lm = build_model(arch)
    cfg = lm.config
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    past_len = arch_past_len(arch)
    past_names, present_names = kv_names(cfg.num_hidden_layers)
    gen = torch.Generator().manual_seed(SEED)
    past = [torch.randn((1, cfg.num_key_value_heads, past_len, head_dim), generator=gen)
            for _ in past_names]
    kv_shape = ov.PartialShape([-1, cfg.num_key_value_heads, -1, head_dim])
    shapes = [(_partial_shape(i, True), _ov_type(i.dtype)) for i in arch.inputs]
    shapes += [(kv_shape, ov.Type.f32)] * len(past)
    with torch.no_grad():
        model = ov.convert_model(_KVDecoder(lm),
                                 example_input=(*example_inputs(arch), *past), input=shapes)
    _name_ports(model, [i.name for i in arch.inputs] + past_names, ["logits", *present_names])
    apply_make_stateful_transformation(model, dict(zip(past_names, present_names,
                                                       strict=True)))
    _init_states(model)
    return model


def _init_states(model: ov.Model) -> None:
    """Give each ReadValue the zero-length cache of the current batch as its initial
    value, as optimum-intel does: without it the CPU plugin refuses the model, and with
    it the IR holds the ShapeOf -> Gather -> Concat -> Broadcast that real exports have."""
    shape = opset13.shape_of(model.input("input_ids"), output_type="i64")
    batch = opset13.gather(shape, opset13.constant([0]), opset13.constant(0))
    for op in model.get_ops():
        if op.get_type_name() != "ReadValue":
            continue
        dims = [batch] + [opset13.constant([d.get_min_length()])
                          for d in op.get_output_partial_shape(0)[1:]]
        zeros = opset13.constant(0.0, dtype=op.get_output_element_type(0))
        op.set_arguments([opset13.broadcast(zeros, opset13.concat(dims, axis=0))])
    model.validate_nodes_and_infer_types()


def convert(arch: Arch, variant: str, tmp: Path) -> ov.Model:
    """One variant of one architecture as an ``ov.Model``."""
    frontend, _, kind = variant.partition("_")
    if kind == "stateful":
        return convert_stateful(arch)
    if frontend == "pytorch":
        return convert_pytorch(arch, kind == "dynamic")
    legacy, _, kind = kind.rpartition("_")
    return convert_onnx(arch, kind == "dynamic", tmp, legacy == "legacy")


def _strip_paths(model: ov.Model) -> None:
    """Drop conversion rt_info that records local paths and versions of this machine."""
    rt_info = model.get_rt_info()
    for key in ("conversion_parameters", "framework"):
        if key in list(rt_info.keys()):
            del rt_info[key]


# --------------------------------------------------------------------------------------
# Writing the corpus


def write_variant(arch: Arch, variant: str, out: Path, tmp: Path) -> dict:
    """Convert and save one variant; return its README row."""
    model = convert(arch, variant, tmp)
    model.set_friendly_name(f"{arch.name}_{variant}")  # not a global counter's "Model3"
    _canonical_names(model)  # Concat_3337 -> Concat_<position>: stable across runs
    _strip_paths(model)
    xml = out / arch.name / f"{variant}.xml"
    xml.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, str(xml), compress_to_fp16=True)
    return describe(xml, out)


def describe(xml: Path, out: Path) -> dict:
    """A saved IR's README row, read back from the file: saving with fp16 compression
    adds the decompression Converts, so the model in memory has fewer layers."""
    model = ov.Core().read_model(str(xml))
    ops = Counter(op.get_type_name() for op in model.get_ordered_ops())
    return {
        "path": xml.relative_to(out).as_posix(),
        "inputs": [[p.any_name, str(p.get_partial_shape())] for p in model.inputs],
        "layers": sum(ops.values()),
        "ops": sorted(ops),
        "states": len(model.get_sinks()),
        "bytes": xml.stat().st_size + xml.with_suffix(".bin").stat().st_size,
    }


NOTABLE = ("Convolution", "GroupConvolution", "MaxPool", "AvgPool", "AdaptiveAvgPool",
           "Interpolate", "Pad", "ScaledDotProductAttention", "ReadValue", "Assign", "Roll")


def readme(rows: dict[str, list[dict]]) -> str:
    """The corpus README: how to rebuild it, then one section per architecture."""
    total = sum(r["bytes"] for rs in rows.values() for r in rs)
    lines = [
        "# Real-model corpus",
        "",
        "Written by `tools/make_corpus.py`; do not edit. Rebuild with",
        "`pip install torch==2.13.0 transformers onnx onnxscript` then",
        "`python tools/make_corpus.py` (one architecture: `--only NAME`).",
        "",
        "Every model is a `transformers` architecture with random weights "
        f"(`torch.manual_seed({SEED})`), small widths and real depth, converted by "
        "`openvino.convert_model` and saved with `compress_to_fp16=True`. Variants:",
        "",
        "- `pytorch_*`: traced by OpenVINO's PyTorch frontend from an example input; "
        "`pytorch_dynamic` frees the dims marked below through `input=` (`?` or an "
        "interval).",
        "- `onnx_*`: `torch.onnx.export(..., dynamo=True)` then OpenVINO's ONNX frontend; "
        "`onnx_dynamic` frees the same dims through `dynamic_shapes` (no intervals).",
        "- `onnx_legacy_dynamic`: `torch.onnx.export(..., dynamo=False, opset_version=17)`, "
        "the TorchScript exporter most ONNX models in the wild come from (its shape "
        "arithmetic: Shape -> Gather -> Unsqueeze -> Concat, ConstantOfShape, Expand, "
        "Where), then OpenVINO's ONNX frontend; the same dims free through `dynamic_axes`.",
        "- `pytorch_stateful`: a decoder traced with explicit `past_key_values.i.key/value` "
        "inputs and `present.i.key/value` outputs, then "
        "`apply_make_stateful_transformation` turns each pair into ReadValue/Assign.",
        "",
        f"Built with torch {torch.__version__}, transformers {transformers.__version__}, "
        f"openvino {ov.get_version()}. Total: {len(_all(rows))} IRs, "
        f"{total / 1e6:.2f} MB.",
        "",
        "| model | variant | layers | inputs | notable ops | KB |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, rs in rows.items():
        for r in rs:
            notable = ", ".join(op for op in r["ops"] if op in NOTABLE)
            inputs = ", ".join(f"`{k}` {v}" for k, v in r["inputs"])
            lines.append(f"| {name} | `{Path(r['path']).stem}` | {r['layers']} | {inputs} | "
                         f"{notable} | {r['bytes'] // 1024} |")
    lines += ["", "## Architectures", ""]
    for name, rs in rows.items():
        arch = ARCHS[name]
        lines += [f"### {name}", "", f"`transformers.{arch.model_class}` from "
                  f"`{arch.config_class}`: {arch.why}.", "",
                  f"- config: `{json.dumps(arch.config, sort_keys=True)}`",
                  f"- example inputs (static shapes; dynamic variants free the dims "
                  f"named): {', '.join(_input_words(i) for i in arch.inputs)}",
                  f"- outputs: {', '.join(f'`{o}`' for o in arch.outputs)}",
                  f"- variants: {', '.join(Path(r['path']).stem for r in rs)}", ""]
    return "\n".join(lines)


def _input_words(inp: Input) -> str:
    """``input_ids`` i64 [1,12] (free: 0, 1=1..128)."""
    free = ", ".join(f"{a}" if r == -1 else f"{a}={r[0]}..{r[1]}"
                     for a, r in inp.dynamic.items())
    shape = ",".join(map(str, inp.shape))
    return f"`{inp.name}` {inp.dtype} [{shape}] (free: {free})"


def _all(rows: dict[str, list[dict]]) -> list[dict]:
    return [r for rs in rows.values() for r in rs]


def _rows_file(out: Path) -> Path:
    return out / "corpus.json"


def generate(out: Path, only: Sequence[str] = (), variants: Sequence[str] = ()
             ) -> dict[str, list[dict]]:
    """Write every variant of the chosen architectures (all by default) and the README.

    Rows of architectures not rebuilt are kept from ``corpus.json``, so ``--only`` can
    refresh one model without losing the others' README entries; with ``variants`` only
    those variants are written and the architecture's other files and rows stay.
    """
    rows: dict[str, list[dict]] = {}
    if _rows_file(out).exists():
        rows = json.loads(_rows_file(out).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ARCHS.values():
            if only and arch.name not in only:
                continue
            if not variants:
                shutil.rmtree(out / arch.name, ignore_errors=True)
            kept = {Path(r["path"]).stem: r for r in rows.get(arch.name, [])}
            for variant in arch.variants:
                if variants and variant not in variants:
                    continue
                print(f"{arch.name}/{variant} ...", file=sys.stderr, flush=True)
                kept[variant] = write_variant(arch, variant, out, Path(tmp))
            rows[arch.name] = [kept[v] for v in arch.variants if v in kept]
            rows = _write_index(out, rows)  # after each model: a failure keeps the rest
    return rows


def _write_index(out: Path, rows: dict[str, list[dict]]) -> dict[str, list[dict]]:
    rows = {n: rows[n] for n in ARCHS if n in rows}
    _rows_file(out).write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    (out / "README.md").write_text(readme(rows) + "\n")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", nargs="*", default=[], choices=sorted(ARCHS),
                        metavar="NAME")
    parser.add_argument("--variants", nargs="*", default=[], choices=VARIANTS,
                        metavar="VARIANT", help="write only these variants, keep the rest")
    parser.add_argument("--list", action="store_true", help="list the architectures")
    args = parser.parse_args(argv)
    if args.list:
        for arch in ARCHS.values():
            print(f"{arch.name:12} {arch.model_class:34} {' '.join(arch.variants)}")
        return 0
    warnings.filterwarnings("ignore")
    generate(args.out, args.only, args.variants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
