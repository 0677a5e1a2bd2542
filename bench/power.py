#!/usr/bin/env python3
"""The GPU's board power, SM clock and clock-event reasons, sampled by
nvidia-smi every 100 ms while a measurement runs.

As a command: run COMMAND while sampling, then print the summary over the
samples taken while the GPU was busy (above 150 W):

    python3 bench/power.py [--csv FILE] [--skip 0.25] [--gpu 0] -- COMMAND...
    # power: 693 W mean, SM clock 1500 MHz median, power cap 100% of 28 samples

As a library (bench/gemm_energy.py, bench/coschedule_energy.py):

    with PowerLog("smi.csv") as log:
        ...                      # the kernels, back to back
    s = log.summary()            # watts, clock, capped, samples

`capped` is the share of samples with the software power cap on
(clock-event reason 0x4). The exit status of the command is returned."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Samples at or below this board power are the GPU idling between runs.
BUSY_WATTS = 150


class PowerLog:
    def __init__(self, path, gpu=None):
        self.path = path
        self.gpu = gpu

    def __enter__(self):
        cmd = ["nvidia-smi", "--query-gpu=power.draw,clocks.sm,"
               "clocks_event_reasons.active", "--format=csv,noheader,nounits",
               "-lms", "100"]
        if self.gpu is not None:
            cmd += ["-i", str(self.gpu)]
        self.smi = subprocess.Popen(cmd, stdout=open(self.path, "w"),
                                    stderr=subprocess.DEVNULL)
        time.sleep(0.3)  # nvidia-smi's first samples
        return self

    def __exit__(self, *exc):
        self.smi.terminate()
        self.smi.wait()

    def summary(self, skip=0.0):
        """Mean watts, median SM clock (MHz), the share of capped samples
        and their count, over the samples above BUSY_WATTS (while the
        kernels ran), leaving out the first `skip` of them (the ramp of the
        first second). None when no sample was above it."""
        return summarize(open(self.path), skip)


def summarize(lines, skip=0.0):
    """The summary of nvidia-smi's CSV lines (power, clock, reasons)."""
    samples = []
    for line in lines:
        parts = [p.strip() for p in line.split(",")]
        try:
            samples.append((float(parts[0]), float(parts[1]),
                            int(parts[2], 16)))
        except (ValueError, IndexError):
            continue
    busy = [s for s in samples if s[0] > BUSY_WATTS]
    busy = busy[int(len(busy) * skip):] or busy
    if not busy:
        return None
    return dict(watts=statistics.mean(s[0] for s in busy),
                clock=statistics.median(s[1] for s in busy),
                capped=sum(1 for s in busy if s[2] & 0x4) / len(busy),
                samples=len(busy))


def describe(s):
    if s is None:
        return f"power: no sample above {BUSY_WATTS} W (the GPU stayed idle)"
    return (f"power: {s['watts']:.0f} W mean, SM clock {s['clock']:.0f} MHz "
            f"median, power cap {100 * s['capped']:.0f}% of "
            f"{s['samples']} samples")


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Run a command while nvidia-smi samples the GPU's power "
        "and SM clock; print their summary.")
    p.add_argument("--csv", help="keep the samples in this file")
    p.add_argument("--skip", type=float, default=0.0,
                   help="leave out this share of the busy samples, first")
    p.add_argument("--gpu", type=int, help="the GPU to sample (nvidia-smi -i)")
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="the command, after --")
    a = p.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        p.error("no command given")
    path = a.csv or tempfile.mkstemp(suffix=".csv")[1]
    try:
        log = PowerLog(path, a.gpu).__enter__()
    except FileNotFoundError:
        p.error("nvidia-smi not found: the power sampler needs the NVIDIA "
                "driver's tools")
    try:
        rc = subprocess.call(cmd)
    finally:
        log.__exit__()
    print(describe(log.summary(a.skip)), flush=True)
    if not a.csv:
        os.unlink(path)
    return rc


if __name__ == "__main__":
    sys.exit(main())
