"""poslab.table("rope-stretch") against transformers' own frequency code: for each scaling,
the ratio of the frequencies transformers computes without the scaling to those it computes
with it, on the shipped model configs (Llama 3.1, Qwen2.5 with YaRN, Phi-3 with LongRoPE) and
on linear and dynamic configs."""

import numpy as np
import pytest
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

import poslab
from test_rotation import llama31, phi3_longrope, qwen_yarn


def hf_stretch(config, seq_len=None):
    """transformers' unscaled inverse frequencies over its scaled ones (float32 each, as it
    computes them; the ratio in float64)."""
    rope_type = config.rope_parameters["rope_type"]
    scaled, _ = ROPE_INIT_FUNCTIONS[rope_type](config, None, seq_len)
    plain, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    return plain.double().numpy() / scaled.double().numpy()


def test_the_stretch_of_each_models_scaling_is_transformers():
    # Two frequencies rounded to float32 each: their ratio is within 2.4e-7 of the exact one.
    for make in (llama31, qwen_yarn):
        path, config = make()
        expected = hf_stretch(config)
        got = poslab.table("rope-stretch", config=path, dtype="f64")
        np.testing.assert_allclose(got, expected, rtol=3e-7, atol=0)
        # Both ends: pairs left alone, and pairs slowed by the whole factor.
        factor = config.rope_parameters["factor"]
        assert got[0] == pytest.approx(1.0, abs=1e-12) and got[-1] == pytest.approx(factor, rel=1e-3)


def test_longrope_stretches_by_its_short_factors_then_its_long_ones():
    path, config = phi3_longrope()
    original = config.rope_parameters["original_max_position_embeddings"]
    parameters = config.rope_parameters
    for seq, factors in ((original, "short_factor"), (original + 1, "long_factor")):
        got = poslab.table("rope-stretch", config=path, seq=seq, dtype="f64")
        np.testing.assert_allclose(got, hf_stretch(config, seq), rtol=3e-7, atol=0)
        # The factor lists are the stretch itself, published in the config.
        np.testing.assert_allclose(got, parameters[factors], rtol=1e-12, atol=0)


def test_linear_and_dynamic():
    linear = LlamaConfig(
        hidden_size=256, num_attention_heads=2, head_dim=128,
        rope_parameters={"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
    )
    got = poslab.table("rope-stretch", dim=128, scaling="linear", factor=4, dtype="f64")
    np.testing.assert_array_equal(got, np.full(64, 4.0))
    np.testing.assert_allclose(got, hf_stretch(linear), rtol=3e-7, atol=0)
    dynamic = LlamaConfig(
        hidden_size=256, num_attention_heads=2, head_dim=128, max_position_embeddings=4096,
        rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
    )
    for seq in (4096, 16384):
        got = poslab.table(
            "rope-stretch", dim=128, scaling="dynamic", factor=2, max_position_embeddings=4096, seq=seq, dtype="f64"
        )
        np.testing.assert_allclose(got, hf_stretch(dynamic, seq), rtol=3e-7, atol=0)
    assert got[0] == 1.0 and got[-1] > 3.0


def test_the_stretch_refuses_what_it_does_not_read():
    with pytest.raises(ValueError, match=r"--seq changes nothing for rope-stretch under --scaling linear"):
        poslab.table("rope-stretch", dim=128, scaling="linear", factor=4, seq=10)
    with pytest.raises(ValueError, match=r"--inv-freq does not apply to rope-stretch"):
        poslab.table("rope-stretch", dim=4, inv_freq=[1, 0.5])
