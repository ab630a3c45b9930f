"""Write the small tokenizer and detokenizer IRs of ``tests/data/tokenizers/``.

Each tokenizer is trained in memory with the ``tokenizers`` library on a few fixed
sentences (nothing is downloaded), wrapped in ``transformers.PreTrainedTokenizerFast``
and converted by ``openvino_tokenizers.convert_tokenizer(..., with_detokenizer=True)``:
the string ops of OpenVINO's tokenizer extension (StringTensorUnpack, RegexSplit,
BPETokenize or WordpieceTokenize, VocabDecoder, …) sit in every one of them, as in the
tokenizer IRs that OpenVINO's LLM pipelines ship. Tests read the committed files and need
neither ``transformers`` nor ``tokenizers``; only ``openvino_tokenizers`` to load the
extension.

    pip install "openvino-tokenizers~=2026.4.0" transformers tokenizers
    python tools/make_tokenizer_irs.py [--out tests/data/tokenizers]
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "tokenizers"
TEXT = [
    "OpenVINO reads every layer of a tokenizer model with its extension loaded.",
    "A checker is worth exactly as much as its OK.",
    "Shapes of string tensors are known only at run time.",
    "the quick brown fox jumps over the lazy dog",
] * 4


def bpe():
    """A byte-level BPE tokenizer of about 300 tokens (GPT-2's kind)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(TEXT, trainer)
    return tok, {"eos_token": "<|endoftext|>", "bos_token": "<|endoftext|>"}


def wordpiece():
    """A WordPiece tokenizer with BERT's normalizer and special tokens."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from tokenizers.processors import TemplateProcessing

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(TEXT, trainers.WordPieceTrainer(vocab_size=200,
                                                            special_tokens=special))
    tok.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[(t, tok.token_to_id(t)) for t in ("[CLS]", "[SEP]")])
    return tok, {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                 "sep_token": "[SEP]", "mask_token": "[MASK]"}


def write(out: Path) -> list[Path]:
    import openvino as ov
    from openvino_tokenizers import convert_tokenizer
    from transformers import PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for make in (bpe, wordpiece):
        tok, special = make()
        fast = PreTrainedTokenizerFast(tokenizer_object=tok, **special)
        tokenizer, detokenizer = convert_tokenizer(fast, with_detokenizer=True)
        for kind, model in (("tokenizer", tokenizer), ("detokenizer", detokenizer)):
            path = out / f"{make.__name__}_{kind}.xml"
            ov.save_model(model, str(path), compress_to_fp16=False)
            written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    for path in write(parser.parse_args().out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
