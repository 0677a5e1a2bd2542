"""The GPU's power, SM clock and clock-event reasons sampled by nvidia-smi
every 100 ms while a measurement runs (bench/experiments/*_power_h200.py):

    with PowerLog("smi.csv") as log:
        ...                      # the kernels, back to back
    s = log.summary()            # watts, clock, capped, samples

`capped` is the share of samples with the software power cap on
(clock-event reason 0x4)."""
import statistics
import subprocess
import time


class PowerLog:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.smi = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=power.draw,clocks.sm,"
             "clocks_event_reasons.active", "--format=csv,noheader,nounits",
             "-lms", "100"], stdout=open(self.path, "w"),
            stderr=subprocess.DEVNULL)
        time.sleep(0.3)  # nvidia-smi's first samples
        return self

    def __exit__(self, *exc):
        self.smi.terminate()
        self.smi.wait()

    def summary(self, skip=0.0):
        """Mean watts, median SM clock (MHz), the share of capped samples
        and their count, over the samples above 150 W (while the kernels
        ran), leaving out the first `skip` of them (the ramp of the first
        second)."""
        samples = []
        for line in open(self.path):
            parts = [p.strip() for p in line.split(",")]
            try:
                samples.append((float(parts[0]), float(parts[1]),
                                int(parts[2], 16)))
            except (ValueError, IndexError):
                continue
        busy = [s for s in samples if s[0] > 150]
        busy = busy[int(len(busy) * skip):] or busy
        return dict(watts=statistics.mean(s[0] for s in busy),
                    clock=statistics.median(s[1] for s in busy),
                    capped=sum(1 for s in busy if s[2] & 0x4) / len(busy),
                    samples=len(busy))
