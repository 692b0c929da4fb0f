"""Remakes the tables in this folder with the libraries' own code.

These are what `tests/libraries.rs` checks poslab against: each file is what a library computes,
in the precision it computes in, saved as it returns it. Run it in a throwaway environment:

    python -m venv /tmp/libenv
    /tmp/libenv/bin/pip install torch diffusers transformers x-transformers "mlx[cpu]" torchtune numpy
    /tmp/libenv/bin/pip install --no-deps vllm  # then each module its import asks for
    /tmp/libenv/bin/python tests/data/libraries/make.py

The versions used last are written to `versions.txt` beside the tables.
"""

import importlib.metadata
import pathlib
import warnings

import numpy as np

warnings.filterwarnings("ignore")
HERE = pathlib.Path(__file__).resolve().parent


def save(name, array):
    array = np.ascontiguousarray(array)
    np.save(HERE / f"{name}.npy", array)
    print(f"{name}.npy {array.dtype} {list(array.shape)}")


def sinusoidal():
    import torch
    from diffusers.models.embeddings import get_timestep_embedding
    from x_transformers.x_transformers import ScaledSinusoidalEmbedding

    # Stable Diffusion's time embedding: cos first, frequencies exp(-ln(10000) i / half).
    steps = torch.arange(64)
    save(
        "diffusers_timestep_flip",
        get_timestep_embedding(steps, 32, flip_sin_to_cos=True, downscale_freq_shift=0).numpy(),
    )
    # diffusers' default shift of 1 (the last frequency exactly 1/max_period), late timesteps,
    # another max_period.
    steps = torch.arange(936, 1000)
    save(
        "diffusers_timestep_shift1",
        get_timestep_embedding(steps, 64, max_period=2000).numpy(),
    )
    # x-transformers' scaled sinusoidal embedding at its initial scale dim^-0.5.
    embedding = ScaledSinusoidalEmbedding(32)
    with torch.no_grad():
        save("xtransformers_scaled", embedding(torch.zeros(1, 64, 32)).numpy())

    import mlx.core as mx
    import mlx.nn as mnn

    # MLX's encoding: frequencies from 1 down to 1e-4, scale sqrt(2/dims), cos first.
    encoding = mnn.SinusoidalPositionalEncoding(32, cos_first=True)
    save("mlx_sinusoidal_cos_first", np.array(encoding(mx.arange(64))))


def alibi():
    import torch
    from x_transformers.x_transformers import AlibiPositionalBias

    # x-transformers: 4 sloped heads of 6, the last 5 queries over 12 keys (a decoding step
    # with a cache), -slope * |i - j| in both directions.
    bias = AlibiPositionalBias(heads=4, total_heads=6)
    with torch.no_grad():
        save("xtransformers_alibi_window", bias(5, 12).numpy())

    import mlx.core as mx
    import mlx.nn as mnn

    # MLX: 6 heads, queries 16..19 (offset 16) over keys 0..19: [1, 6, 4, 20].
    matrix = mnn.ALiBi.create_alibi_matrix(
        q_sequence_length=20, k_sequence_length=20, num_heads=6, offset=16
    )
    save("mlx_alibi_offset", np.array(matrix))


def load_file(module, relative):
    """A module of an installed package, loaded on its own: torchtune's package imports
    torchao, whose current releases it no longer imports cleanly; its RoPE modules need only
    torch."""
    import importlib.util

    spec = importlib.util.find_spec(module.split(".")[0])
    path = pathlib.Path(spec.origin).parent / relative
    loader = importlib.util.spec_from_file_location(module, path)
    loaded = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(loaded)
    return loaded


def rope():
    tune = load_file("torchtune.modules.position_embeddings", "modules/position_embeddings.py")
    tune31 = load_file(
        "torchtune.models.llama3_1._position_embeddings", "models/llama3_1/_position_embeddings.py"
    )
    # torchtune's cache: [max_seq_len, dim/2, 2] (cos, sin) pairs.
    save("torchtune_rope_cache", tune.RotaryPositionalEmbeddings(64, max_seq_len=128).cache.numpy())
    # Llama 3.1's scaling, as torchtune computes it (defaults: factor 8, 1, 4, 8192).
    save(
        "torchtune_llama3_cache",
        tune31.Llama3ScaledRoPE(64, max_seq_len=256, base=500_000).cache.numpy(),
    )

    try:
        from vllm.model_executor.layers.rotary_embedding.base import RotaryEmbedding
        from vllm.model_executor.layers.rotary_embedding.common import yarn_get_mscale
        from vllm.model_executor.layers.rotary_embedding.ntk_scaling_rope import (
            NTKScalingRotaryEmbedding,
        )
        from vllm.model_executor.layers.rotary_embedding.yarn_scaling_rope import (
            YaRNScalingRotaryEmbedding,
        )
    except ImportError as missing:
        print(f"vLLM's tables not remade: {missing}")
        return

    def cache(cls, **fields):
        # vLLM's CustomOp constructor needs a running engine's config; the cache is computed
        # by the class's own _compute_cos_sin_cache from these attributes, as __init__ sets
        # them.
        layer = cls.__new__(cls)
        for name, value in fields.items():
            setattr(layer, name, value)
        return layer._compute_cos_sin_cache().numpy()

    plain = dict(head_size=64, rotary_dim=64, max_position_embeddings=128, base=10000.0)
    save("vllm_cos_sin_cache", cache(RotaryEmbedding, **plain))
    # YaRN x4 from 64 positions on a partial rotary width of 32: the cache is 256 positions,
    # every value times mscale.
    save(
        "vllm_yarn_cos_sin_cache",
        cache(
            YaRNScalingRotaryEmbedding,
            head_size=64,
            rotary_dim=32,
            max_position_embeddings=64,
            base=10000.0,
            scaling_factor=4.0,
            beta_fast=32,
            beta_slow=1,
            truncate=True,
            mscale=float(yarn_get_mscale(4.0)),
        ),
    )
    # Fixed NTK (mixed_b unset): base * factor, every frequency divided by factor^(2/R).
    save(
        "vllm_ntk_cos_sin_cache",
        cache(NTKScalingRotaryEmbedding, scaling_factor=2.0, mixed_b=None, **plain),
    )


def versions():
    names = ["torch", "diffusers", "transformers", "x-transformers", "mlx", "torchtune", "vllm", "numpy"]
    lines = []
    for name in names:
        try:
            lines.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            lines.append(f"{name} (not installed)")
    (HERE / "versions.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sinusoidal()
    alibi()
    rope()
    versions()
