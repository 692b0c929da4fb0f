#!/usr/bin/env python3
"""The Python package, timed (a benchmark, not a test): what the binding adds, and what the
rotation check costs. In one run, each figure with its ratio to a baseline measured here:

- `poslab.table("sinusoidal", seq=65536, dim=1024)` against the library call inside it (the
  binding's share: keywords in, the array handed over without a copy), against `poslab table`
  writing the same table to a file, and against NumPy computing it (f64, cast to float32).
- `poslab.assert_rope` on Llama 3.1's config (transformers' rotation) at the default positions,
  32 heads, head width 128: seconds in all, and the share spent in the user's function.

    POSLAB_PY_PROFILE=release python/test.sh     # the package built for speed, into target/python-venv
    cargo build --release
    target/python-venv/bin/python benches/python.py [--poslab target/release/poslab] [--rounds 5]

Needs the package, NumPy, and (for the rotation check) torch and transformers: python/test.sh
installs all three in target/python-venv.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

import poslab


def median_seconds(work, rounds):
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def numpy_sinusoidal(seq, dim):
    positions = np.arange(seq, dtype=np.float64)[:, None]
    inv = 10000.0 ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    table = np.empty((seq, dim), dtype=np.float64)
    table[:, 0::2] = np.sin(positions * inv)
    table[:, 1::2] = np.cos(positions * inv)
    return table.astype(np.float32)


def tables(cli, rounds):
    seq, dim = 65536, 1024
    options = {"seq": seq, "dim": dim}
    # Each result is kept until its call is timed: freeing 256 MiB is the caller's, after.
    inside, outside = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        result = poslab._poslab.table("sinusoidal", options)
        outside.append(time.perf_counter() - started)
        inside.append(result[2])
        del result
    whole, library = statistics.median(outside), statistics.median(inside)
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "pe.npy")
        command = [cli, "table", "sinusoidal", "--seq", str(seq), "--dim", str(dim), "-o", out, "--quiet"]
        to_file = median_seconds(lambda: subprocess.run(command, check=True), rounds)
    in_numpy = median_seconds(lambda: numpy_sinusoidal(seq, dim), rounds)
    check = np.abs(poslab.table("sinusoidal", seq=seq, dim=dim) - numpy_sinusoidal(seq, dim)).max()
    print(f"sinusoidal {seq} x {dim} (float32, {seq * dim * 4 / 2**20:.0f} MiB), median of {rounds}:")
    print(f"  library call        {library * 1e3:9.1f} ms   1.00")
    print(f"  poslab.table        {whole * 1e3:9.1f} ms   {whole / library:.3f}  (the binding adds {100 * (whole / library - 1):.1f}%)")
    print(f"  poslab table -o     {to_file * 1e3:9.1f} ms   {to_file / library:.3f}  (a process, written to a file)")
    print(f"  NumPy               {in_numpy * 1e3:9.1f} ms   {in_numpy / library:.3f}  (largest difference {check:.1e})")


def rotation(rounds):
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "assets", "models", "llama-3.1-8b.json")
    rope = LlamaRotaryEmbedding(LlamaConfig.from_json_file(path))

    def rotate(x, p):
        return apply_rotary_pos_emb(x, x, *rope(x, p))[0]

    reports = [poslab.assert_rope(rotate, config=path, heads=32, framework="torch") for _ in range(rounds)]
    seconds = statistics.median(r.seconds for r in reports)
    inside = statistics.median(r.seconds_in_function for r in reports)
    print(f"assert_rope, Llama 3.1 (transformers), 32 heads x 128, default positions, median of {rounds}:")
    print(f"  in all              {seconds:9.3f} s    1.00")
    print(f"  in the function     {inside:9.3f} s    {inside / seconds:.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poslab", default="target/release/poslab")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    tables(args.poslab, args.rounds)
    rotation(max(1, args.rounds // 2))


if __name__ == "__main__":
    main()
