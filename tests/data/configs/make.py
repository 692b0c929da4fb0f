"""Remakes the model configs in this folder and what transformers computes from each.

`tests/config_dialects.rs` reads every `*.json` here (but `expected.json`) with `poslab config`'s
reader and compares the RoPE it finds, layer type by layer type, with what transformers' own
code computes from the same file: the model's rotary embedding module, built from the config
as `from_pretrained` would load it, and its `inv_freq` buffers and attention scaling.

Each config is written in the dialect named by its file: `*_v4.json` the keys a Hub config
written before transformers 5 holds (top-level `rope_theta`, `rope_scaling`, the models' own
legacy keys), `*_v5.json` what transformers 5 writes back (`config.to_dict()` after loading the
v4 one: `rope_parameters`, flat or one per layer type). Run it in a throwaway environment:

    python -m venv /tmp/libenv
    /tmp/libenv/bin/pip install torch transformers numpy
    /tmp/libenv/bin/python tests/data/configs/make.py

The versions used last are written to `versions.txt` beside the configs.
"""

import importlib
import importlib.metadata
import json
import pathlib
import warnings

warnings.filterwarnings("ignore")
HERE = pathlib.Path(__file__).resolve().parent

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import CONFIG_MAPPING  # noqa: E402
from transformers.utils import logging  # noqa: E402

logging.set_verbosity_error()

# Configs as a user's file holds them (the fields that decide positions).
LEGACY = {
    # Llama 3.1: the scaling in rope_scaling, the base at the top.
    "llama31": {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    },
    # Qwen2.5 with YaRN as its model card says to add it: the old `type` key.
    "qwen2_yarn": {
        "model_type": "qwen2",
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {
            "factor": 4.0,
            "original_max_position_embeddings": 32768,
            "type": "yarn",
        },
    },
    # DeepSeek-V2's YaRN: mscale and mscale_all_dim give the attention factor.
    "deepseek_v2_yarn": {
        "model_type": "deepseek_v2",
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "qk_rope_head_dim": 64,
        "max_position_embeddings": 163840,
        "rope_theta": 10000,
        "rope_scaling": {
            "beta_fast": 32,
            "beta_slow": 1,
            "factor": 40,
            "mscale": 0.707,
            "mscale_all_dim": 0.707,
            "original_max_position_embeddings": 4096,
            "type": "yarn",
        },
    },
    # GPT-NeoX (Pythia): a quarter of the head rotates.
    "pythia_partial": {
        "model_type": "gpt_neox",
        "hidden_size": 768,
        "num_attention_heads": 12,
        "max_position_embeddings": 2048,
        "rotary_pct": 0.25,
        "rotary_emb_base": 10000,
    },
    # Gemma 3: a scaled global RoPE on full-attention layers, a local base on sliding ones.
    "gemma3_text": {
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "head_dim": 256,
        "num_hidden_layers": 12,
        "sliding_window_pattern": 6,
        "max_position_embeddings": 131072,
        "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    },
    # ModernBERT: a global and a local base, every third layer global.
    "modernbert": {
        "model_type": "modernbert",
        "hidden_size": 768,
        "num_attention_heads": 12,
        "num_hidden_layers": 22,
        "global_attn_every_n_layers": 3,
        "max_position_embeddings": 8192,
        "global_rope_theta": 160000.0,
        "local_rope_theta": 10000.0,
    },
}

# Configs in transformers 5's own spelling, as a user writes them by hand.
NEW = {
    # The example: one RoPE per layer type under rope_parameters.
    "gemma3_layer_types": {
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "head_dim": 256,
        "num_hidden_layers": 6,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "max_position_embeddings": 131072,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8, "rope_theta": 1e6},
            "sliding_attention": {"rope_theta": 1e4},
        },
    },
    # The same with the sliding layers' base left out: Gemma 3's own local default.
    "gemma3_sliding_default": {
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "head_dim": 256,
        "num_hidden_layers": 6,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "max_position_embeddings": 131072,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default"},
        },
    },
    # A multimodal Gemma 3: the text model's RoPE lives in text_config.
    "gemma3_multimodal": {
        "model_type": "gemma3",
        "text_config": {
            "model_type": "gemma3_text",
            "hidden_size": 2560,
            "num_attention_heads": 8,
            "head_dim": 256,
            "num_hidden_layers": 6,
            "max_position_embeddings": 131072,
            "rope_theta": 1000000.0,
            "rope_local_base_freq": 10000.0,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        },
    },
    # Both spellings at once: transformers 5 takes rope_scaling and the top-level base.
    "llama_both_keys": {
        "model_type": "llama",
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 32.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0},
    },
    # A partial rotary factor that gives an odd width: arange(0, 19, 2) has 10 frequencies.
    "stablelm_odd_partial": {
        "model_type": "stablelm",
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000, "partial_rotary_factor": 0.3},
    },
    # Llama 3 scaling without its original context: transformers 5 takes the context itself.
    "llama3_no_original": {
        "model_type": "llama",
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "max_position_embeddings": 16384,
        "rope_parameters": {
            "rope_type": "llama3",
            "rope_theta": 500000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
        },
    },
}


def rotary_module(config):
    """The model's rotary embedding class, as its attention layers build it."""
    model_type = config.model_type
    for name in (model_type, model_type.replace("-", "_")):
        try:
            module = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
            break
        except ModuleNotFoundError:
            continue
    else:
        # gemma3_text lives in gemma3.
        base = model_type.split("_")[0]
        module = importlib.import_module(f"transformers.models.{base}.modeling_{base}")
    classes = [
        getattr(module, n)
        for n in dir(module)
        if n.endswith("RotaryEmbedding") and "Vision" not in n and "Audio" not in n
    ]
    # The text model's: the one the decoder layers use (its name is the model's own).
    classes.sort(key=len_of_name)
    return classes[0]


def len_of_name(cls):
    return len(cls.__name__)


def computed(config):
    """Per layer type (one `""` when the model has one RoPE): inv_freq and attention factor."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    rotary = rotary_module(text)(text)
    out = {}
    buffers = dict(rotary.named_buffers())
    for name, tensor in buffers.items():
        if name.endswith("original_inv_freq") or not name.endswith("inv_freq"):
            continue
        layer_type = name[: -len("inv_freq")].rstrip("_")
        scaling = getattr(rotary, f"{layer_type}_attention_scaling" if layer_type else "attention_scaling")
        out[layer_type] = {
            "inv_freq": [float(v) for v in tensor.to(torch.float64)],
            "attention_factor": float(scaling),
        }
    return out


def main():
    expected = {}
    for name, legacy in LEGACY.items():
        model_type = legacy["model_type"]
        config = CONFIG_MAPPING[model_type].from_dict(dict(legacy))
        (HERE / f"{name}_v4.json").write_text(json.dumps(legacy, indent=2) + "\n")
        expected[f"{name}_v4"] = computed(config)
        # What transformers 5 writes back, read again as a user's file would be.
        written = json.loads(config.to_json_string(use_diff=False))
        (HERE / f"{name}_v5.json").write_text(json.dumps(written, indent=2) + "\n")
        expected[f"{name}_v5"] = computed(CONFIG_MAPPING[model_type].from_dict(dict(written)))
    for name, new in NEW.items():
        config = CONFIG_MAPPING[new["model_type"]].from_dict(json.loads(json.dumps(new)))
        (HERE / f"{name}.json").write_text(json.dumps(new, indent=2) + "\n")
        expected[name] = computed(config)
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    for name, layers in expected.items():
        print(name, {k or "(one)": (len(v["inv_freq"]), round(v["attention_factor"], 6)) for k, v in layers.items()})
    versions = "".join(
        f"{p} {importlib.metadata.version(p)}\n" for p in ("torch", "transformers")
    )
    (HERE / "versions.txt").write_text(versions)


if __name__ == "__main__":
    main()
