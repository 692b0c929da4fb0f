#!/usr/bin/env python3
"""poslab's GPU engine beside PyTorch on the same card, in one run: the sinusoidal table's
kernel against a fill of the same buffer (the write ceiling), `torch.compile` and eager
PyTorch; the readback against `.cpu()` (pageable and pinned); and `poslab table --backend gpu`
end to end against the CPU engine and PyTorch's compute + `.cpu()` + `np.save`. Prints each
figure and its ratio to the baseline of its row, all measured here, in this run.

    python3 benches/gpu_vs_torch.py [--poslab target/release/poslab] [--sizes 4096x4096,65536x4096,1048576x128]
                                    [--repeats 10] [--rounds 3] [--folder /tmp] [--budget 420]

Needs PyTorch with CUDA and NumPy in the Python that runs it; poslab itself needs neither.
Without CUDA it says so and stops (the figures would mean nothing on the CPU). Sizes are
`seq x dim`; each is timed by poslab's own `poslab bench` (GPU timestamps) and by CUDA events
for PyTorch. `--budget` bounds the run's seconds: sizes that would start past it are skipped
and said so (a lent machine's time is short).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def poslab_bench(poslab, seq, dim, repeats):
    """(compute ms, fill ms, with readback ms) from `poslab bench` on the GPU."""
    text = subprocess.run(
        [poslab, "bench", "sinusoidal", "--backend", "gpu", "--repeats", str(repeats),
         "--size", f"seq={seq},dim={dim}"],
        check=True, capture_output=True, text=True,
    ).stdout
    print(text.strip())
    row = [line for line in text.splitlines() if line.startswith(f"seq={seq},dim={dim}")][-1]
    numbers = [float(x) for x in re.findall(r"[-+]?(?:\d+(?:\.\d+)?|inf)", row.split("]")[-1])]
    compute, _, fill, _, readback, _ = numbers[:6]
    return compute, fill, readback


def torch_times(torch, seq, dim, repeats):
    """Milliseconds: fill_ of the same buffer, eager, compiled, .cpu() pageable and pinned."""
    def table(position, inv_freq):
        angle = position[:, None] * inv_freq[None, :]
        out = torch.empty(seq, dim, device="cuda")
        out[:, 0::2] = torch.sin(angle)
        out[:, 1::2] = torch.cos(angle)
        return out

    position = torch.arange(seq, device="cuda", dtype=torch.float32)
    inv_freq = 10000.0 ** (-torch.arange(0, dim, 2, device="cuda", dtype=torch.float32) / dim)
    compiled = torch.compile(table)
    buffer = torch.empty(seq, dim, device="cuda")

    def cuda_ms(step):
        step()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    def wall_ms(step):
        step()
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - started) * 1e3)
        return statistics.median(times)

    result = table(position, inv_freq)
    pinned = torch.empty(seq, dim, pin_memory=True)
    return {
        "fill": cuda_ms(lambda: buffer.fill_(1.0)),
        "eager": cuda_ms(lambda: table(position, inv_freq)),
        "compiled": cuda_ms(lambda: compiled(position, inv_freq)),
        "cpu pageable": wall_ms(lambda: result.cpu()),
        "cpu pinned": wall_ms(lambda: pinned.copy_(result, non_blocking=False)),
    }


TORCH_FILE = r"""
import sys, numpy as np, torch
seq, dim, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
position = torch.arange(seq, device="cuda", dtype=torch.float32)
inv_freq = 10000.0 ** (-torch.arange(0, dim, 2, device="cuda", dtype=torch.float32) / dim)
angle = position[:, None] * inv_freq[None, :]
table = torch.empty(seq, dim, device="cuda")
table[:, 0::2] = torch.sin(angle)
table[:, 1::2] = torch.cos(angle)
np.save(out, table.cpu().numpy())
"""


def wall(command):
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--poslab", default="target/release/poslab")
    parser.add_argument("--sizes", default="4096x4096,65536x4096,1048576x128")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--folder", default=tempfile.gettempdir())
    parser.add_argument("--budget", type=float, default=420.0)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("PyTorch is not installed here: pip install torch numpy")
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: these figures are for a machine with an NVIDIA GPU")
    began = time.perf_counter()
    print(f"card: {torch.cuda.get_device_name()}, PyTorch {torch.__version__}")
    rows = []
    for size in args.sizes.split(","):
        if time.perf_counter() - began > args.budget:
            print(f"{size}: skipped, past the --budget of {args.budget:.0f} s")
            continue
        seq, dim = (int(n) for n in size.lower().split("x"))
        compute, fill, readback = poslab_bench(args.poslab, seq, dim, args.repeats)
        theirs = torch_times(torch, seq, dim, args.repeats)
        gib = seq * dim * 4 / 2**30
        ours_file = os.path.join(args.folder, "poslab_gpu.npy")
        cpu_file = os.path.join(args.folder, "poslab_cpu.npy")
        torch_file = os.path.join(args.folder, "torch.npy")
        ends = {"gpu": [], "cpu": [], "torch": []}
        for _ in range(args.rounds):
            common = ["table", "sinusoidal", "--seq", str(seq), "--dim", str(dim), "--quiet"]
            ends["gpu"].append(wall([args.poslab, *common, "--backend", "gpu", "-o", ours_file]))
            ends["cpu"].append(wall([args.poslab, *common, "-o", cpu_file]))
            ends["torch"].append(
                wall([sys.executable, "-c", TORCH_FILE, str(seq), str(dim), torch_file]))
        for path in (ours_file, cpu_file, torch_file):
            os.remove(path)
        end = {k: statistics.median(v) for k, v in ends.items()}
        rows += [
            (size, "kernel (poslab)", compute, "fill", theirs["fill"]),
            (size, "poslab's own fill", fill, "fill", theirs["fill"]),
            (size, "torch.compile", theirs["compiled"], "fill", theirs["fill"]),
            (size, "torch eager", theirs["eager"], "fill", theirs["fill"]),
            (size, "poslab readback (added)", readback - compute, ".cpu() pinned",
             theirs["cpu pinned"]),
            (size, ".cpu() pageable", theirs["cpu pageable"], ".cpu() pinned",
             theirs["cpu pinned"]),
            (size, "table --backend gpu", end["gpu"], "CPU engine", end["cpu"]),
            (size, "torch + .cpu() + np.save", end["torch"], "CPU engine", end["cpu"]),
        ]
        print(f"{size}: {gib:.3f} GiB; readback {gib / max(readback - compute, 1e-9) * 1e3:.1f} "
              f"GiB/s (poslab), {gib / theirs['cpu pinned'] * 1e3:.1f} GiB/s (pinned .cpu())")
    print()
    print(f"{'size':<16} {'what':<26} {'ms':>10}   {'baseline':<16} {'ms':>10} {'ratio':>7}")
    for size, what, ms, base, base_ms in rows:
        print(f"{size:<16} {what:<26} {ms:>10.3f}   {base:<16} {base_ms:>10.3f} "
              f"{ms / max(base_ms, 1e-9):>7.2f}")


if __name__ == "__main__":
    main()
