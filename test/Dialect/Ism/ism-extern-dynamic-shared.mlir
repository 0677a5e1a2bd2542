// RUN: ism-opt %s --ism-extern-dynamic-shared | FileCheck %s

// The zero-length shared global that gpu.dynamic_shared_memory lowers to
// becomes an external declaration (NVPTX: `.extern .shared .b8 name[]`).
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// Sized shared arrays, initialised ones and other address spaces stay.
// CHECK: llvm.mlir.global internal @static_shared() {addr_space = 3 : i32} : !llvm.array<64 x i8>
// CHECK: llvm.mlir.global internal @global_zero() {addr_space = 1 : i32} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @initialised(dense<0> : tensor<0xi8>) {addr_space = 3 : i32} : !llvm.array<0 x i8>
gpu.module @kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @static_shared() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  llvm.mlir.global internal @global_zero() {addr_space = 1 : i32} : !llvm.array<0 x i8>
  llvm.mlir.global internal @initialised(dense<0> : tensor<0xi8>) {addr_space = 3 : i32} : !llvm.array<0 x i8>
}
