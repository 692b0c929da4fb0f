"""poslab.assert_rope on real code: transformers' own rotary embedding classes and
apply_rotary_pos_emb, configured from real models' config.json (the files in assets/models, as
their authors published them, and the same configs round-tripped through transformers'
config classes, which write the v5 dialect). Every correct implementation must pass; each bug
injected into the same code must fail, and be named."""

import json
import os

import numpy as np
import pytest
import torch
from transformers import GPTNeoXConfig, LlamaConfig, Phi3Config, Qwen2Config
from transformers.models.gpt_neox.modeling_gpt_neox import (
    GPTNeoXRotaryEmbedding,
    apply_rotary_pos_emb as neox_apply,
)
from transformers.models.llama.modeling_llama import (
    LlamaRotaryEmbedding,
    apply_rotary_pos_emb,
    rotate_half,
)
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding
from transformers.models.qwen2.modeling_qwen2 import Qwen2RotaryEmbedding

import poslab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def model(name):
    """A shipped model's config.json: its path and its fields."""
    path = os.path.join(ROOT, "assets", "models", f"{name}.json")
    with open(path, encoding="utf-8") as file:
        return path, json.load(file)


def small(fields, heads=2):
    """The model's positional settings on a head count small enough to test quickly: the head
    width kept."""
    fields = {k: v for k, v in fields.items() if k not in ("architectures", "auto_map", "torch_dtype")}
    head_dim = fields.get("head_dim") or fields["hidden_size"] // fields["num_attention_heads"]
    fields.update(hidden_size=head_dim * heads, num_attention_heads=heads, num_key_value_heads=heads, head_dim=head_dim)
    return fields


def hf_rotation(rope, apply=apply_rotary_pos_emb):
    """transformers' rotation of q as its attention layers call it."""

    def rotate(x, position_ids):
        cos, sin = rope(x, position_ids)
        return apply(x, x, cos, sin)[0]

    return rotate


def llama31():
    path, fields = model("llama-3.1-8b")
    return path, LlamaConfig(**small(fields))


def qwen_yarn():
    path, fields = model("qwen2.5-7b-instruct-yarn")
    return path, Qwen2Config(**small(fields))


def phi3_longrope():
    path, fields = model("phi-3-vision-128k-instruct")
    fields = small(fields)
    scaling = fields.pop("rope_scaling")
    # Phi-3's first configs call LongRoPE "su"; transformers v5 asks for its own spelling.
    fields["rope_parameters"] = {
        "rope_type": "longrope",
        "rope_theta": fields.pop("rope_theta", 10000.0),
        "long_factor": scaling["long_factor"],
        "short_factor": scaling["short_factor"],
        "original_max_position_embeddings": fields["original_max_position_embeddings"],
    }
    return path, Phi3Config(**fields)


def neox():
    path, fields = model("gpt-neox-20b")
    return path, GPTNeoXConfig(**small(fields))


def correct_cases():
    llama_path, llama = llama31()
    qwen_path, qwen = qwen_yarn()
    phi_path, phi = phi3_longrope()
    neox_path, neox_config = neox()
    dynamic = LlamaConfig(
        hidden_size=256, num_attention_heads=2, head_dim=128, max_position_embeddings=4096,
        rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
    )
    linear = LlamaConfig(
        hidden_size=256, num_attention_heads=2, head_dim=128,
        rope_parameters={"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
    )
    return {
        # Llama 3.1: its config.json as published (v4 dialect), and as transformers holds it.
        "llama3 (config.json)": (hf_rotation(LlamaRotaryEmbedding(llama)), llama_path),
        "llama3 (LlamaConfig)": (hf_rotation(LlamaRotaryEmbedding(llama)), llama),
        "yarn (Qwen2.5)": (hf_rotation(Qwen2RotaryEmbedding(qwen)), qwen_path),
        "longrope (Phi-3)": (hf_rotation(Phi3RotaryEmbedding(phi)), phi),
        "partial rotary (GPT-NeoX)": (hf_rotation(GPTNeoXRotaryEmbedding(neox_config), neox_apply), neox_path),
        "dynamic": (hf_rotation(LlamaRotaryEmbedding(dynamic)), dynamic),
        "linear": (hf_rotation(LlamaRotaryEmbedding(linear)), linear),
    }


@pytest.mark.parametrize("name", list(correct_cases()))
def test_transformers_rotations_pass(name):
    rotate, config = correct_cases()[name]
    report = poslab.assert_rope(rotate, config=config, framework="torch")
    assert report and report.applied["layout"] == "half", report.text
    assert report.worst["position"] >= 0 and report.seconds_in_function < report.seconds


def test_transformers_bfloat16_and_float16_paths_pass():
    _, config = llama31()
    rotate = hf_rotation(LlamaRotaryEmbedding(config))
    for dtype in ("bfloat16", "float16"):
        report = poslab.assert_rope(rotate, config=config, framework="torch", dtype=dtype)
        assert dtype in report.rule


def test_an_interleaved_rotation_passes_as_interleaved():
    # Meta's original Llama code: pairs (2i, 2i + 1) as complex numbers, times e^{i p theta}.
    def meta(x, position_ids):
        dim = x.shape[-1]
        freqs = 1.0 / (500000.0 ** (torch.arange(0, dim, 2).float() / dim))
        angles = torch.outer(position_ids[0].float(), freqs)
        turn = torch.polar(torch.ones_like(angles), angles)
        pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(pairs * turn).flatten(-2)

    report = poslab.assert_rope(meta, dim=128, base=500000, layout="interleaved", framework="torch")
    assert report.applied["layout"] == "interleaved"
    with pytest.raises(AssertionError, match="pairs dims as interleaved"):
        poslab.assert_rope(meta, dim=128, base=500000, layout="half", framework="torch")


def rotate_every_two(x):
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


def bug_cases():
    llama_path, llama = llama31()
    qwen_path, qwen = qwen_yarn()
    neox_path, neox_config = neox()
    rope = LlamaRotaryEmbedding(llama)
    yarn = Qwen2RotaryEmbedding(qwen)
    factor = yarn.attention_scaling

    def with_cos_sin(rope, rotate=rotate_half, positions=lambda p: p, gain=1.0):
        def f(x, p):
            cos, sin = rope(x, positions(p))
            return (x * cos.unsqueeze(1) + rotate(x) * sin.unsqueeze(1)) * gain

        return f

    def interleaved_tables(x, p):
        cos, sin = rope(x, p)
        half = cos.shape[-1] // 2
        cos, sin = (t[..., :half].repeat_interleave(2, -1).unsqueeze(1) for t in (cos, sin))
        return x * cos + rotate_every_two(x) * sin

    unscaled = LlamaRotaryEmbedding(LlamaConfig(**{**llama.to_dict(), "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}))
    fallen = LlamaRotaryEmbedding(
        LlamaConfig(**{**llama.to_dict(), "rope_parameters": {**llama.rope_parameters, "rope_theta": 10000.0}})
    )
    no_factor = Qwen2RotaryEmbedding(qwen)
    no_factor.attention_scaling = 1.0
    neox_rope = GPTNeoXRotaryEmbedding(neox_config)

    def across_the_head(x, p):
        cos, sin = neox_rope(x, p)
        r = cos.shape[-1]
        turned = x[..., :r] * cos.unsqueeze(1) + rotate_half(x)[..., :r] * sin.unsqueeze(1)
        return torch.cat([turned, x[..., r:]], -1)

    return {
        "halves swapped for interleaved": (interleaved_tables, llama_path, "pairs dims as interleaved"),
        "tables of one layout, rotation of the other": (with_cos_sin(rope, rotate_every_two), llama_path, "one layout for the tables and another"),
        "scaling dropped": (with_cos_sin(unscaled), llama_path, "the llama3 scaling is read but not applied"),
        "base fallen back to 10000": (with_cos_sin(fallen), llama_path, "base 10000, not 500000"),
        "attention factor squared": (with_cos_sin(yarn, gain=factor), qwen_path, "squared"),
        "attention factor dropped": (with_cos_sin(no_factor), qwen_path, "not scaled by the attention factor"),
        "partial rotary pairs across the whole head": (across_the_head, neox_path, "rotate_half across the whole head"),
        "position ids shifted by one": (with_cos_sin(rope, positions=lambda p: p + 1), llama_path, "position p as p + 1"),
        "positions cast to float16": (with_cos_sin(rope, positions=lambda p: p.half()), llama_path, "cast to float16"),
        "positions cast to bfloat16": (with_cos_sin(rope, positions=lambda p: p.bfloat16()), llama_path, "cast to bfloat16"),
        "not a rotation of pairs": (lambda x, p: x + 0.1 * torch.roll(x, 1, -1), llama_path, "not a rotation of pairs"),
    }


@pytest.mark.parametrize("name", list(bug_cases()))
def test_each_injected_bug_fails_and_is_named(name):
    rotate, config, named = bug_cases()[name]
    with pytest.raises(AssertionError) as raised:
        poslab.assert_rope(rotate, config=config, framework="torch")
    message = str(raised.value)
    assert "MISMATCH" in message and "first differs at position" in message
    causes = [line for line in message.splitlines() if line.startswith("cause: ")]
    assert any(named in cause for cause in causes), message
    print(f"\n{name}:\n  " + "\n  ".join(causes))


def test_the_numpy_framework_and_options_in_place_of_a_config():
    def numpy_rope(x, position_ids):
        dim = x.shape[-1]
        freqs = 1.0 / (10000.0 ** (np.arange(0, dim, 2) / dim))
        angles = np.outer(position_ids[0], freqs)
        cos, sin = np.cos(np.concatenate([angles] * 2, -1)), np.sin(np.concatenate([angles] * 2, -1))
        halves = np.concatenate([-x[..., dim // 2:], x[..., : dim // 2]], -1)
        return (x * cos + halves * sin).astype(x.dtype)

    options = dict(dim=64, layout="half")
    report = poslab.assert_rope(numpy_rope, positions=[0, 1, 2, 5000, 100000], **options)
    assert report and report.max_abs_error < 1e-5 and report.worst["position"] in (5000, 100000)
    with pytest.raises(AssertionError, match="base 10000, not 500000"):
        poslab.assert_rope(numpy_rope, base=500000, **options)
    # The command line's default pairing is the interleaved one.
    with pytest.raises(AssertionError, match="pairs dims as halves"):
        poslab.assert_rope(numpy_rope, dim=64)
    with pytest.raises(ValueError, match="--base 1 is not allowed"):
        poslab.assert_rope(numpy_rope, base=1, **options)
    with pytest.raises(ValueError, match="it must return the rotated x"):
        poslab.assert_rope(lambda x, p: x[..., :2], **options)


def test_caches_transformers_made_check_and_identify_as_the_cli_reads_them():
    llama_path, llama = llama31()
    rope = LlamaRotaryEmbedding(llama)
    positions = torch.arange(0, 256)[None]
    cos, sin = rope(torch.zeros(1, 1, 256, 128), positions)
    verdict = poslab.assert_table(cos[0], "rope-cos", seq=256, config=llama_path)
    assert verdict.matches
    wrong = poslab.check(sin[0], "rope-sin", seq=256, dim=128, base=500000, layout="half")
    assert not wrong and wrong.diagnosis is not None
    found = poslab.identify(cos[0])
    assert found and "Llama 3 scaling" in found.text and "base 500000" in found.text


def test_rope_config_reads_both_dialects_into_the_tables_options():
    llama_path, llama = llama31()
    published, held = poslab.rope_config(llama_path), poslab.rope_config(llama)
    assert published.options == held.options
    assert published.options["scaling"] == "llama3" and published.options["base"] == 500000
    assert published.options["layout"] == "half" and published.options["dim"] == 128
    # The options reproduce the cos cache transformers computes for the model.
    seq = 64
    cos, _ = LlamaRotaryEmbedding(llama)(torch.zeros(1, 1, seq, 128), torch.arange(seq)[None])
    assert poslab.check(cos[0], "rope-cos", seq=seq, **published.options)
    _, qwen = qwen_yarn()
    yarn = poslab.rope_config(qwen)
    assert abs(yarn.attention_factor - Qwen2RotaryEmbedding(qwen).attention_scaling) < 1e-6
    with pytest.raises(ValueError, match="does not use RoPE"):
        poslab.rope_config(os.path.join(ROOT, "assets", "models", "bloom-560m.json"))
    with pytest.raises(OSError):
        poslab.rope_config("/nonexistent/config.json")


def test_a_rope_per_layer_type_gives_each_layer_types_tables():
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    # The Gemma 3 config of the issue: a scaled global RoPE, a local one with its own base.
    gemma = Gemma3TextConfig(
        head_dim=64,
        num_hidden_layers=6,
        rope_parameters={
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
    )
    every = poslab.rope_configs(gemma)
    assert set(every) == {"full_attention", "sliding_attention"}
    full, sliding = every["full_attention"], every["sliding_attention"]
    assert full.options["scaling"] == "linear" and full.options["base"] == 1e6
    assert sliding.options["base"] == 1e4 and "scaling" not in sliding.options
    assert full.sources["base"] == "rope_parameters.full_attention.rope_theta"
    assert full.layer_type == "full_attention" and full.layer_types == ["full_attention"]
    assert full.warnings == []
    # Each layer type's options give the cos cache transformers computes for those layers.
    rope = Gemma3RotaryEmbedding(gemma)
    seq = 64
    for layer_type, config in every.items():
        cos, _ = rope(torch.zeros(1, 1, seq, 64), torch.arange(seq)[None], layer_type)
        assert poslab.check(cos[0], "rope-cos", seq=seq, **config.options), layer_type
        assert poslab.rope_config(gemma, layer_type=layer_type).options == config.options
    with pytest.raises(ValueError, match="full_attention, sliding_attention"):
        poslab.rope_config(gemma)
    # A model with one RoPE is keyed by None.
    _, qwen = qwen_yarn()
    assert list(poslab.rope_configs(qwen)) == [None]


def test_rope_config_names_each_fields_source_and_warns_of_ignored_ones():
    llama = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "rope_theta": 1e6,
        "rope_scaling": {
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 32768,
            "attention_factor": 1.2,
            "mscale": 0.7,
        },
    }
    config = poslab.rope_config(llama)
    assert config.attention_factor == 1.2
    assert config.sources["attention_factor"] == "rope_scaling.attention_factor"
    assert config.sources["base"] == "rope_theta"
    assert config.sources["beta_fast"] == "default"
    assert any(w.startswith("rope_scaling.mscale: is ignored") for w in config.warnings)


def test_a_gguf_file_gives_llama_cpps_rope():
    path = os.path.join(ROOT, "tests", "data", "gguf", "llama31.gguf")
    config = poslab.rope_config(path)
    # llama.cpp runs interleaved pairs on rows its converter permuted; the frequencies are
    # the Llama 3 scaling's, from the rope_freqs tensor.
    assert config.options["layout"] == "interleaved"
    assert config.sources["inv_freq"].startswith("base^(-2i/R) / rope_freqs.weight")
    options = {k: v for k, v in config.options.items() if k != "layout"}
    inv_freq = poslab.table("rope-inv-freq", **options)
    expected = poslab.table(
        "rope-inv-freq", dim=128, base=500000, scaling="llama3", factor=8,
        low_freq_factor=1, high_freq_factor=4, original_max_position_embeddings=8192,
    )
    assert np.allclose(inv_freq, expected, rtol=1e-6, atol=0)
    gemma = poslab.rope_configs(os.path.join(ROOT, "tests", "data", "gguf", "gemma3.gguf"))
    assert gemma["sliding_attention"].options["base"] == 10000


def test_assert_rope_checks_each_layer_type_of_gemma3():
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3.modeling_gemma3 import (
        Gemma3RotaryEmbedding,
        apply_rotary_pos_emb as gemma_apply,
    )

    gemma = Gemma3TextConfig(
        head_dim=64,
        num_hidden_layers=6,
        rope_parameters={
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
    )
    rope = Gemma3RotaryEmbedding(gemma)

    def rotation(layer_type):
        return lambda x, p: gemma_apply(x, x, *rope(x, p, layer_type))[0]

    for layer_type in ("full_attention", "sliding_attention"):
        assert poslab.assert_rope(
            rotation(layer_type), config=gemma, layer_type=layer_type, framework="torch"
        )
    # The sliding layers' RoPE where the full layers' is expected is caught.
    with pytest.raises(AssertionError):
        poslab.assert_rope(
            rotation("sliding_attention"), config=gemma, layer_type="full_attention", framework="torch"
        )
    with pytest.raises(ValueError, match="full_attention, sliding_attention"):
        poslab.assert_rope(rotation("sliding_attention"), config=gemma, framework="torch")
