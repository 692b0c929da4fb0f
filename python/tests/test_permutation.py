"""poslab.assert_permutation on transformers' own permutations between RoPE's pair layouts:
its GGUF loader's reverse permute (`LlamaTensorProcessor`, which un-permutes llama.cpp's
interleaved q and k rows into Hugging Face's rotate_half order) and its checkpoint conversion
op `PermuteForRope`, for a grouped-query model of 32 query heads and 8 kv heads (Llama 3 70B's
shape). The correct ones pass; the grouped-query bug (k permuted with the query head count),
the loader without `num_key_value_heads` (not permuted) and the inverse op fail, named."""

import numpy as np
import pytest
import torch
from transformers import LlamaConfig
from transformers.core_model_loading import PermuteForRope
from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

import poslab

HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128


def gguf_loader(config):
    """transformers' GGUF loader as it processes a layer's q and k (NumPy arrays): the tensor
    name says which, the config's head counts decide the permutation."""
    processor = LlamaTensorProcessor(config=config)

    def permute(w, n_heads):
        name = "blk.0.attn_q.weight" if n_heads == HEADS else "blk.0.attn_k.weight"
        return processor.process(w, name).weights

    return permute


def test_transformers_gguf_loader_reverse_permute_passes():
    config = {"num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS}
    report = poslab.assert_permutation(
        gguf_loader(config), heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM, hidden=64
    )
    assert report.passes and report.wrong_heads == [] and report.largest_change < 1e-12
    assert max(m for m, _ in report.positions) > 100_000
    print(report.text)


def test_reverse_permute_called_as_the_loader_calls_it_passes_in_torch_too():
    processor = LlamaTensorProcessor(config={})
    permute = lambda w, n: torch.from_numpy(processor._reverse_permute_weights(w.numpy(), HEADS, n))
    report = poslab.assert_permutation(
        permute, heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM, hidden=32, framework="torch"
    )
    assert report.passes


def test_permute_for_rope_on_a_grouped_query_key_is_named():
    config = LlamaConfig(num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, hidden_size=HEADS * HEAD_DIM, head_dim=HEAD_DIM)
    op = PermuteForRope()
    with pytest.raises(AssertionError) as failure:
        poslab.assert_permutation(
            lambda w, n: op._permute_for_rope(w, config),
            heads=HEADS,
            kv_heads=KV_HEADS,
            head_dim=HEAD_DIM,
            hidden=64,
            framework="torch",
        )
    message = str(failure.value)
    print(message)
    assert "query heads 0-31 of 32 differ" in message
    assert "W_q (32 heads of 128): its rows are right" in message
    assert "8 of 8 heads differ: 0-7" in message
    assert "permuted as 32 heads of 32 rows (the query head count) where this key projection has 8 kv heads of 128" in message
    # Where the model is not grouped-query, the same op is right.
    poslab.assert_permutation(
        lambda w, n: op._permute_for_rope(w, config), heads=HEADS, head_dim=HEAD_DIM, hidden=16, framework="torch"
    )


def test_the_loader_without_the_kv_head_count_and_the_inverse_are_named():
    no_kv = LlamaTensorProcessor(config={"num_attention_heads": HEADS})
    with pytest.raises(AssertionError) as failure:
        poslab.assert_permutation(
            lambda w, n: no_kv.process(w, "blk.0.attn_k.weight").weights,
            heads=HEADS,
            kv_heads=KV_HEADS,
            head_dim=HEAD_DIM,
            hidden=16,
        )
    print(failure.value)
    assert "it was not permuted" in str(failure.value)
    config = LlamaConfig(num_attention_heads=HEADS, num_key_value_heads=HEADS, head_dim=HEAD_DIM, hidden_size=HEADS * HEAD_DIM)
    inverse = PermuteForRope(inverse=True)
    with pytest.raises(AssertionError) as failure:
        poslab.assert_permutation(
            lambda w, n: inverse._permute_for_rope(w, config), heads=HEADS, head_dim=HEAD_DIM, hidden=16, framework="torch"
        )
    print(failure.value)
    assert "permuted half-to-interleaved, the other way from interleaved-to-half" in str(failure.value)
    # The inverse is right the other way.
    poslab.assert_permutation(
        lambda w, n: inverse._permute_for_rope(w, config),
        heads=HEADS,
        head_dim=HEAD_DIM,
        hidden=16,
        framework="torch",
        direction="half-to-interleaved",
    )


def test_bad_arguments_are_value_errors():
    identity = lambda w, n: w
    cases = [
        (dict(heads=32, kv_heads=3, head_dim=128), "--kv-heads 3 is not allowed with --heads 32"),
        (dict(heads=32, head_dim=7), "--head-dim 7 is not allowed"),
        (dict(heads=0, head_dim=8), "--heads 0 is not allowed"),
        (dict(heads=2, head_dim=8, direction="sideways"), 'direction="sideways" is not allowed'),
        (dict(heads=2, head_dim=8, framework="jax"), "framework='jax' is not allowed"),
        (dict(heads=2.5, head_dim=8), "heads=2.5 is not allowed"),
        (dict(heads=2, head_dim=8, hidden=0), "hidden=0 is not allowed"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            poslab.assert_permutation(identity, **kwargs)
    with pytest.raises(ValueError, match="the function returned shape"):
        poslab.assert_permutation(lambda w, n: w[:-2], heads=2, head_dim=8)


def test_the_permutation_table_is_the_gguf_loaders_row_order():
    """poslab.table("rope-permutation") indexes a weight as transformers' GGUF loader permutes
    it, for q (32 heads) and k (8 kv heads), and the inverse direction undoes it."""
    rng = np.random.default_rng(3)
    processor = LlamaTensorProcessor(config={})
    for heads in (HEADS, KV_HEADS):
        w = rng.standard_normal((heads * HEAD_DIM, 4)).astype(np.float32)
        order = poslab.table("rope-permutation", heads=heads, head_dim=HEAD_DIM)
        assert order.dtype == np.int32 and order.shape == (heads * HEAD_DIM,)
        expected = processor._reverse_permute_weights(w, heads, heads)
        assert np.array_equal(w[order], expected)
        back = poslab.table("rope-permutation", heads=heads, head_dim=HEAD_DIM, direction="half-to-interleaved")
        assert np.array_equal(expected[back], w)
