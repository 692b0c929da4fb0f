"""Remakes the `.gguf` files in this folder with the `gguf` package's own writer.

Each file holds what llama.cpp's converter (`convert_hf_to_gguf.py`) writes for a model's RoPE:
the metadata keys, and the tensors the converter computes (Llama 3.1's `rope_freqs`, from the
converter's `generate_extra_tensors`; Phi-3's `rope_factors_long/short`, copied from the
config), beside one small weight so that the file has a data section like a model's. The
configs they were converted from are `../configs/*.json` and `../../../assets/models/*.json`.

`expected.json` holds, per file and layer type, the inverse frequency of every pair that
llama.cpp's own formulas give from the file (ggml's `rope_yarn`, `ggml_rope_yarn_corr_dims`,
the frequency factors dividing each pair's angle), computed here in float64 from the file's
values, and the factor cos and sin are multiplied by. `tests/gguf.rs` compares.

    python -m venv /tmp/libenv
    /tmp/libenv/bin/pip install gguf numpy torch
    /tmp/libenv/bin/python tests/data/gguf/make.py
"""

import importlib.metadata
import json
import math
import pathlib

import numpy as np
import torch
from gguf import GGUFWriter, RopeScalingType

HERE = pathlib.Path(__file__).resolve().parent
CONFIGS = HERE.parent / "configs"
MODELS = HERE.parents[2] / "assets" / "models"


def llama3_rope_freqs(hparams, rope_scaling):
    """The converter's LlamaModel.generate_extra_tensors, as it computes rope_freqs."""
    base = hparams.get("rope_theta", 10000.0)
    dim = hparams.get("head_dim", hparams["hidden_size"] // hparams["num_attention_heads"])
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor = rope_scaling.get("factor", 8.0)
    low_freq_factor = rope_scaling.get("low_freq_factor", 1.0)
    high_freq_factor = rope_scaling.get("high_freq_factor", 4.0)
    old_context_len = hparams.get("original_max_position_embeddings", 8192)
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            factors.append(1)
        elif wavelen > low_freq_wavelen:
            factors.append(factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def corr_dim(n_dims, n_ctx_orig, n_rot, base):
    return n_dims * math.log(n_ctx_orig / (n_rot * 2 * math.pi)) / (2 * math.log(base))


def llama_cpp_inv_freq(n_dims, base, freq_scale=1.0, factors=None, yarn=None):
    """Each pair's angle per position as ggml's rope computes it, in float64."""
    out = []
    if yarn is not None:
        n_ctx_orig, beta_fast, beta_slow = yarn
        low = max(0.0, math.floor(corr_dim(n_dims, n_ctx_orig, beta_fast, base)))
        high = min(n_dims - 1.0, math.ceil(corr_dim(n_dims, n_ctx_orig, beta_slow, base)))
    for i in range(n_dims // 2):
        theta_extrap = base ** (-2.0 * i / n_dims)
        if factors is not None:
            theta_extrap /= float(factors[i])
        theta_interp = freq_scale * theta_extrap
        theta = theta_interp
        if yarn is not None:
            y = (i - low) / max(0.001, high - low)
            ramp = 1.0 - min(1.0, max(0.0, y))
            theta = theta_interp * (1 - ramp) + theta_extrap * ramp
        out.append(theta)
    return out


def f32(x):
    return float(np.float32(x))


def write(name, arch, meta, tensors=()):
    writer = GGUFWriter(str(HERE / f"{name}.gguf"), arch)
    writer.add_name(name)
    for key, (kind, value) in meta.items():
        getattr(writer, f"add_{kind}")(key.format(arch=arch), value)
    for tensor_name, values in tensors:
        writer.add_tensor(tensor_name, np.asarray(values, dtype=np.float32))
    # One small weight, so the file has a data section of weights like a model's.
    writer.add_tensor("token_embd.weight", np.arange(64, dtype=np.float32).reshape(8, 8))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main():
    expected = {}

    # Llama 3.1: the base, and the scaling as rope_freqs.
    llama = json.loads((CONFIGS / "llama31_v4.json").read_text())
    head = llama["hidden_size"] // llama["num_attention_heads"]
    factors = llama3_rope_freqs(llama, llama["rope_scaling"])
    for name, base in [("llama31", llama["rope_theta"]), ("llama31_base10000", 10000.0)]:
        write(
            name,
            "llama",
            {
                "{arch}.context_length": ("uint32", llama["max_position_embeddings"]),
                "{arch}.embedding_length": ("uint32", llama["hidden_size"]),
                "{arch}.attention.head_count": ("uint32", llama["num_attention_heads"]),
                "{arch}.rope.dimension_count": ("uint32", head),
                "{arch}.rope.freq_base": ("float32", base),
            },
            [("rope_freqs.weight", factors)],
        )
        expected[name] = {
            "": {
                "inv_freq": llama_cpp_inv_freq(head, f32(base), factors=factors),
                "attention_factor": 1.0,
            }
        }

    # Qwen2.5 with YaRN: the scaling in metadata (NeoX pairs).
    qwen = json.loads((CONFIGS / "qwen2_yarn_v4.json").read_text())
    head = qwen["hidden_size"] // qwen["num_attention_heads"]
    for name, factor in [("qwen2_yarn", qwen["rope_scaling"]["factor"]), ("qwen2_yarn_factor2", 2.0)]:
        original = qwen["rope_scaling"]["original_max_position_embeddings"]
        write(
            name,
            "qwen2",
            {
                "{arch}.context_length": ("uint32", qwen["max_position_embeddings"]),
                "{arch}.embedding_length": ("uint32", qwen["hidden_size"]),
                "{arch}.attention.head_count": ("uint32", qwen["num_attention_heads"]),
                "{arch}.rope.freq_base": ("float32", qwen["rope_theta"]),
                "{arch}.rope.scaling.type": ("string", RopeScalingType.YARN.value),
                "{arch}.rope.scaling.factor": ("float32", factor),
                "{arch}.rope.scaling.original_context_length": ("uint32", original),
            },
        )
        expected[name] = {
            "": {
                "inv_freq": llama_cpp_inv_freq(
                    head, f32(qwen["rope_theta"]), 1.0 / f32(factor), yarn=(original, 32.0, 1.0)
                ),
                "attention_factor": 1.0 + 0.1 * math.log(f32(factor)),
            }
        }

    # Phi-3 (LongRoPE): the two factor lists as tensors, and the attention factor the
    # converter computes.
    phi = json.loads((MODELS / "phi-3-vision-128k-instruct.json").read_text())
    head = phi["hidden_size"] // phi["num_attention_heads"]
    scaling = phi["rope_scaling"]
    original = phi["original_max_position_embeddings"]
    scale = phi["max_position_embeddings"] / original
    attn = math.sqrt(1 + math.log(scale) / math.log(original))
    base = phi.get("rope_theta", 10000.0)
    write(
        "phi3_longrope",
        "phi3",
        {
            "{arch}.context_length": ("uint32", phi["max_position_embeddings"]),
            "{arch}.embedding_length": ("uint32", phi["hidden_size"]),
            "{arch}.attention.head_count": ("uint32", phi["num_attention_heads"]),
            "{arch}.rope.dimension_count": ("uint32", head),
            "{arch}.rope.freq_base": ("float32", base),
            "{arch}.rope.scaling.type": ("string", RopeScalingType.LONGROPE.value),
            "{arch}.rope.scaling.attn_factor": ("float32", attn),
            "{arch}.rope.scaling.original_context_length": ("uint32", original),
        },
        [
            ("rope_factors_long.weight", scaling["long_factor"]),
            ("rope_factors_short.weight", scaling["short_factor"]),
        ],
    )
    expected["phi3_longrope"] = {
        "": {
            "inv_freq": llama_cpp_inv_freq(head, f32(base), factors=np.float32(scaling["short_factor"])),
            "inv_freq_long": llama_cpp_inv_freq(head, f32(base), factors=np.float32(scaling["long_factor"])),
            "attention_factor": f32(attn),
        }
    }

    # Gemma 3: a scaled global base, and the sliding-window layers' own.
    gemma = json.loads((CONFIGS / "gemma3_text_v4.json").read_text())
    head = gemma["head_dim"]
    write(
        "gemma3",
        "gemma3",
        {
            "{arch}.context_length": ("uint32", gemma["max_position_embeddings"]),
            "{arch}.embedding_length": ("uint32", gemma["hidden_size"]),
            "{arch}.attention.head_count": ("uint32", gemma["num_attention_heads"]),
            "{arch}.attention.key_length": ("uint32", head),
            "{arch}.rope.freq_base": ("float32", gemma["rope_theta"]),
            "{arch}.rope.freq_base_swa": ("float32", gemma["rope_local_base_freq"]),
            "{arch}.rope.scaling.type": ("string", RopeScalingType.LINEAR.value),
            "{arch}.rope.scaling.factor": ("float32", gemma["rope_scaling"]["factor"]),
        },
    )
    expected["gemma3"] = {
        "full_attention": {
            "inv_freq": llama_cpp_inv_freq(
                head, f32(gemma["rope_theta"]), 1.0 / f32(gemma["rope_scaling"]["factor"])
            ),
            "attention_factor": 1.0,
        },
        "sliding_attention": {
            "inv_freq": llama_cpp_inv_freq(head, f32(gemma["rope_local_base_freq"])),
            "attention_factor": 1.0,
        },
    }

    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    (HERE / "versions.txt").write_text(
        "".join(f"{p} {importlib.metadata.version(p)}\n" for p in ("gguf", "numpy", "torch"))
    )
    for path in sorted(HERE.glob("*.gguf")):
        print(path.name, path.stat().st_size)


if __name__ == "__main__":
    main()
