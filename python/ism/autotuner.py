"""``ism.autotune``: pick a kernel's configuration by timing the candidates,
and remember the answer on disk.

    @ism.autotune(configs=[ism.Config(BM=128, BN=256, warps=8),
                           ism.Config(BM=128, BN=128, warps=4)],
                  restore=[2])
    def gemm(BM, BN, warps):
        return module_text(BM, BN, warps)     # an ism.Module or its text

    gemm(a, b, c)          # first call for this key: tunes, then runs
    gemm(a, b, c)          # the winner, from memory (or from disk)

The decorated function builds the module of one configuration from its
keyword arguments (as under :func:`ism.jit`). The first call for a *tuning
key* -- the candidates' content, the arguments' shapes (each size rounded up
to a power of two) and dtypes, the GPU's name and the compiler's version --
compiles every candidate in parallel threads (one per host core), prunes the
ones the compiler rejects or that do not fit the device (threads per CTA,
shared memory), times the rest on the call's own tensors (CUDA events, L2
flushed before every call, the median of ``reps``; the candidates within
``close`` (5%) of the fastest again in ``rounds`` (2) interleaved rounds,
each keeping the median of its timings), runs the winner and
stores it in ``<cache_dir()>/autotune/`` (``$ISM_CACHE_DIR`` overrides the
platform's ``~/.cache/ism``). A later process with the same key reads the
winner from there and tunes nothing. A corrupt or stale entry is ignored with
a warning and replaced.

Tuning runs the kernels several times on the call's arguments: name the
arguments a kernel updates in place (or that it reads after writing) in
``restore`` (positions or ``"all"``) and they are put back before the real
run. Timing needs torch; see docs/python.md.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import warnings
from typing import (Any, Callable, Dict, Iterable, List, Optional, Sequence,
                    Tuple, Union)

from . import _ism
from .ir import Module
from .launch import CompiledProgram, cache_dir, compile as _compile

__all__ = ["Autotuner", "Config", "TuningResult", "autotune"]

#: Format of the files under <cache_dir>/autotune (bumped when it changes;
#: an entry of another format is stale).
CACHE_FORMAT = 1

#: Opt-in shared memory per CTA (bytes) by compute capability, for when
#: the device cannot be asked (compiling for ``chip=`` without a GPU).
_SHARED_MEMORY_BY_CHIP = {"sm_80": 166912, "sm_86": 101376, "sm_87": 166912,
                          "sm_89": 101376, "sm_90": 232448, "sm_90a": 232448}


class Config:
    """One candidate: the keyword arguments of the builder (block sizes,
    warps, stages, ...)."""

    def __init__(self, **kwargs: Any):
        if not kwargs:
            raise ValueError("ism.Config needs at least one keyword argument")
        for name, value in kwargs.items():
            if not isinstance(value, (bool, int, float, str)):
                raise TypeError(f"ism.Config: {name}={value!r} is not a "
                                f"bool, int, float or str")
        self.kwargs: Dict[str, Any] = dict(sorted(kwargs.items()))

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and self.kwargs == other.kwargs

    def __hash__(self) -> int:
        return hash(tuple(self.kwargs.items()))

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v!r}"
                                     for k, v in self.kwargs.items()) + ")"


class TuningResult:
    """What one tuning key got: the winner, and how it was chosen.

    ``timings_ms``: median per timed candidate; ``pruned``: (config,
    reason) of the ones never run; ``from_cache``: True when the winner came
    from memory or disk (nothing was compiled or timed for the choice);
    ``tuning_s``: seconds spent tuning (0 from the cache); ``power``: the
    GPU's median SM clock, mean board power and share of time at the power
    cap while the candidates were timed (``{"sm_clock_mhz", "power_w",
    "power_capped", "samples"}`` through NVML, or ``{"unavailable": why}``;
    empty from the cache)."""

    def __init__(self, key: str, best: Config,
                 timings_ms: Dict[Config, float],
                 pruned: List[Tuple[Config, str]], tuning_s: float,
                 from_cache: bool, path: Optional[str],
                 power: Optional[Dict[str, Any]] = None):
        self.power = dict(power or {})
        self.key = key
        self.best = best
        self.timings_ms = timings_ms
        self.pruned = pruned
        self.tuning_s = tuning_s
        self.from_cache = from_cache
        self.path = path

    def __repr__(self) -> str:
        src = "cache" if self.from_cache else f"tuned in {self.tuning_s:.2f} s"
        return f"<ism.TuningResult {self.best} ({src})>"


def _bucket(n: int) -> int:
    """``n`` rounded up to a power of two (0 and 1 stay)."""
    return 1 << (int(n) - 1).bit_length() if n > 1 else int(n)


def _describe_arg(arg) -> tuple:
    """The part of an argument that selects a configuration: shape (bucketed)
    and dtype of an array, the bucket of an int, the type of other
    scalars. Hashable (the dispatch table's key) and JSON-able (the tuning
    key's and the cache entry's)."""
    shape = getattr(arg, "shape", None)
    if shape is not None and hasattr(arg, "dtype"):
        return ("array", tuple(_bucket(s) for s in shape),
                str(arg.dtype).replace("torch.", ""))
    if isinstance(arg, bool):
        return ("bool", arg)
    if isinstance(arg, int):
        return ("int", _bucket(abs(arg)))
    return (type(arg).__name__,)


def _reason(error: Exception) -> str:
    """The first diagnostic of a compile error, without its location."""
    lines = str(error).strip().splitlines()
    for line in lines:
        if "error: " in line:
            return line.split("error: ", 1)[1].strip()
    return lines[0] if lines else type(error).__name__


def _device_name(device: Optional[int]) -> str:
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                return torch.cuda.get_device_name(
                    device if device is not None else
                    torch.cuda.current_device())
        except Exception:  # pragma: no cover - a broken CUDA setup
            pass
    return "no-gpu"


def _power_monitor():
    """A monitor of the current CUDA device's clock and power, or None
    without torch."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        device = torch.cuda.current_device()
    except Exception:  # pragma: no cover - a broken CUDA setup
        return None
    return _ism.PowerMonitor(device)


def _describe_power(power: Dict[str, Any]) -> str:
    """One phrase: "SM clock 1755 MHz, 512 W, at the power cap 0% of the
    time", or why it was not measured."""
    if "power_w" not in power:
        return ("clock and power not measured: " +
                power.get("unavailable", "not sampled"))
    return (f"SM clock {power['sm_clock_mhz']:.0f} MHz, "
            f"{power['power_w']:.0f} W, at the power cap "
            f"{100 * power['power_capped']:.0f}% of the time")


class Autotuner:
    """The object ``@ism.autotune`` makes: call it like the compiled
    program (``f(*args, stream=None)``); :meth:`tune` only chooses."""

    def __init__(self, builder: Callable[..., Any], configs: Sequence[Config],
                 *, key: Optional[Callable[..., Any]] = None,
                 prune: Optional[Callable[[List[Config], tuple],
                                          Iterable[Config]]] = None,
                 restore: Union[Sequence[int], str] = (),
                 warmup: int = 3, reps: int = 20,
                 close: float = 0.05, rounds: int = 2,
                 cache: Union[bool, str] = True,
                 workers: Optional[int] = None,
                 timer: Optional[Callable[[CompiledProgram, tuple, Config],
                                          float]] = None,
                 limits: Optional[Dict[str, int]] = None,
                 verbose: bool = False, **compile_options: Any):
        configs = list(configs)
        if not configs:
            raise ValueError("ism.autotune needs at least one ism.Config")
        for c in configs:
            if not isinstance(c, Config):
                raise TypeError(f"ism.autotune: configs must be ism.Config, "
                                f"got {type(c).__name__}")
        if len(set(configs)) != len(configs):
            raise ValueError("ism.autotune: the same ism.Config is given "
                             "twice")
        if restore != "all" and not all(isinstance(i, int) for i in restore):
            raise TypeError("restore: argument positions or 'all'")
        if warmup < 0 or reps < 1:
            raise ValueError("warmup must be >= 0 and reps >= 1")
        if not close >= 0 or rounds < 0:
            raise ValueError("close must be >= 0 and rounds >= 0")
        self.builder = builder
        self.close, self.rounds = close, rounds
        self.configs = configs
        self.key_fn = key
        self.prune_fn = prune
        self.restore = restore
        self.warmup, self.reps = warmup, reps
        self.cache = cache
        self.workers = workers or os.cpu_count() or 1
        self.timer = timer
        self.verbose = verbose
        if limits is not None:
            unknown = set(limits) - {"threads", "shared_memory_bytes"}
            if unknown:
                raise ValueError(f"limits: unknown keys {sorted(unknown)} "
                                 f"(threads, shared_memory_bytes)")
        self.user_limits = dict(limits or {})
        self.compile_options = compile_options
        self.__name__ = getattr(builder, "__name__", "autotune")
        self.__doc__ = getattr(builder, "__doc__", None)
        self._texts: Optional[Dict[Config, str]] = None
        self._content: Optional[str] = None
        self._programs: Dict[Config, CompiledProgram] = {}
        self._results: Dict[str, TuningResult] = {}
        # Calls already decided: (argument description) -> program, so that
        # a call costs a dict lookup, not a key digest and a compile.
        self._dispatch: Dict[Any, CompiledProgram] = {}
        self._lock = threading.Lock()

    # -- the key ------------------------------------------------------------

    def _module_texts(self) -> Dict[Config, str]:
        if self._texts is None:
            texts = {}
            for c in self.configs:
                m = self.builder(**c.kwargs)
                if isinstance(m, Module):
                    m = str(m)
                if not isinstance(m, str):
                    raise TypeError(f"{self.__name__}({c}) must return an "
                                    f"ism.Module or its text, got "
                                    f"{type(m).__name__}")
                texts[c] = m
            digest = hashlib.sha256()
            for c in self.configs:
                digest.update(repr(c).encode() + b"\0" + texts[c].encode()
                              + b"\0")
            self._content = digest.hexdigest()
            self._texts = texts
        return self._texts

    def key(self, *args) -> str:
        """The tuning key of a call with ``args`` (a hex digest)."""
        self._module_texts()
        described = (self.key_fn(*args) if self.key_fn is not None else
                     [_describe_arg(a) for a in args])
        parts = {
            "content": self._content,
            "args": described,
            "device": _device_name(self.compile_options.get("device")),
            "chip": self.compile_options.get("chip") or "",
            "entry": self.compile_options.get("entry", "main"),
            "compiler": _ism.compiler_version(),
        }
        text = json.dumps(parts, sort_keys=True, default=repr)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    # -- the disk cache -------------------------------------------------------

    def _cache_path(self, key: str) -> Optional[str]:
        if self.cache is False or self.cache is None:
            return None
        root = cache_dir() if self.cache is True else os.fspath(self.cache)
        if not root:
            return None
        return os.path.join(root, "autotune", key + ".json")

    def _load(self, key: str) -> Optional[TuningResult]:
        path = self._cache_path(key)
        if path is None or not os.path.exists(path):
            return None
        try:
            with open(path, encoding="utf-8") as f:
                entry = json.load(f)
            if not isinstance(entry, dict):
                raise ValueError("not a JSON object")
            if entry.get("format") != CACHE_FORMAT:
                raise ValueError(f"format {entry.get('format')!r}, expected "
                                 f"{CACHE_FORMAT}")
            if entry.get("key") != key:
                raise ValueError("written for another key")
            if entry.get("compiler") != _ism.compiler_version():
                raise ValueError("written by another compiler version")
            best = Config(**entry["best"])
            if best not in self.configs:
                raise ValueError(f"its winner {best} is not a candidate")
            timings = {Config(**c): float(ms)
                       for c, ms in entry.get("timings_ms", [])}
        except (OSError, ValueError, KeyError, TypeError) as e:
            warnings.warn(f"ism.autotune: ignoring the cache entry {path} "
                          f"({e}); tuning again", RuntimeWarning,
                          stacklevel=3)
            return None
        return TuningResult(key, best, timings, [], 0.0, True, path)

    def _store(self, result: TuningResult, described: Any) -> None:
        path = result.path
        if path is None:
            return
        entry = {
            "format": CACHE_FORMAT, "key": result.key,
            "compiler": _ism.compiler_version(), "kernel": self.__name__,
            "args": described, "best": result.best.kwargs,
            "timings_ms": [[c.kwargs, ms]
                           for c, ms in result.timings_ms.items()],
            "pruned": [[c.kwargs, why] for c, why in result.pruned],
            "tuning_s": round(result.tuning_s, 3),
        }
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path),
                                       suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f, indent=1)
            os.replace(tmp, path)   # atomic: readers see old or new
        except OSError as e:
            warnings.warn(f"ism.autotune: could not store {path} ({e})",
                          RuntimeWarning, stacklevel=3)

    # -- compiling and pruning ----------------------------------------------

    def _compile_all(self, configs: List[Config]
                     ) -> Tuple[Dict[Config, CompiledProgram],
                                List[Tuple[Config, str]]]:
        texts = self._module_texts()
        options = dict(self.compile_options)

        def build(c: Config):
            with self._lock:
                hit = self._programs.get(c)
            if hit is not None:
                return hit
            program = _compile(texts[c], **options)
            with self._lock:
                self._programs[c] = program
            return program

        programs, pruned = {}, []
        if not configs:
            return programs, pruned
        with concurrent.futures.ThreadPoolExecutor(
                max_workers=min(self.workers, len(configs))) as pool:
            futures = {c: pool.submit(build, c) for c in configs}
            for c in configs:
                try:
                    programs[c] = futures[c].result()
                except _ism.IsmError as e:
                    pruned.append((c, "does not compile: " + _reason(e)))
        return programs, pruned

    def _limits(self, program: CompiledProgram) -> Dict[str, int]:
        """The device's limits: ``limits=``, else the GPU's (through
        torch), else those of the program's chip."""
        limits = {"threads": 1024, "shared_memory_bytes":
                  _SHARED_MEMORY_BY_CHIP.get(program.chip, 232448)}
        torch = sys.modules.get("torch")
        if torch is not None and self.compile_options.get("chip") is None:
            try:
                if torch.cuda.is_available():
                    props = torch.cuda.get_device_properties(program.device)
                    smem = getattr(props, "shared_memory_per_block_optin",
                                   None)
                    if smem:
                        limits["shared_memory_bytes"] = int(smem)
            except Exception:  # pragma: no cover - a broken CUDA setup
                pass
        limits.update(self.user_limits)
        return limits

    def _fits(self, program: CompiledProgram) -> Optional[str]:
        """Why ``program`` cannot run on the device, or None."""
        limits = self._limits(program)
        for name, info in sorted(program.kernel_info().items()):
            if info["threads"] > limits["threads"]:
                return (f"@{name} needs {info['threads']} threads per CTA, "
                        f"more than {limits['threads']}")
            if info["shared_memory_bytes"] > limits["shared_memory_bytes"]:
                return (f"@{name} needs {info['shared_memory_bytes']} bytes "
                        f"of shared memory per CTA, more than "
                        f"{limits['shared_memory_bytes']}")
        return None

    # -- timing ---------------------------------------------------------------

    def _time(self, program: CompiledProgram, args: tuple,
              config: Config) -> float:
        if self.timer is not None:
            return float(self.timer(program, args, config))
        try:
            import torch
        except ImportError as e:
            raise RuntimeError("ism.autotune times candidates with torch "
                               "CUDA events; torch is not installed") from e
        stream = torch.cuda.current_stream()
        flush = self._flush_buffer(torch)
        for _ in range(self.warmup):
            program(*args)
        times = []
        for _ in range(self.reps):
            flush.zero_()        # evicts the arguments from L2
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(stream)
            program(*args)
            end.record(stream)
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    _flush: Any = None

    def _flush_buffer(self, torch):
        if Autotuner._flush is None:
            # Twice the largest L2 of the GPUs ism targets (H200: 60 MiB).
            Autotuner._flush = torch.empty(128 << 20, dtype=torch.uint8,
                                           device="cuda")
        return Autotuner._flush

    def _snapshot(self, args: tuple):
        which = range(len(args)) if self.restore == "all" else self.restore
        saved = []
        for i in which:
            if not -len(args) <= i < len(args):
                raise IndexError(f"restore: argument {i} of {len(args)}")
            a = args[i]
            if hasattr(a, "clone"):
                saved.append((a, a.clone()))
            elif hasattr(a, "copy") and hasattr(a, "shape"):
                saved.append((a, a.copy()))
        return saved

    @staticmethod
    def _put_back(saved) -> None:
        for original, copy in saved:
            if hasattr(original, "copy_"):
                original.copy_(copy)
            else:
                original[...] = copy

    # -- choosing -------------------------------------------------------------

    def tune(self, *args) -> TuningResult:
        """The configuration for ``args``: from memory, from the disk
        cache, or by tuning (compiling in parallel, pruning, timing on
        ``args``; arguments in ``restore`` are put back afterwards)."""
        key = self.key(*args)
        with self._lock:
            known = self._results.get(key)
        if known is not None:
            return known
        result = self._load(key)
        if result is None:
            result = self._run_tuning(key, args)
        elif self.verbose:
            print(f"ism.autotune {self.__name__}: {result.best} from "
                  f"{result.path}", file=sys.stderr)
        with self._lock:
            self._results[key] = result
        return result

    def _run_tuning(self, key: str, args: tuple) -> TuningResult:
        t0 = time.perf_counter()
        candidates = list(self.configs)
        pruned: List[Tuple[Config, str]] = []
        if self.prune_fn is not None:
            kept = list(self.prune_fn(list(candidates), args))
            pruned += [(c, "pruned by prune=") for c in candidates
                       if c not in kept]
            candidates = [c for c in candidates if c in kept]
        programs, failed = self._compile_all(candidates)
        pruned += failed
        runnable = []
        for c in candidates:
            if c not in programs:
                continue
            why = self._fits(programs[c])
            if why:
                pruned.append((c, f"does not fit the device: {why}"))
            else:
                runnable.append(c)
        if not runnable:
            reasons = "; ".join(f"{c}: {why}" for c, why in pruned)
            raise ValueError(f"ism.autotune {self.__name__}: no candidate "
                             f"can run ({reasons})")
        saved = self._snapshot(args)
        samples: Dict[Config, List[float]] = {}
        monitor = _power_monitor() if self.timer is None else None
        if monitor is not None:
            monitor.start()
        try:
            for c in runnable:
                samples[c] = [self._time(programs[c], args, c)]
            # A GPU's clocks drift over a tuning run (power, temperature) by
            # as much as close candidates differ: those within `close` of
            # the fastest are timed again in `rounds` interleaved rounds,
            # and every candidate keeps the median of its timings.
            fastest = min(t[0] for t in samples.values())
            rivals = [c for c in runnable
                      if samples[c][0] <= fastest * (1 + self.close)]
            if len(rivals) > 1:
                for _ in range(self.rounds):
                    for c in rivals:
                        samples[c].append(self._time(programs[c], args, c))
        finally:
            power = monitor.stop() if monitor is not None else {}
            self._put_back(saved)
        timings = {c: statistics.median(t) for c, t in samples.items()}
        best = min(runnable, key=lambda c: timings[c])
        result = TuningResult(key, best, timings, pruned,
                              time.perf_counter() - t0, False,
                              self._cache_path(key), power)
        described = (None if self.key_fn is not None else
                     [_describe_arg(a) for a in args])
        self._store(result, described)
        if self.verbose:
            table = ", ".join(f"{c}: {ms:.4f} ms" for c, ms in
                              sorted(timings.items(), key=lambda kv: kv[1]))
            print(f"ism.autotune {self.__name__}: {best} in "
                  f"{result.tuning_s:.2f} s ({table}; {len(pruned)} "
                  f"pruned; {_describe_power(power)})", file=sys.stderr)
        return result

    def program(self, config: Config) -> CompiledProgram:
        """The compiled program of one candidate."""
        if config not in self.configs:
            raise ValueError(f"{config} is not a candidate of "
                             f"{self.__name__}")
        with self._lock:
            known = self._programs.get(config)
        if known is not None:
            return known
        programs, failed = self._compile_all([config])
        if failed:
            raise ValueError(f"{config}: {failed[0][1]}")
        return programs[config]

    def _fast_key(self, args: tuple):
        """What selects the program of a call, without the digest: the
        arguments' part of ``key``."""
        if self.key_fn is not None:
            return ("key", self.key_fn(*args))
        return tuple(_describe_arg(a) for a in args)

    def __call__(self, *args, stream=None) -> None:
        fast = self._fast_key(args)
        program = self._dispatch.get(fast)
        if program is None:
            program = self.program(self.tune(*args).best)
            self._dispatch[fast] = program
        program(*args, stream=stream)

    def __repr__(self) -> str:
        return (f"<ism.autotune {self.__name__}: {len(self.configs)} "
                f"configs, {len(self._results)} keys chosen>")


def autotune(configs: Sequence[Config], **options: Any):
    """Decorator over a builder of one configuration: see the module
    docstring and :class:`Autotuner` for ``key``, ``prune``, ``restore``,
    ``warmup``, ``reps``, ``close``, ``rounds``, ``cache``, ``workers``,
    ``timer``, ``limits`` and
    ``verbose``; other
    keywords (``entry``, ``chip``, ``device``, ``coschedule``) go to
    :func:`ism.compile`."""
    return lambda builder: Autotuner(builder, configs, **options)
