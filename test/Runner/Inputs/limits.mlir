// Host functions and kernels that ask for more than a GPU or the host has
// (test/Runner/limits.test, gpu-limits.test): grids past CUDA's limits and
// a kernel that runs for as long as its argument says.

// Adds 1024-element blocks (examples/vector_add.mlir).
ism.kernel @add(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %block = arith.constant 1024 : index
  %off = arith.muli %pid, %block : index
  %a = ism.load %x[%off] : memref<?xf32> -> tensor<1024xf32>
  %b = ism.load %y[%off] : memref<?xf32> -> tensor<1024xf32>
  %sum = arith.addf %a, %b : tensor<1024xf32>
  ism.store %sum, %z[%off] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

// Iterates x <- x * 0.5 + 1 %n times (no closed form the compiler could
// take), then stores x: with a large %n it runs for ever.
ism.kernel @spin(%out: memref<?xf32>, %n: index)
    attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %x = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %m = arith.mulf %acc, %half : f32
    %s = arith.addf %m, %one : f32
    scf.yield %s : f32
  }
  %t = ism.splat %x : f32 -> tensor<32xf32>
  ism.store %t, %out[%c0] : tensor<32xf32> -> memref<?xf32>
  ism.return
}

// 2^31 - 1 x 512 programs: 2^40, past what the interpreter runs.
func.func @programs_2_40(%x: memref<?xf32>, %y: memref<?xf32>,
                         %z: memref<?xf32>) {
  %gx = arith.constant 2147483647 : index
  %gy = arith.constant 512 : index
  ism.launch @add grid(%gx, %gy) (%x, %y, %z)
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
  return
}

// Grid y of 65536: one past CUDA's limit.
func.func @grid_y(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %gy = arith.constant 65536 : index
  ism.launch @add grid(%c1, %gy) (%x, %y, %z)
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
  return
}

// Grid x from the buffer's size: n ceildiv 1, past 2^31 - 1 for large n.
func.func @grid_x(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>,
                  %blocks: index) {
  ism.launch @add grid(%blocks) (%x, %y, %z)
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
  return
}

// A negative grid size (0 - 1).
func.func @grid_negative(%x: memref<?xf32>, %y: memref<?xf32>,
                         %z: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = arith.subi %c0, %c1 : index
  ism.launch @add grid(%g) (%x, %y, %z)
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
  return
}

func.func @run_spin(%out: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  ism.launch @spin grid(%c1) (%out, %n) : (memref<?xf32>, index)
  return
}
