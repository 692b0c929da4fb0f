"""poslab.table, check, assert_table and identify against values computed here another way
(NumPy's own formulas), and against the command line's answers for the same inputs."""

import os
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import poslab


def rope_angles(seq, dim, base=10000.0, start=0):
    inv_freq = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    return np.outer(np.arange(start, start + seq, dtype=np.float64), inv_freq)


def test_rope_cos_is_the_formula_in_both_layouts():
    angles = rope_angles(64, 16, 500000.0)
    interleaved = poslab.table("rope-cos", seq=64, dim=16, base=500000, dtype="f64")
    np.testing.assert_allclose(interleaved, np.repeat(np.cos(angles), 2, axis=1), rtol=0, atol=1e-12)
    half = poslab.table("rope-cos", seq=64, dim=16, base=500000, layout="half", dtype="f64")
    np.testing.assert_allclose(half, np.concatenate([np.cos(angles)] * 2, axis=1), rtol=0, atol=1e-12)


def test_sinusoidal_is_vaswanis_formula_and_float32_by_default():
    seq, dim = 50, 32
    table = poslab.table("sinusoidal", seq=seq, dim=dim)
    assert table.dtype == np.float32 and table.shape == (seq, dim)
    angles = rope_angles(seq, dim)
    expected = np.empty((seq, dim))
    expected[:, 0::2], expected[:, 1::2] = np.sin(angles), np.cos(angles)
    np.testing.assert_allclose(table, expected, rtol=0, atol=1e-6)


def test_keywords_take_lists_arrays_and_switches():
    positions = np.array([0, 5, 100000], dtype=np.int64)
    from_array = poslab.table("rope-angles", positions=positions, dim=8, dtype="f64")
    from_list = poslab.table("rope-angles", positions=[0, 5, 100000], dim=8, dtype="f64")
    np.testing.assert_array_equal(from_array, from_list)
    np.testing.assert_allclose(from_list[2], 100000 * 10000.0 ** (-np.arange(0, 8, 2) / 8), rtol=1e-14)
    buckets = poslab.table("t5-buckets", seq=8, bidirectional=False)
    assert buckets.dtype == np.int32 and (buckets[0] == 0).all()


def test_bad_keywords_get_the_command_lines_message():
    with pytest.raises(ValueError, match=r"--dim 7 is not allowed: must be even"):
        poslab.table("rope-cos", seq=4, dim=7)
    with pytest.raises(ValueError, match=r"unexpected argument '--colour'"):
        poslab.table("rope-cos", colour="red")
    with pytest.raises(ValueError, match=r"invalid value 'rope-coss'"):
        poslab.table("rope-coss")
    with pytest.raises(ValueError, match=r"output does not apply"):
        poslab.table("rope-cos", output="x.npy")


def test_a_table_matches_itself_and_a_wrong_base_is_located():
    table = poslab.table("rope-cos", seq=128, dim=32, base=500000)
    verdict = poslab.assert_table(table, "rope-cos", seq=128, dim=32, base=500000)
    assert verdict and verdict.max_abs_error < 1e-6 and "float32" in verdict.rule
    wrong = poslab.check(table, "rope-cos", seq=128, dim=32)
    assert not wrong and wrong.bad_count > 0 and len(wrong.bad) == 10
    worst = wrong.bad[0]
    assert abs(worst.got - table[worst.index]) == 0
    assert "columns" in wrong.diagnosis
    with pytest.raises(AssertionError, match=r"verdict: MISMATCH") as raised:
        poslab.assert_table(table, "rope-cos", seq=128, dim=32)
    assert "--base" not in wrong.command and "poslab check ARRAY.npy --as rope-cos" in str(raised.value)


def poslab_cli():
    """The command line built from this clone (python/test.sh builds it)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.environ.get("POSLAB_CLI", os.path.join(root, "target", "debug", "poslab"))
    if not os.path.exists(path):
        pytest.fail(f"no poslab command line at {path}: build it (cargo build) or set POSLAB_CLI")
    return path


def test_check_reads_files_and_says_what_the_cli_says(tmp_path):
    path = tmp_path / "cos.npy"
    np.save(path, poslab.table("rope-cos", seq=16, dim=8, base=500000))
    for base, status in [(500000, 0), (10000, 1)]:
        verdict = poslab.check(path, "rope-cos", seq=16, dim=8, base=base)
        cli = subprocess.run(
            [poslab_cli(), "check", str(path), "--as", "rope-cos", "--seq", "16", "--dim", "8", "--base", str(base)],
            capture_output=True, text=True,
        )
        assert cli.returncode == status and cli.stdout == verdict.text
        assert bool(verdict) == (status == 0)
    with pytest.raises(OSError):
        poslab.check(tmp_path / "missing.npy", "rope-cos")


def test_identify_says_what_the_cli_says(tmp_path):
    path = tmp_path / "pe.npy"
    np.save(path, poslab.table("sinusoidal", seq=16, dim=8, layout="half"))
    found = poslab.identify(path)
    cli = subprocess.run([poslab_cli(), "identify", str(path)], capture_output=True, text=True)
    assert cli.returncode == 0 and cli.stdout == found.report + "\n"


def test_identify_names_the_convention_and_base():
    table = poslab.table("rope-cos", seq=32, dim=16, base=500000, layout="half")
    found = poslab.identify(table)
    assert found and "half" in found.text and "base 500000" in found.text
    assert found.runner_up is not None
    missing = poslab.identify(np.random.default_rng(0).normal(size=(32, 16)))
    assert not missing and missing.text.startswith("no match")


def test_float16_arrays_are_held_to_float16():
    table = poslab.table("rope-sin", seq=64, dim=16, dtype="f64")
    assert poslab.check(table.astype(np.float16), "rope-sin", seq=64, dim=16)
    verdict = poslab.check(table.astype(np.float16), "rope-sin", seq=64, dim=16)
    assert "float16" in verdict.rule


def test_a_panic_arrives_as_an_exception():
    with pytest.raises(RuntimeError, match="a panic for the test"):
        poslab._poslab._panic_for_test()


def test_ctrl_c_stops_a_call_within_a_second():
    main = threading.get_ident()
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(main, signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        poslab._poslab._wait_for_test(30.0)
    assert time.monotonic() - started < 1.5


def test_hostile_values_get_one_clear_error_each():
    with pytest.raises(ValueError, match=r"--seq 1000000000000 is not allowed"):
        poslab.table("sinusoidal", seq=10**12, dim=1024)
    with pytest.raises(ValueError, match=r"the number is too large"):
        poslab.table("sinusoidal", seq=2**70, dim=8)
    with pytest.raises(ValueError, match=r"--base inf is not allowed"):
        poslab.table("sinusoidal", seq=4, dim=8, base=float("inf"))
    with pytest.raises(ValueError, match=r"holds NaN at index \[0, 1\]"):
        poslab.check(np.array([[0.0, np.nan]]), "rope-cos", seq=1, dim=2)
    with pytest.raises(ValueError, match=r"not a table of real values"):
        poslab.check(np.zeros((4, 8), dtype=complex), "rope-cos", seq=4, dim=8)
    with pytest.raises(ValueError, match=r"not a table poslab reads"):
        poslab.check("/dev/zero", "rope-cos", seq=4, dim=8)
    with pytest.raises(OSError):
        poslab.table("rope-cos", seq=4, dim=8, config="/nonexistent/config.json")
    # None is "not given".
    assert poslab.table("sinusoidal", seq=4, dim=8, layout=None).shape == (4, 8)


def test_a_function_that_returns_nan_fails():
    with pytest.raises(AssertionError, match=r"outputs are NaN"):
        poslab.assert_rope(lambda x, p: x * np.nan, dim=8, layout="half")


def test_identify_names_the_table_as_kind_and_options():
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    # transformers' Llama 3.1 cos cache at positions 5000..5063 (a chunk after a KV cache).
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
    _, sin = LlamaRotaryEmbedding(config)(torch.zeros(1, 64, 64), torch.arange(5000, 5064)[None])
    found = poslab.identify(sin[0])
    assert found and found.kind == "rope-sin"
    assert found.options["start"] == 5000 and found.options["scaling"] == "llama3"
    assert found.options["layout"] == "half" and found.options["base"] == 500000
    # The words make the table: checked here again, as a user would.
    assert poslab.check(sin[0], found.kind, **found.options)
    # The exact table; torch's float32 angles at position 5000 are off by up to about 1e-4.
    table = poslab.table(found.kind, **found.options)
    assert np.allclose(table, sin[0].numpy(), atol=1e-3)
    # ALiBi's, sinusoidal, T5's and grid tables are named too.
    alibi = poslab.table("alibi", heads=4, seq=16, mode="symmetric")
    found = poslab.identify(alibi)
    assert found and found.kind == "alibi" and found.options["mode"] == "symmetric"
    grid = poslab.table("sincos-2d", grid_h=4, grid_w=6, dim=16, order="sin-y,sin-x,cos-y,cos-x")
    found = poslab.identify(grid)
    assert found and found.kind == "sincos-2d" and found.options["order"] == "sin-y,sin-x,cos-y,cos-x"
    buckets = poslab.table("t5-buckets", seq=16, bidirectional=False)
    found = poslab.identify(buckets)
    assert found and found.kind == "t5-buckets" and found.options["bidirectional"] is False
    distances = poslab.table("patch-distance", grid_h=3, grid_w=4, metric="manhattan")
    found = poslab.identify(distances)
    assert found and found.kind == "patch-distance" and found.options["metric"] == "manhattan"
    per_key = poslab.table("alibi", heads=4, seq=12, form="mpt")
    found = poslab.identify(per_key)
    assert found and found.kind == "alibi" and found.options["form"] == "mpt"
    croma = poslab.table("alibi-2d", heads=4, grid_h=3, grid_w=3)
    found = poslab.identify(croma)
    assert found and found.kind == "alibi-2d" and found.options["grid_w"] == 3
    one_head = poslab.table("alibi", heads=4, seq=8, head=1)
    found = poslab.identify(one_head)
    # Slope 1/16 is head 1 of 4, and head 0 of 2 too: identify names the fewest heads.
    assert found and found.kind == "alibi" and found.options["head"] == 0
    assert poslab.check(one_head, found.kind, **found.options)
    # A reading identify has no table for (an ALiBi head of a slope no head count gives)
    # says so.
    odd = one_head * 0.3
    found = poslab.identify(odd)
    assert found.kind is None and found.options is None


def test_identify_at_given_positions_names_the_table_with_those_positions():
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "data", "libraries")
    # transformers' Llama cos cache of two packed sequences (make.py's positions()).
    cos = np.load(os.path.join(here, "llama_packed_rope_cos.npy"))
    ids = np.load(os.path.join(here, "llama_packed_position_ids.npy"))[0]
    found = poslab.identify(cos, positions=ids)
    assert found and found.kind == "rope-cos" and found.options["base"] == 500000
    assert found.options["positions"] is ids
    assert poslab.check(cos, found.kind, **found.options)
