"""Remakes the tables in this folder with the libraries' own code.

These are what `tests/libraries.rs` checks poslab against: each file is what a library computes,
in the precision it computes in, saved as it returns it. Run it in a throwaway environment:

    python -m venv /tmp/libenv
    /tmp/libenv/bin/pip install torch diffusers transformers x-transformers rotary-embedding-torch \
        "mlx[cpu]" torchtune timm keras-hub numpy
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
    # MLX's causal ALiBi as its attention adds it: the biases plus its additive causal mask,
    # the float32 minimum (not -inf) above the diagonal; 12 heads, 64 positions.
    scores = mx.zeros((1, 12, 64, 64))
    mask = mnn.MultiHeadAttention.create_additive_causal_mask(64)
    save("mlx_causal_alibi", np.array(mnn.ALiBi()(scores, mask=mask)))

    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    # BLOOM's per-key biases m_h * j broadcast over 12 queries of 4 heads and masked above the
    # diagonal with the float32 minimum, as a causal decoder adds them to its scores.
    heads, seq = 4, 12
    alibi = build_alibi_tensor(torch.ones(1, seq), heads, torch.float32)
    above = torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1)
    full = alibi.expand(heads, seq, seq).masked_fill(above, torch.finfo(torch.float32).min)
    save("bloom_full_causal_alibi", full.numpy())


def padded_sinusoidal():
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding

    # M2M100's (fairseq's) table: t2t spacing, split, row 1 (padding_idx) zeroed; 1024 rows so
    # that float32 rounding shows at the default tolerance.
    save(
        "m2m100_padded_sinusoidal",
        M2M100SinusoidalPositionalEmbedding.get_embedding(1024, 64, padding_idx=1).numpy(),
    )


def pixel_rope():
    import torch
    from rotary_embedding_torch import RotaryEmbedding

    # rotary-embedding-torch's pixel frequencies, linspace(1, max_freq / 2, dim / 2) * pi,
    # rotating a [12, 16] input in interleaved pairs.
    rotary = RotaryEmbedding(dim=16, freqs_for="pixel", max_freq=64)
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, 12, 16, generator=generator)
    with torch.no_grad():
        save("rotary_pixel_freqs", rotary.freqs.detach().numpy())
        save("rotary_pixel_input", q[0].numpy())
        save("rotary_pixel_rotated", rotary.rotate_queries_or_keys(q)[0].numpy())


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


def axes():
    import types

    import torch
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed
    from diffusers.pipelines.flux.pipeline_flux import FluxPipeline
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import (
        Qwen2VLModel,
        Qwen2VLRotaryEmbedding,
    )

    # Qwen2-VL: 3 text tokens, an image of 2 x (4 x 6) patches merged 2 x 2 (a 2 x 3 grid of
    # tokens), 2 text tokens. get_rope_index reads only the merge size from its model, and
    # the vision position ids it builds.
    model = types.SimpleNamespace(
        config=types.SimpleNamespace(vision_config=types.SimpleNamespace(spatial_merge_size=2))
    )
    model.get_vision_position_ids = types.MethodType(Qwen2VLModel.get_vision_position_ids, model)
    types_ = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0]])
    input_ids = torch.zeros_like(types_)
    position_ids, _ = Qwen2VLModel.get_rope_index(
        model, input_ids, types_, image_grid_thw=torch.tensor([[1, 4, 6]])
    )
    save("qwen2vl_position_ids", position_ids[:, 0, :].numpy())
    # head_dim 32 (16 pairs) split 4, 6, 6 among time, height and width.
    config = Qwen2VLTextConfig(
        hidden_size=64,
        num_attention_heads=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 6, 6]},
    )
    rotary = Qwen2VLRotaryEmbedding(config)
    x = torch.zeros(1, 11, 64)
    cos, sin = rotary(x, position_ids)
    save("qwen2vl_mrope_cos", cos[0].numpy())
    save("qwen2vl_mrope_sin", sin[0].numpy())

    # Flux: 4 text tokens (ids 0) then a 3 x 5 latent grid, ids [0, h, w] in float32;
    # axes_dim 8, 12, 12.
    image_ids = FluxPipeline._prepare_latent_image_ids(1, 3, 5, "cpu", torch.float32)
    ids = torch.cat([torch.zeros(4, 3), image_ids], dim=0)
    save("flux_ids", ids.numpy())
    cos, sin = FluxPosEmbed(theta=10000, axes_dim=[8, 12, 12])(ids)
    save("flux_rope_cos", cos.numpy())
    save("flux_rope_sin", sin.numpy())


def positions():
    import torch
    from diffusers.models.embeddings import get_1d_rotary_pos_embed, get_timestep_embedding
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    # Flow-matching timesteps: float32 values in [0, 1000), SD3's and Flux's time projection
    # (cos first, shift 0).
    generator = torch.Generator().manual_seed(1)
    steps = (torch.rand(24, generator=generator) * 1000).float()
    save("diffusers_float_timesteps", steps.numpy())
    save(
        "diffusers_float_timestep_embedding",
        get_timestep_embedding(steps, 64, flip_sin_to_cos=True, downscale_freq_shift=0).numpy(),
    )
    # Timesteps in [0, 1] and scale 1000: the scale multiplies the float32 angle.
    unit = torch.rand(24, generator=generator).float()
    save("diffusers_unit_timesteps", unit.numpy())
    save("diffusers_scaled_timestep_embedding", get_timestep_embedding(unit, 32, scale=1000).numpy())
    # diffusers' Timesteps module with scale 1000 over 64 evenly spaced timesteps k/64: rows at
    # positions k * 15.625, the scale applied to the float32 angle.
    from diffusers.models.embeddings import Timesteps

    module = Timesteps(32, flip_sin_to_cos=False, downscale_freq_shift=1, scale=1000)
    save("diffusers_timesteps_scale1000", module(torch.arange(64) / 64).numpy())
    # diffusers' 1D RoPE at half-step positions (a crop or an interpolated grid): cos and sin,
    # each angle repeated twice in a row.
    pos = torch.arange(20, dtype=torch.float32) * 0.5 + 3.0
    cos, sin = get_1d_rotary_pos_embed(32, pos, theta=10000.0, use_real=True, repeat_interleave_real=True)
    save("diffusers_half_step_rope_cos", cos.numpy())
    save("diffusers_half_step_rope_sin", sin.numpy())
    # Llama's cos cache for a packed batch: two sequences, positions restarting at 0.
    ids = torch.cat([torch.arange(7), torch.arange(9)]).unsqueeze(0)
    save("llama_packed_position_ids", ids.numpy())
    config = LlamaConfig(hidden_size=256, num_attention_heads=4, rope_theta=500000.0)
    cos, _ = LlamaRotaryEmbedding(config)(torch.zeros(1, 16, 256), ids)
    save("llama_packed_rope_cos", cos[0].numpy())


def axial_rope():
    import torch
    from diffusers.models.embeddings import get_2d_rotary_pos_embed
    from rotary_embedding_torch import RotaryEmbedding
    from timm.layers.pos_embed_sincos import build_rotary_pos_embed

    # timm's axial RoPE (EVA): a 4 x 6 grid of patches, dim 32, language bands at temperature
    # 10000, coordinates by 'ij' indexing (y's bands first), each angle twice in a row.
    sin, cos = build_rotary_pos_embed([4, 6], dim=32, in_pixels=False, temperature=10000)
    save("timm_axial_rope_sin", sin.numpy())
    save("timm_axial_rope_cos", cos.numpy())
    # The same with 'xy' indexing and the half layout ([f0, f1, ..., f0, f1, ...]).
    _, cos = build_rotary_pos_embed(
        [4, 6], dim=32, in_pixels=False, temperature=10000, grid_indexing="xy", rotate_half=True
    )
    save("timm_axial_rope_cos_xy_half", cos.numpy())
    # HunyuanDiT's 2D RoPE in diffusers on a 4 x 6 grid from crop (0, 0) to (4, 6): its
    # "h" half is computed from the column coordinate (np.meshgrid(grid_w, grid_h)).
    cos, sin = get_2d_rotary_pos_embed(32, ((0, 0), (4, 6)), (4, 6), use_real=True)
    save("hunyuandit_rope_cos", cos.numpy())
    save("hunyuandit_rope_sin", sin.numpy())
    # rotary-embedding-torch's axial angles: a RotaryEmbedding of 16 dims per axis (dim 32 in
    # all), get_axial_freqs(4, 6): the first axis (rows, y) first, each angle twice.
    rotary = RotaryEmbedding(dim=16)
    with torch.no_grad():
        save("rotary_axial_freqs", rotary.get_axial_freqs(4, 6).reshape(24, 32).numpy())

    from timm.layers.pos_embed_sincos import build_sincos2d_pos_embed

    # timm's 2D sin-cos table in float32 (bands 1 / 10000^(k / (dim/4)) formed by torch's pow):
    # a 48 x 40 grid, where float32 angles are off by more than 8 ulp of the values.
    save("timm_sincos2d_48x40", build_sincos2d_pos_embed([48, 40], dim=64).numpy())


def scaled_axial_rope():
    """Axial 2D RoPE at scaled coordinates: timm's EVA scheme for a model run at another
    resolution than it was trained at, and HunyuanDiT's crop region for a grid larger than
    its base size."""
    from diffusers.models.embeddings import get_2d_rotary_pos_embed
    from diffusers.pipelines.hunyuandit.pipeline_hunyuandit import get_resize_crop_region_for_grid
    from timm.layers.pos_embed_sincos import build_rotary_pos_embed

    # EVA-02 fine-tuned on a 6 x 4 grid from a 4 x 2 pretraining grid: coordinates
    # k / 6 * 4 and k / 4 * 2 in float32 (scales 2/3 and 1/2).
    sin, cos = build_rotary_pos_embed(
        [6, 4], dim=32, in_pixels=False, temperature=10000, ref_feat_shape=[4, 2]
    )
    save("timm_eva_ref_rope_sin", sin.numpy())
    save("timm_eva_ref_rope_cos", cos.numpy())
    # HunyuanDiT on a 6 x 6 grid with base size 4: the crop (0, 0) to (4, 4), so coordinates
    # torch.linspace(0, 4 * 5 / 6, 6) in float32 (about k * 2/3).
    crop = get_resize_crop_region_for_grid((6, 6), 4)
    cos, sin = get_2d_rotary_pos_embed(32, crop, (6, 6), use_real=True)
    save("hunyuandit_crop_rope_cos", cos.numpy())
    save("hunyuandit_crop_rope_sin", sin.numpy())


def offset_caches():
    """Caches of a window of positions that does not start at 0, as a chunk of prompt after a
    KV-cache offset sees them: transformers' cos and sin at position_ids from 1000 and from
    5000, and the rows vLLM's forward indexes out of its YaRN cos_sin_cache for positions
    100..163."""
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(hidden_size=256, num_attention_heads=4)
    cos, _ = LlamaRotaryEmbedding(config)(torch.zeros(1, 64, 64), torch.arange(1000, 1064)[None])
    save("hf_rope_cos_from_1000", cos[0].numpy())
    config = LlamaConfig(
        hidden_size=256,
        num_attention_heads=4,
        rope_theta=500000.0,
        max_position_embeddings=131072,
        rope_scaling={
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    )
    cos, sin = LlamaRotaryEmbedding(config)(torch.zeros(1, 64, 64), torch.arange(5000, 5064)[None])
    save("hf_llama31_sin_from_5000", sin[0].numpy())
    # Its cos cache: flat on the slow pairs this far out, which pins their frequencies loosely.
    save("hf_llama31_cos_from_5000", cos[0].numpy())
    yarn = np.load(HERE / "vllm_yarn_cos_sin_cache.npy")
    save("vllm_yarn_cos_sin_rows_100", yarn[100:164])
    # Two packed sequences, the first a continuation from position 4000: Llama 3.1's sin
    # cache (the Llama 3 scaling shows on the slow pairs only far out) at those ids.
    ids = torch.cat([torch.arange(4000, 4032), torch.arange(0, 32)])[None]
    save("packed_far_position_ids", ids.numpy())
    _, sin = LlamaRotaryEmbedding(config)(torch.zeros(1, 64, 64), ids)
    save("hf_llama31_sin_packed_far", sin[0].numpy())
    dynamic_from_4000()


def dynamic_from_4000():
    """Dynamic NTK at position_ids 4000..4063 of a model trained on 2048: transformers grows
    the base from the largest position + 1 (4064), not from the 64 rows of the window."""
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(
        hidden_size=256,
        num_attention_heads=4,
        max_position_embeddings=2048,
        rope_scaling={"rope_type": "dynamic", "factor": 2.0},
    )
    cos, _ = LlamaRotaryEmbedding(config)(torch.zeros(1, 64, 64), torch.arange(4000, 4064)[None])
    save("hf_dynamic_cos_from_4000", cos[0].numpy())


def longrope():
    """LongRoPE as transformers computes it for a model poslab does not ship: a small Phi-3
    (head 32, so 16 pairs) trained on 64 positions and extended to 2048, with factors shaped as
    Phi-3's are (non-decreasing, at least 1, two decimals but for the last long one)."""
    import torch
    from transformers import Phi3Config
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding

    short = [1.0, 1.0, 1.02, 1.05, 1.05, 1.1, 1.15, 1.25, 1.4, 1.55, 1.7, 1.9, 2.1, 2.35, 2.6, 2.9]
    long = [1.07, 1.12, 1.15, 1.42, 1.57, 1.8, 2.13, 2.13, 3.01, 5.91, 6.95, 9.07, 11.13, 15.41,
            19.81, 24.9373893737793]
    config = Phi3Config(
        hidden_size=128,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        original_max_position_embeddings=64,
        rope_parameters=dict(
            rope_type="longrope",
            rope_theta=10000.0,
            short_factor=short,
            long_factor=long,
            original_max_position_embeddings=64,
        ),
    )
    # The inverse frequencies beyond the original 64 positions: the long factors.
    inv_freq, _ = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=128)
    save("hf_longrope_inv_freq_long", inv_freq.numpy())
    # Phi-3's rotary embedding picks the factors by the positions it is given (long beyond 64)
    # and multiplies cos and sin by sqrt(1 + ln(2048/64) / ln(64)).
    rotary = Phi3RotaryEmbedding(config)
    x = torch.zeros(1, 4, 256, 32)
    cos, _ = rotary(x, torch.arange(256)[None])
    save("hf_longrope_cos_long_256", cos[0].numpy())
    _, sin = rotary(x, torch.arange(64)[None])
    save("hf_longrope_sin_short_64", sin[0].numpy())


def scaled_grids():
    """diffusers' get_2d_sincos_pos_embed, whose grid is arange(g) / (g / base_size) /
    interpolation_scale in float32 before a float64 table (returned as float64; models keep
    it as float32)."""
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    # SD3's shape: a grid larger than base_size, so coordinates k / 3 rounded to float32.
    sd3 = get_2d_sincos_pos_embed(32, 12, base_size=4, interpolation_scale=1.0, output_type="pt")
    save("diffusers_sincos2d_thirds_f64", sd3.numpy())
    save("diffusers_sincos2d_thirds_f32", sd3.float().numpy())
    # PixArt's: interpolation_scale 2 at base_size = grid, so half steps.
    save(
        "diffusers_sincos2d_pixart",
        get_2d_sincos_pos_embed(32, 8, base_size=8, interpolation_scale=2.0, output_type="pt")
        .float()
        .numpy(),
    )
    # A rectangular grid (6 high, 10 wide): each axis its own scale, 4/6 and 4/10.
    save(
        "diffusers_sincos2d_6x10",
        get_2d_sincos_pos_embed(32, (6, 10), base_size=4, output_type="pt").numpy(),
    )


def keras():
    """keras-hub's layers on Keras 3's torch backend, in float32 as they compute."""
    import os

    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras
    from keras_hub.layers import RotaryEmbedding, SinePositionEncoding

    # SinePositionEncoding: even columns sin, odd cos, timescales (1 / max_wavelength) ** (2
    # (i // 2) / hidden) formed in float32.
    inputs = keras.ops.zeros((1, 64, 32))
    table = SinePositionEncoding(max_wavelength=10000)(inputs)
    save("keras_sine_position_encoding", keras.ops.convert_to_numpy(table)[0])
    # RotaryEmbedding: rotates [batch, seq, heads, head_dim] inputs (half pairs, frequencies
    # repeated as two halves), plain and with linear scaling.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 48, 1, 16)).astype(np.float32)
    save("keras_rope_input", x[0, :, 0])
    save(
        "keras_rope_rotated",
        keras.ops.convert_to_numpy(RotaryEmbedding(max_wavelength=10000)(x))[0, :, 0],
    )
    save(
        "keras_rope_linear4_rotated",
        keras.ops.convert_to_numpy(
            RotaryEmbedding(max_wavelength=500000, scaling_factor=4.0, rope_type="linear")(x)
        )[0, :, 0],
    )


def rotation_at_positions():
    """transformers' Llama rotation (LlamaRotaryEmbedding, apply_rotary_pos_emb) of one head in
    float32 at scattered positions up to 131071, as a model rotates q: its float32 angles are
    off by up to 4e-3 rad at 10^5, so only the float32 reading matches."""
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    config = LlamaConfig(
        hidden_size=256,
        num_attention_heads=2,
        head_dim=128,
        rope_theta=500000.0,
        max_position_embeddings=131072,
    )
    positions = torch.tensor(
        [[0, 1, 2, 100, 4095, 4096, 8191, 65535, *range(100000, 131072, 1553), 131071]]
    )
    x = torch.randn(1, 2, positions.shape[1], 128, generator=torch.Generator().manual_seed(0))
    cos, sin = LlamaRotaryEmbedding(config)(x, positions)
    rotated = apply_rotary_pos_emb(x, x, cos, sin)[0]
    save("hf_rotation_input", x[0, 0].numpy())
    save("hf_rotation_positions", positions[0].numpy())
    save("hf_rotation_rotated", rotated[0, 0].numpy())
    # The same in float16, as a model run in half precision rotates: cos and sin in float32,
    # cast to float16, the products in float16.
    half = x.half()
    cos, sin = LlamaRotaryEmbedding(config)(half, positions)
    save("hf_rotation_input_f16", half[0, 0].numpy())
    save("hf_rotation_rotated_f16", apply_rotary_pos_emb(half, half, cos, sin)[0][0, 0].numpy())


def versions():
    names = [
        "torch",
        "diffusers",
        "transformers",
        "x-transformers",
        "mlx",
        "torchtune",
        "vllm",
        "timm",
        "rotary-embedding-torch",
        "keras",
        "keras-hub",
        "numpy",
    ]
    lines = []
    for name in names:
        try:
            lines.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            lines.append(f"{name} (not installed)")
    (HERE / "versions.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sinusoidal()
    padded_sinusoidal()
    alibi()
    rope()
    pixel_rope()
    axes()
    positions()
    axial_rope()
    scaled_axial_rope()
    offset_caches()
    longrope()
    scaled_grids()
    keras()
    rotation_at_positions()
    versions()
