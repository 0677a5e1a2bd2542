// RUN: not ism-opt %s -ism-assign-layouts=num-warps=3 2>&1 | FileCheck %s

// CHECK: error: 'ism.kernel' op num-warps must be a power of two from 1 to 32, got 3
ism.kernel @k() {
  ism.return
}
