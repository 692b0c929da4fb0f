#!/usr/bin/env python3
"""`poslab table` end to end against the plain NumPy script that computes the same sinusoidal
table in f64, casts it to f32 and `np.save`s it: wall time and peak memory of each, alternated
round by round in one run (so both see the same machine load and disk), with the ratio of
their medians.

    python3 benches/table_vs_numpy.py [--poslab target/release/poslab] [--rounds 6]
                                      [--seq 65536] [--dim 1024] [--backend cpu] [--folder .]

Needs NumPy in the Python that runs it (`pip install numpy`); poslab itself does not. The
NumPy side is run twice per round: as written, and with `os.fsync` before closing, which is
what poslab's atomic write does before its rename (the like-for-like comparison on a slow
disk). Both outputs are compared before any timing counts, so a fast wrong table cannot win.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

NUMPY_SCRIPT = r"""
import os, sys
import numpy as np
seq, dim, out, fsync = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
position = np.arange(seq, dtype=np.float64)[:, None]
inv_freq = 10000.0 ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
angle = position * inv_freq
table = np.empty((seq, dim), dtype=np.float64)
table[:, 0::2] = np.sin(angle)
table[:, 1::2] = np.cos(angle)
with open(out, "wb") as f:
    np.save(f, table.astype(np.float32))
    if fsync:
        f.flush()
        os.fsync(f.fileno())
"""

COMPARE_SCRIPT = r"""
import sys
import numpy as np
ours, theirs = (np.load(path).astype(np.float64) for path in sys.argv[1:3])
gap = np.abs(ours - theirs).max() if ours.shape == theirs.shape else float("inf")
print(f"shape {ours.shape} f32, largest difference poslab - NumPy: {gap:.3g}")
sys.exit(0 if gap <= 2.0**-23 else 1)
"""


def timed(command):
    """Runs `command`; returns (wall seconds, peak resident MiB, an upper bound: it includes
    this small process's own size at the fork). Fails loudly on an error."""
    start = time.perf_counter()
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{' '.join(command)} failed with status {status}")
    return wall, usage.ru_maxrss / 1024


def settle(*paths):
    for path in paths:
        if os.path.exists(path):
            os.remove(path)
    os.sync()
    time.sleep(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poslab", default="target/release/poslab")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seq", type=int, default=65536)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--backend", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--folder", default=".", help="where the tables are written")
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="poslab-vs-numpy-", dir=args.folder)
    script = os.path.join(folder, "numpy_table.py")
    with open(script, "w") as f:
        f.write(NUMPY_SCRIPT)
    ours = os.path.join(folder, "poslab.npy")
    theirs = os.path.join(folder, "numpy.npy")
    poslab = [args.poslab, "table", "sinusoidal", "--seq", str(args.seq), "--dim",
              str(args.dim), "--backend", args.backend, "-o", ours]
    numpy = [sys.executable, script, str(args.seq), str(args.dim), theirs]

    settle(ours, theirs)
    timed(poslab)
    timed(numpy + ["0"])
    # Compared in a child, so this process stays small: a child's peak memory as the kernel
    # reports it starts from its parent's size at the fork.
    compare = subprocess.run([sys.executable, "-c", COMPARE_SCRIPT, ours, theirs])
    if compare.returncode != 0:
        sys.exit("the two tables differ by more than an f32 rounding: not timing them")

    rows = {"numpy": [], "numpy+fsync": [], "poslab": []}
    peaks = {name: 0.0 for name in rows}
    for round_ in range(1, args.rounds + 1):
        line = []
        for name, command in (("numpy", numpy + ["0"]), ("poslab", poslab),
                              ("numpy+fsync", numpy + ["1"])):
            settle(ours, theirs)
            wall, peak = timed(command)
            rows[name].append(wall)
            peaks[name] = max(peaks[name], peak)
            line.append(f"{name} {wall:.2f} s")
        print(f"round {round_}: " + ", ".join(line))
    settle(ours, theirs)
    os.remove(script)
    os.rmdir(folder)

    median = {name: statistics.median(times) for name, times in rows.items()}
    output_mib = (args.seq * args.dim * 4) / 2**20
    for name in rows:
        print(f"{name:12} median {median[name]:.3f} s (range {min(rows[name]):.2f}-"
              f"{max(rows[name]):.2f}), peak memory {peaks[name]:.0f} MiB "
              f"({peaks[name] / output_mib:.2f} x the {output_mib:.0f} MiB output)")
    per_round = [n / p for n, p in zip(rows["numpy"], rows["poslab"])]
    print(f"NumPy / poslab: {median['numpy'] / median['poslab']:.2f}x of medians, "
          f"{min(per_round):.2f}x to {max(per_round):.2f}x round by round; "
          f"with fsync {median['numpy+fsync'] / median['poslab']:.2f}x")


if __name__ == "__main__":
    main()
