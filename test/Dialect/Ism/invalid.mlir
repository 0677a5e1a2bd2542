// RUN: ism-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// Every verifier rule of the ism ops, one case each.

// expected-error @+1 {{must not return values; write results through memref arguments}}
ism.kernel @returns_value() -> i32 {
  ism.return
}

// -----

// A num_warps that is not an integer (found by ism-pipeline-fuzzer: it
// crashed the verifier).
// expected-error @+1 {{attribute 'num_warps' failed to satisfy constraint: 32-bit signless integer attribute}}
ism.kernel @symbol_warps() attributes {num_warps = @k} {
  ism.return
}

// -----

// expected-error @+1 {{num_warps must be a power of two from 1 to 32, got 3}}
ism.kernel @bad_warps() attributes {num_warps = 3 : i32} {
  ism.return
}

// -----

// expected-error @+1 {{num_warps must be a power of two from 1 to 32, got 64}}
ism.kernel @too_many_warps() attributes {num_warps = 64 : i32} {
  ism.return
}

// -----

// expected-error @+1 {{ring_producer must be true or false, got 1 : i32}}
ism.kernel @bad_ring_producer() attributes {num_warps = 8 : i32, ring_producer = 1 : i32} {
  ism.return
}

// -----

// expected-error @+1 {{ping_pong must be true or false, got "yes"}}
ism.kernel @bad_ping_pong() attributes {num_warps = 8 : i32, ping_pong = "yes"} {
  ism.return
}

// -----

// expected-error @+1 {{persistent must be true or false, got 1 : i32}}
ism.kernel @bad_persistent() attributes {num_warps = 8 : i32, persistent = 1 : i32} {
  ism.return
}

// -----

// expected-error @+1 {{min_ctas_per_sm must be from 1 to 32 (an SM holds at most 32 CTAs), got 0}}
ism.kernel @no_ctas() attributes {num_warps = 4 : i32, min_ctas_per_sm = 0 : i32} {
  ism.return
}

// -----

// expected-error @+1 {{min_ctas_per_sm must be from 1 to 32 (an SM holds at most 32 CTAs), got 33}}
ism.kernel @too_many_ctas() attributes {num_warps = 1 : i32, min_ctas_per_sm = 33 : i32} {
  ism.return
}

// -----

// expected-error @+1 {{min_ctas_per_sm = 5 with 16 warps asks for 2560 threads on one SM; an SM holds at most 2048}}
ism.kernel @too_many_threads() attributes {num_warps = 16 : i32, min_ctas_per_sm = 5 : i32} {
  ism.return
}

// -----

// expected-error @+1 {{argument #0 has type 'tensor<4xf32>'; kernel arguments must be memrefs (global memory) or scalars (integer, index or float)}}
ism.kernel @tensor_arg(%t: tensor<4xf32>) {
  ism.return
}

// -----

// expected-error @+1 {{must have a body}}
ism.kernel private @declaration()

// -----

func.func @program_id_outside() {
  // expected-error @+1 {{must be inside an ism.kernel}}
  %0 = ism.program_id x : index
  return
}

// -----

func.func @num_programs_outside() {
  // expected-error @+1 {{must be inside an ism.kernel}}
  %0 = ism.num_programs y : i32
  return
}

// -----

ism.kernel @return_outside_kernel() {
  ism.return
}
func.func @f() {
  // expected-error @+1 {{expects parent op 'ism.kernel'}}
  ism.return
}

// -----

ism.kernel @not_power_of_two(%s: f32) {
  // expected-error @+1 {{result #0 of type 'tensor<100xf32>' is not a tile: dimension 0 is 100, but tile dimensions must be powers of two}}
  %t = ism.splat %s : f32 -> tensor<100xf32>
  ism.return
}

// -----

ism.kernel @dynamic_tile(%x: memref<?xf32>, %i: index) {
  // expected-error @+1 {{result #0 of type 'tensor<?xf32>' is not a tile: dimension 0 is dynamic; tiles have static shapes}}
  %t = ism.load %x[%i] : memref<?xf32> -> tensor<?xf32>
  ism.return
}

// -----

ism.kernel @range_size() {
  // expected-error @+1 {{range 0 to 64 has 64 elements but the result tile has 128}}
  %r = ism.range 0 to 64 : tensor<128xi32>
  ism.return
}

// -----

ism.kernel @range_empty() {
  // expected-error @+1 {{end (0) must be greater than start (4)}}
  %r = ism.range 4 to 0 : tensor<4xi32>
  ism.return
}

// -----

ism.kernel @range_rank() {
  // expected-error @+1 {{result must be a 1-D tile, got 'tensor<2x2xi32>'}}
  %r = ism.range 0 to 4 : tensor<2x2xi32>
  ism.return
}

// -----

ism.kernel @range_overflow() {
  // expected-error @+1 {{end - 1 (255) does not fit in 'i8'}}
  %r = ism.range 0 to 256 : tensor<256xi8>
  ism.return
}

// -----

// An i0 range (found by ism-interpret-fuzzer: the verifier shifted by -1).
ism.kernel @range_i0() {
  // expected-error @+1 {{end - 1 (255) does not fit in 'i0'}}
  %r = ism.range 0 to 256 : tensor<256xi0>
  ism.return
}

// -----

ism.kernel @splat_type(%s: f16) {
  // expected-error @+1 {{result element type is the scalar's type}}
  %t = "ism.splat"(%s) : (f16) -> tensor<4xf32>
  ism.return
}

// -----

ism.kernel @broadcast_rank(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4xf32>
  // expected-error @+1 {{source rank 1 differs from result rank 2; use ism.expand_dims to add dimensions}}
  %b = ism.broadcast %t : tensor<4xf32> -> tensor<4x4xf32>
  ism.return
}

// -----

ism.kernel @broadcast_dim(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<2x4xf32>
  // expected-error @+1 {{source dimension 0 is 2, which is neither 1 nor the result's 8}}
  %b = ism.broadcast %t : tensor<2x4xf32> -> tensor<8x4xf32>
  ism.return
}

// -----

ism.kernel @broadcast_element(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<1x4xf32>
  // expected-error @+1 {{source element type 'f32' differs from result element type 'f16'}}
  %b = ism.broadcast %t : tensor<1x4xf32> -> tensor<8x4xf16>
  ism.return
}

// -----

ism.kernel @expand_axis(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4xf32>
  // expected-error @+1 {{axis 2 is out of range for a rank-1 source (0..1)}}
  %e = ism.expand_dims %t axis = 2 : tensor<4xf32> -> tensor<4x1xf32>
  ism.return
}

// -----

ism.kernel @expand_shape(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4xf32>
  // expected-error @+1 {{result shape 4x1 should be 1x4 (the source with a 1 at axis 0)}}
  %e = ism.expand_dims %t axis = 0 : tensor<4xf32> -> tensor<4x1xf32>
  ism.return
}

// -----

ism.kernel @reshape_count(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4x4xf32>
  // expected-error @+1 {{source has 16 elements but the result has 32}}
  %r = ism.reshape %t : tensor<4x4xf32> -> tensor<32xf32>
  ism.return
}

// -----

ism.kernel @trans_order(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4x8xf32>
  // expected-error @+1 {{order must be a permutation of 0..1}}
  %r = ism.trans %t order = [1, 1] : tensor<4x8xf32> -> tensor<8x4xf32>
  ism.return
}

// -----

ism.kernel @trans_order_size(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4x8xf32>
  // expected-error @+1 {{order has 3 entries but the source has rank 2}}
  %r = ism.trans %t order = [1, 0, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  ism.return
}

// -----

ism.kernel @trans_shape(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4x8xf32>
  // expected-error @+1 {{result shape 4x8 should be 8x4 (the source permuted by the order)}}
  %r = ism.trans %t order = [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  ism.return
}

// -----

ism.kernel @load_offsets(%A: memref<?x?xf32>, %i: index) {
  // expected-error @+1 {{expects 2 offsets (one per dimension of 'memref<?x?xf32>'), got 1}}
  %t = ism.load %A[%i] : memref<?x?xf32> -> tensor<4x4xf32>
  ism.return
}

// -----

ism.kernel @load_rank(%A: memref<?x?xf32>, %i: index) {
  // expected-error @+1 {{tile rank 1 differs from memref rank 2; access a tile of the memref's rank and reshape it}}
  %t = ism.load %A[%i, %i] : memref<?x?xf32> -> tensor<16xf32>
  ism.return
}

// -----

ism.kernel @load_element(%x: memref<?xf32>, %i: index) {
  // expected-error @+1 {{tile element type 'f16' differs from memref element type 'f32'}}
  %t = ism.load %x[%i] : memref<?xf32> -> tensor<16xf16>
  ism.return
}

// -----

ism.kernel @load_padding(%x: memref<?xf32>, %i: index) {
  // expected-error @+1 {{padding type 'f16' differs from the tile element type 'f32'}}
  %t = ism.load %x[%i] {padding = 1.0 : f16} : memref<?xf32> -> tensor<16xf32>
  ism.return
}

// -----

ism.kernel @load_padding_kind(%x: memref<?xf32>, %i: index) {
  // expected-error @+1 {{padding must be an integer or float constant}}
  %t = ism.load %x[%i] {padding = dense<1.0> : tensor<2xf32>} : memref<?xf32> -> tensor<16xf32>
  ism.return
}

// -----

ism.kernel @load_mask(%x: memref<?xf32>, %i: index, %m: i1) {
  %mask = ism.splat %m : i1 -> tensor<8xi1>
  // expected-error @+1 {{mask is an i1 tile shaped like the result}}
  %t = "ism.load"(%x, %i, %mask) {operandSegmentSizes = array<i32: 1, 1, 1>} : (memref<?xf32>, index, tensor<8xi1>) -> tensor<16xf32>
  ism.return
}

// -----

ism.kernel @load_strided(%x: memref<4x4xf32, affine_map<(d0, d1) -> (d0 mod 2 + d1)>>, %i: index) {
  // expected-error @+1 {{must have a strided layout}}
  %t = ism.load %x[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d0 mod 2 + d1)>> -> tensor<4x4xf32>
  ism.return
}

// -----

ism.kernel @store_offsets(%A: memref<?x?xf32>, %i: index, %s: f32) {
  %t = ism.splat %s : f32 -> tensor<4x4xf32>
  // expected-error @+1 {{expects 2 offsets (one per dimension of 'memref<?x?xf32>'), got 3}}
  ism.store %t, %A[%i, %i, %i] : tensor<4x4xf32> -> memref<?x?xf32>
  ism.return
}

// -----

ism.kernel @store_element(%x: memref<?xf32>, %i: index, %s: i32) {
  %t = ism.splat %s : i32 -> tensor<4xi32>
  // expected-error @+1 {{tile element type 'i32' differs from memref element type 'f32'}}
  ism.store %t, %x[%i] : tensor<4xi32> -> memref<?xf32>
  ism.return
}

// -----

ism.kernel @gather_count(%A: memref<?x?xf32>) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  // expected-error @+1 {{expects 2 index tiles (one per dimension of 'memref<?x?xf32>'), got 1}}
  %g = ism.gather %A[%idx] : memref<?x?xf32>[tensor<16xi32>] -> tensor<16xf32>
  ism.return
}

// -----

ism.kernel @gather_shape(%x: memref<?xf32>) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  // expected-error @+1 {{index tile #0 has shape 16 but the data tile has shape 32}}
  %g = ism.gather %x[%idx] : memref<?xf32>[tensor<16xi32>] -> tensor<32xf32>
  ism.return
}

// -----

ism.kernel @gather_padding(%x: memref<?xf32>) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  // expected-error @+1 {{padding type 'i32' differs from the tile element type 'f32'}}
  %g = ism.gather %x[%idx] {padding = 0 : i32} : memref<?xf32>[tensor<16xi32>] -> tensor<16xf32>
  ism.return
}

// -----

ism.kernel @async_gather_slots(%x: memref<?xf32>, %s: index) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  // expected-error @+1 {{a ring has 2 to 8 slots, got 1}}
  ism.async_gather %x[%idx] slot %s {ring = 0 : i32, slots = 1 : i32} : memref<?xf32>[tensor<16xi32>]
  ism.return
}

// -----

#b1 = #ism.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
#b2 = #ism.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
ism.kernel @async_gather_layouts(%x: memref<?x?xf32>, %s: index) {
  %i = "test.tile"() : () -> tensor<8x128xi32, #b1>
  %j = "test.tile"() : () -> tensor<8x128xi32, #b2>
  // expected-error @+1 {{index tile #1 has a different layout than index tile #0}}
  ism.async_gather %x[%i, %j] slot %s {ring = 0 : i32, slots = 2 : i32} : memref<?x?xf32>[tensor<8x128xi32, #b1>, tensor<8x128xi32, #b2>]
  ism.return
}

// -----

ism.kernel @async_gather_wait_slots(%s: index) {
  // expected-error @+1 {{a ring has 2 to 8 slots, got 9}}
  %t = ism.async_gather_wait ring 0 slot %s {slots = 9 : i32, pending = 1 : i32} : tensor<16xf32>
  ism.return
}

// -----

// expected-error @+1 {{gather_stages must be an integer from 1 (gathers not pipelined) to 8, got 0 : i32}}
ism.kernel @gather_stages_zero() attributes {num_warps = 4 : i32, gather_stages = 0 : i32} {
  ism.return
}

// -----

// expected-error @+1 {{load_stages must be an integer from 1 (loads not issued ahead) to 8, got 9 : i32}}
ism.kernel @load_stages_nine() attributes {num_warps = 4 : i32, load_stages = 9 : i32} {
  ism.return
}

// -----

ism.kernel @assert_in_kernel(%c: i1) {
  // expected-error @+1 {{'ism.assert' op states a requirement of a host function; it cannot be used inside an ism.kernel (use a mask there)}}
  ism.assert %c, "never"
  ism.return
}

// -----

func.func @assert_placeholder_range(%c: i1, %n: index) {
  // expected-error @+1 {{'ism.assert' op message refers to {1} but the op has 1 value}}
  ism.assert %c, "n is {0}, m is {1}" (%n) : index
  return
}

// -----

func.func @assert_placeholder_malformed(%c: i1, %n: index) {
  // expected-error @+1 {{'ism.assert' op message has a '{' that is not a placeholder {N}: "n is {n}"}}
  ism.assert %c, "n is {n}" (%n) : index
  return
}

// -----

ism.kernel @scatter_element(%x: memref<?xf32>, %s: f16) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  %v = ism.splat %s : f16 -> tensor<16xf16>
  // expected-error @+1 {{tile element type 'f16' differs from memref element type 'f32'}}
  ism.scatter %v, %x[%idx] : tensor<16xf16> -> memref<?xf32>[tensor<16xi32>]
  ism.return
}

// -----

ism.kernel @atomic_kind(%x: memref<?xf32>, %s: f32) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  %v = ism.splat %s : f32 -> tensor<16xf32>
  // expected-error @+1 {{atomic xor needs integer elements, got 'f32'}}
  %o = ism.atomic_rmw xor %x[%idx], %v : memref<?xf32>[tensor<16xi32>], tensor<16xf32>
  ism.return
}

// -----

ism.kernel @atomic_width(%x: memref<?xi8>, %s: i8) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  %v = ism.splat %s : i8 -> tensor<16xi8>
  // expected-error @+1 {{atomics need 16-, 32- or 64-bit elements, got 'i8'}}
  %o = ism.atomic_rmw add %x[%idx], %v : memref<?xi8>[tensor<16xi32>], tensor<16xi8>
  ism.return
}

// -----

ism.kernel @atomic_float_kind(%x: memref<?xf8E4M3FN>, %s: f8E4M3FN) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  %v = ism.splat %s : f8E4M3FN -> tensor<16xf8E4M3FN>
  // expected-error @+1 {{atomic add does not support 'f8E4M3FN'}}
  %o = ism.atomic_rmw add %x[%idx], %v : memref<?xf8E4M3FN>[tensor<16xi32>], tensor<16xf8E4M3FN>
  ism.return
}

// -----

ism.kernel @dot_contraction(%s: f16) {
  %a = ism.splat %s : f16 -> tensor<16x32xf16>
  %b = ism.splat %s : f16 -> tensor<64x16xf16>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @+1 {{contraction dimensions differ: A is 16x32 (K = 32) but B is 64x16 (K = 64)}}
  %d = ism.dot %a, %b, %c : tensor<16x32xf16> * tensor<64x16xf16> -> tensor<16x16xf32>
  ism.return
}

// -----

ism.kernel @dot_acc_shape(%s: f16) {
  %a = ism.splat %s : f16 -> tensor<16x32xf16>
  %b = ism.splat %s : f16 -> tensor<32x64xf16>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @+1 {{accumulator is 16x16 but A x B is 16x64}}
  %d = ism.dot %a, %b, %c : tensor<16x32xf16> * tensor<32x64xf16> -> tensor<16x16xf32>
  ism.return
}

// -----

ism.kernel @dot_rank(%s: f16) {
  %a = ism.splat %s : f16 -> tensor<16xf16>
  %c = arith.constant dense<0.0> : tensor<16xf32>
  // expected-error @+1 {{operands must be 2-D (M x K, K x N) or 3-D with a leading batch dimension, got rank 1}}
  %d = ism.dot %a, %a, %c : tensor<16xf16> * tensor<16xf16> -> tensor<16xf32>
  ism.return
}

// -----

ism.kernel @dot_mixed_rank(%s: f16) {
  %a = ism.splat %s : f16 -> tensor<16x16xf16>
  %b = ism.splat %s : f16 -> tensor<2x16x16xf16>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @+1 {{A, B and the accumulator must have the same rank, got 2, 3 and 2}}
  %d = ism.dot %a, %b, %c : tensor<16x16xf16> * tensor<2x16x16xf16> -> tensor<16x16xf32>
  ism.return
}

// -----

ism.kernel @dot_batch(%s: f16) {
  %a = ism.splat %s : f16 -> tensor<2x16x16xf16>
  %b = ism.splat %s : f16 -> tensor<4x16x16xf16>
  %c = arith.constant dense<0.0> : tensor<2x16x16xf32>
  // expected-error @+1 {{batch dimensions differ: 2, 4 and 2}}
  %d = ism.dot %a, %b, %c : tensor<2x16x16xf16> * tensor<4x16x16xf16> -> tensor<2x16x16xf32>
  ism.return
}

// -----

ism.kernel @dot_operand_types(%s: f16, %t: bf16) {
  %a = ism.splat %s : f16 -> tensor<16x16xf16>
  %b = ism.splat %t : bf16 -> tensor<16x16xbf16>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @+1 {{A and B element types differ: 'f16' and 'bf16'}}
  %d = ism.dot %a, %b, %c : tensor<16x16xf16> * tensor<16x16xbf16> -> tensor<16x16xf32>
  ism.return
}

// -----

// Only the 8-bit floats mix (wgmma's e4m3 x e5m2).
ism.kernel @dot_operand_types_f8(%s: f8E4M3FN, %t: bf16) {
  %a = ism.splat %s : f8E4M3FN -> tensor<16x32xf8E4M3FN>
  %b = ism.splat %t : bf16 -> tensor<32x16xbf16>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @+1 {{A and B element types differ: 'f8E4M3FN' and 'bf16' (only f8E4M3FN and f8E5M2 mix)}}
  %d = ism.dot %a, %b, %c : tensor<16x32xf8E4M3FN> * tensor<32x16xbf16> -> tensor<16x16xf32>
  ism.return
}

// -----

ism.kernel @dot_acc_type(%s: bf16) {
  %a = ism.splat %s : bf16 -> tensor<16x16xbf16>
  %c = arith.constant dense<0.0> : tensor<16x16xbf16>
  // expected-error @+1 {{accumulator element type 'bf16' does not go with 'bf16' operands}}
  %d = ism.dot %a, %a, %c : tensor<16x16xbf16> * tensor<16x16xbf16> -> tensor<16x16xbf16>
  ism.return
}

// -----

ism.kernel @dot_int_acc(%s: i8) {
  %a = ism.splat %s : i8 -> tensor<16x16xi8>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @+1 {{accumulator element type 'f32' does not go with 'i8' operands}}
  %d = ism.dot %a, %a, %c : tensor<16x16xi8> * tensor<16x16xi8> -> tensor<16x16xf32>
  ism.return
}

// -----

ism.kernel @dot_element(%s: i16) {
  %a = ism.splat %s : i16 -> tensor<16x16xi16>
  %c = arith.constant dense<0> : tensor<16x16xi32>
  // expected-error @+1 {{unsupported operand element type 'i16'; expected f16, bf16, f32, f64, i8, f8E4M3FN or f8E5M2}}
  %d = ism.dot %a, %a, %c : tensor<16x16xi16> * tensor<16x16xi16> -> tensor<16x16xi32>
  ism.return
}

// -----

ism.kernel @dot_precision(%s: f16) {
  %a = ism.splat %s : f16 -> tensor<16x16xf16>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  // expected-error @+1 {{input precision tf32 applies to f32 operands only, got 'f16'}}
  %d = ism.dot %a, %a, %c precision = tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  ism.return
}

// -----

ism.kernel @reduce_axis(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4x8xf32>
  // expected-error @+1 {{axis 2 is out of range for rank-2 tiles (0..1)}}
  %r = ism.reduce %t axis = 2 : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %x = arith.addf %a, %b : f32
    ism.yield %x : f32
  }
  ism.return
}

// -----

ism.kernel @reduce_result(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<4x8xf32>
  // expected-error @+1 {{result #0 must be a 4 tile of 'f32' (the source without axis 1), got 'tensor<8xf32>'}}
  %r = ism.reduce %t axis = 1 : tensor<4x8xf32> -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    %x = arith.addf %a, %b : f32
    ism.yield %x : f32
  }
  ism.return
}

// -----

ism.kernel @reduce_scalar(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{result #0 must be the scalar 'f32' (reducing a 1-D tile), got 'tensor<1xf32>'}}
  %r = ism.reduce %t axis = 0 : tensor<8xf32> -> tensor<1xf32> {
  ^bb0(%a: f32, %b: f32):
    %x = arith.addf %a, %b : f32
    ism.yield %x : f32
  }
  ism.return
}

// -----

ism.kernel @reduce_shapes(%s: f32, %i: i32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  %u = ism.splat %i : i32 -> tensor<16xi32>
  // expected-error @+1 {{all source tiles must have the same shape}}
  %r:2 = ism.reduce %t, %u axis = 0 : tensor<8xf32>, tensor<16xi32> -> f32, i32 {
  ^bb0(%a: f32, %b: i32, %c: f32, %d: i32):
    ism.yield %a, %b : f32, i32
  }
  ism.return
}

// -----

ism.kernel @reduce_results_count(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{has 2 results for 1 sources}}
  %r:2 = ism.reduce %t axis = 0 : tensor<8xf32> -> f32, f32 {
  ^bb0(%a: f32, %b: f32):
    ism.yield %a : f32
  }
  ism.return
}

// -----

ism.kernel @combiner_args(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{combiner takes 2 arguments (two per source), got 1}}
  %r = ism.reduce %t axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32):
    ism.yield %a : f32
  }
  ism.return
}

// -----

ism.kernel @combiner_arg_type(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{combiner argument #1 has type 'f16' but source #0 has elements of type 'f32'}}
  %r = ism.reduce %t axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f16):
    ism.yield %a : f32
  }
  ism.return
}

// -----

ism.kernel @combiner_yield_count(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{combiner yields 2 values, expected 1}}
  %r = ism.reduce %t axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    ism.yield %a, %b : f32, f32
  }
  ism.return
}

// -----

ism.kernel @combiner_yield_type(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{combiner yield #0 has type 'i32', expected 'f32'}}
  %r = ism.reduce %t axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.constant 0 : i32
    ism.yield %c : i32
  }
  ism.return
}

// -----

ism.kernel @combiner_terminator(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{combiner must end with ism.yield}}
  %r = ism.reduce %t axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    "test.terminator"() : () -> ()
  }
  ism.return
}

// -----

ism.kernel @scan_result(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{result #0 has type 'tensor<8xf16>' but source #0 has type 'tensor<8xf32>'}}
  %r = ism.scan %t axis = 0 : tensor<8xf32> -> tensor<8xf16> {
  ^bb0(%a: f32, %b: f32):
    ism.yield %a : f32
  }
  ism.return
}

// -----

ism.kernel @scan_axis(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<8xf32>
  // expected-error @+1 {{axis -1 is out of range for rank-1 tiles (0..0)}}
  %r = ism.scan %t axis = -1 : tensor<8xf32> -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    ism.yield %a : f32
  }
  ism.return
}

// -----

func.func @yield_outside(%a: f32) {
  // expected-error @+1 {{expects parent op to be one of 'ism.reduce, ism.scan'}}
  ism.yield %a : f32
}

// -----

#b0 = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
ism.kernel @convert_shape(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<128xf32, #b0>
  // expected-error @+1 {{changes the shape from 128 to 256; only the layout may change}}
  %u = ism.convert_layout %t : tensor<128xf32, #b0> -> tensor<256xf32, #b0>
  ism.return
}

// -----

#b0 = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
ism.kernel @convert_element(%s: f32) {
  %t = ism.splat %s : f32 -> tensor<128xf32, #b0>
  // expected-error @+1 {{source element type 'f32' differs from result element type 'f16'}}
  %u = ism.convert_layout %t : tensor<128xf32, #b0> -> tensor<128xf16, #b0>
  ism.return
}

// -----

ism.kernel @k(%x: memref<?xf32>) {
  ism.return
}
func.func @launch_unknown(%x: memref<?xf32>, %n: index) {
  // expected-error @+1 {{@missing does not name an ism.kernel}}
  ism.launch @missing grid(%n) (%x) : (memref<?xf32>)
  return
}

// -----

func.func @not_a_kernel() {
  return
}
func.func @launch_func(%n: index) {
  // expected-error @+1 {{@not_a_kernel does not name an ism.kernel}}
  ism.launch @not_a_kernel grid(%n) ()
  return
}

// -----

ism.kernel @k(%x: memref<?xf32>, %s: f32) {
  ism.return
}
func.func @launch_count(%x: memref<?xf32>, %n: index) {
  // expected-error @+1 {{passes 1 arguments but @k takes 2}}
  ism.launch @k grid(%n) (%x) : (memref<?xf32>)
  return
}

// -----

ism.kernel @k(%x: memref<?xf32>) {
  ism.return
}
func.func @launch_type(%x: memref<?xf16>, %n: index) {
  // expected-error @+1 {{argument #0 has type 'memref<?xf16>' but @k expects 'memref<?xf32>'}}
  ism.launch @k grid(%n) (%x) : (memref<?xf16>)
  return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @launch_grid(%n: index) {
  // expected-error @+1 {{grid must have 1 to 3 dimensions, got 4}}
  ism.launch @k grid(%n, %n, %n, %n) ()
  return
}

// -----

ism.kernel @k() {
  ism.return
}
ism.kernel @launch_in_kernel(%n: index) {
  // expected-error @+1 {{launches kernels from the host; it cannot be used inside an ism.kernel}}
  ism.launch @k grid(%n) ()
  ism.return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @coschedule_other(%n: index) {
  // expected-error @+1 {{may only contain ism.launch ops, found 'arith.constant'}}
  ism.coschedule warp_specialized {
    %c = arith.constant 1 : index
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @coschedule_one(%n: index) {
  // expected-error @+1 {{needs at least two launches to co-schedule, found 1}}
  ism.coschedule block_interleaved {
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @coschedule_misspelt_override(%n: index) {
  // expected-error @+1 {{has no attribute 'joins'; its overrides are stages, registers, replicas, ctas_per_sm, ring_stages, work_counters, prefetch, fallback, join and timeout_ms (other attributes need a dialect prefix)}}
  ism.coschedule warp_specialized attributes {joins = false} {
    ism.launch @k grid(%n) ()
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @coschedule_override_type(%n: index) {
  // expected-error @+1 {{attribute 'join' failed to satisfy constraint: bool attribute}}
  ism.coschedule warp_specialized attributes {join = 1 : i32} {
    ism.launch @k grid(%n) ()
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @coschedule_override_array(%n: index) {
  // expected-error @+1 {{attribute 'replicas' failed to satisfy constraint: i32 dense array attribute}}
  ism.coschedule warp_specialized attributes {replicas = [1, 2]} {
    ism.launch @k grid(%n) ()
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @ordered_override(%n: index) {
  // expected-error @+1 {{join does not apply to the ordered policy (its overrides are ctas_per_sm, prefetch, ring_stages and timeout_ms)}}
  ism.coschedule ordered attributes {join = false} {
    ism.launch @k grid(%n) ()
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @timeout_not_ordered(%n: index) {
  // expected-error @+1 {{timeout_ms applies to the ordered policy only, not warp_specialized}}
  ism.coschedule warp_specialized attributes {timeout_ms = 10 : i32} {
    ism.launch @k grid(%n) ()
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @timeout_range(%n: index) {
  // expected-error @+1 {{timeout_ms must be from 1 to 600000, got 0}}
  ism.coschedule ordered attributes {timeout_ms = 0 : i32} {
    ism.launch @k grid(%n) ()
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

ism.kernel @task_wait_outside() {
  // expected-error @+1 {{must be inside a partition of an ordered ism.warp_specialize}}
  ism.task_wait [0]
  ism.return
}

// -----

func.func @coschedule_policy(%n: index) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'policy' [warp_specialized, block_interleaved, ordered]}}
  ism.coschedule round_robin {
  }
  return
}

// -----

ism.kernel @tile_too_large(%s: f32) {
  // expected-error @+1 {{result #0 of type 'tensor<1073741824x1024xf32>' has 1099511627776 elements; a tile has at most 1048576 (2^20)}}
  %t = ism.splat %s : f32 -> tensor<1073741824x1024xf32>
  ism.return
}

// -----

ism.kernel @tile_elements_overflow() {
  // expected-error @+1 {{result #0 of type 'tensor<1073741824x1073741824x1073741824xf32>' has more than 2^63 elements; a tile has at most 1048576 (2^20)}}
  %t = arith.constant dense<1.0> : tensor<1073741824x1073741824x1073741824xf32>
  ism.return
}


// -----

ism.kernel @atomic_sem(%x: memref<?xi32>) {
  %idx = ism.range 0 to 16 : tensor<16xi32>
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'sem' [relaxed, acquire, release, acq_rel]}}
  %o = ism.atomic_rmw add %x[%idx], %idx sem = seq_cst : memref<?xi32>[tensor<16xi32>], tensor<16xi32>
  ism.return
}

// -----

ism.kernel @im2col_rank(%x: memref<?x?x?xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{reads an NHWC activation tensor (a rank-4 memref)}}
  %a = ism.im2col %x[%c0, %c0] tap [%c0, %c0] {filter = array<i64: 3, 3>,
      stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>} : memref<?x?x?xbf16> -> tensor<128x64xbf16>
  ism.return
}

// -----

ism.kernel @im2col_stride(%x: memref<?x?x?x?xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{stride values must be from 1 to 65535, got 0}}
  %a = ism.im2col %x[%c0, %c0] tap [%c0, %c0] {filter = array<i64: 3, 3>,
      stride = array<i64: 0, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>} : memref<?x?x?x?xbf16> -> tensor<128x64xbf16>
  ism.return
}

// -----

ism.kernel @im2col_filter(%x: memref<?x?x?x?xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{filter takes two values (along H and W), got 1}}
  %a = ism.im2col %x[%c0, %c0] tap [%c0, %c0] {filter = array<i64: 3>,
      stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>} : memref<?x?x?x?xbf16> -> tensor<128x64xbf16>
  ism.return
}
