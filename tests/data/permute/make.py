"""Remakes the weights in this folder, permuted between RoPE's pair layouts by transformers' own
code (from PyPI), for `tests/permutation.rs`.

`meta.safetensors` holds one layer's query and key projections as Meta's checkpoints store them
(interleaved RoPE pairs), for a grouped-query model of 32 query heads and 8 kv heads of 128
(Llama 3 70B's shape), 8 columns wide to keep the files small, random float32 values. Each
other file holds the same two tensors under the names transformers gives them, permuted to
Hugging Face's rotate_half layout by:

- `gguf_loader.safetensors`: `LlamaTensorProcessor.process` (transformers' GGUF loader, which
  un-permutes llama.cpp's interleaved rows) with the model's config: correct.
- `gguf_loader_bf16.safetensors`: the same, cast to bfloat16 after: correct, in bfloat16.
- `gguf_loader_no_kv.safetensors`: `LlamaTensorProcessor.process` with a config that lacks
  `num_key_value_heads`: the loader leaves both tensors as they were (not permuted).
- `permute_for_rope.safetensors`: `PermuteForRope` (transformers' checkpoint conversion op,
  used for Pixtral's vision tower), which permutes every tensor with `num_attention_heads`:
  right for q, and for k of this grouped-query model the 32-head permutation (the bug of
  llama.cpp's converter under GQA).
- `inverse.safetensors`: `PermuteForRope(inverse=True)`, the half-to-interleaved direction.

    python -m venv /tmp/libenv
    /tmp/libenv/bin/pip install torch transformers safetensors numpy
    /tmp/libenv/bin/python tests/data/permute/make.py
"""

import importlib.metadata
import json
import pathlib

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import LlamaConfig
from transformers.core_model_loading import PermuteForRope
from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

HERE = pathlib.Path(__file__).resolve().parent
HEADS, KV_HEADS, HEAD_DIM, HIDDEN = 32, 8, 128, 8

rng = np.random.default_rng(2026)
wq = rng.standard_normal((HEADS * HEAD_DIM, HIDDEN)).astype(np.float32)
wk = rng.standard_normal((KV_HEADS * HEAD_DIM, HIDDEN)).astype(np.float32)
META = {"layers.0.attention.wq.weight": wq, "layers.0.attention.wk.weight": wk}
Q, K = "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight"


def save(name, q, k):
    tensors = {Q: torch.as_tensor(np.ascontiguousarray(q)), K: torch.as_tensor(np.ascontiguousarray(k))}
    save_file(tensors, str(HERE / name))


def save_torch(name, q, k):
    save_file({Q: q.contiguous(), K: k.contiguous()}, str(HERE / name))


save_file({n: torch.as_tensor(w) for n, w in META.items()}, str(HERE / "meta.safetensors"))

config = {"num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS}
loader = LlamaTensorProcessor(config=config)
q = loader.process(wq, "blk.0.attn_q.weight").weights
k = loader.process(wk, "blk.0.attn_k.weight").weights
save("gguf_loader.safetensors", q, k)
save_torch(
    "gguf_loader_bf16.safetensors",
    torch.as_tensor(q).to(torch.bfloat16),
    torch.as_tensor(k).to(torch.bfloat16),
)

no_kv = LlamaTensorProcessor(config={"num_attention_heads": HEADS})
save(
    "gguf_loader_no_kv.safetensors",
    no_kv.process(wq, "blk.0.attn_q.weight").weights,
    no_kv.process(wk, "blk.0.attn_k.weight").weights,
)

llama = LlamaConfig(
    num_attention_heads=HEADS,
    num_key_value_heads=KV_HEADS,
    hidden_size=HEADS * HEAD_DIM,
    head_dim=HEAD_DIM,
)
for name, op in [
    ("permute_for_rope.safetensors", PermuteForRope()),
    ("inverse.safetensors", PermuteForRope(inverse=True)),
]:
    save_torch(
        name,
        op._permute_for_rope(torch.as_tensor(wq), llama),
        op._permute_for_rope(torch.as_tensor(wk), llama),
    )

versions = {p: importlib.metadata.version(p) for p in ["torch", "transformers", "safetensors", "numpy"]}
(HERE / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")
print(versions)
