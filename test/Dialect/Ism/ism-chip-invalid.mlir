// RUN: ism-opt %s -split-input-file -verify-diagnostics \
// RUN:   -ism-dependent-launch=chip=sm_9x
// RUN: not ism-opt %s -pass-pipeline='builtin.module(ism-accelerate-dot{chip=volta})' \
// RUN:   2>&1 | FileCheck %s --check-prefix=DOT
// DOT: error: ism-accelerate-dot: chip 'volta' is not an NVIDIA target (sm_80, sm_90a, ...)

// The passes that take a chip reject one that names no NVIDIA target
// (sm_<digits>, optionally followed by "a" or "f"), rather than treating
// it as an old chip.
// expected-error @below {{ism-dependent-launch: chip 'sm_9x' is not an NVIDIA target (sm_80, sm_90a, ...)}}
module {
  gpu.module @kernels {
    gpu.func @kernel() kernel {
      gpu.return
    }
  }
}
