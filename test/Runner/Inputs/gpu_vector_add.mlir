// A vector add at the GPU level (upstream gpu dialect, explicit
// gpu.launch_func), runnable before the ism lowering exists.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @add(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>,
                  %n: index) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %a = memref.load %x[%i] : memref<?xf32>
        %b = memref.load %y[%i] : memref<?xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %z[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %blocks = arith.ceildivui %n, %c256 : index
    gpu.launch_func @kernels::@add blocks in (%blocks, %c1, %c1)
        threads in (%c256, %c1, %c1)
        args(%x : memref<?xf32>, %y : memref<?xf32>, %z : memref<?xf32>,
             %n : index)
    return
  }

  // Asks for more dynamic shared memory than any GPU has.
  func.func @too_much_shared(%x: memref<?xf32>, %y: memref<?xf32>,
                             %z: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %big = arith.constant 1073741824 : i32
    %n = memref.dim %x, %c0 : memref<?xf32>
    gpu.launch_func @kernels::@add blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) dynamic_shared_memory_size %big
        args(%x : memref<?xf32>, %y : memref<?xf32>, %z : memref<?xf32>,
             %n : index)
    return
  }

  // A wrong launch: n is 64 past the end of the buffers, so the last
  // threads read and write outside them (scripts/gpu-tests.sh --sanitize's
  // control: compute-sanitizer memcheck must report it).
  func.func @out_of_bounds(%x: memref<?xf32>, %y: memref<?xf32>,
                           %z: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %dim = memref.dim %x, %c0 : memref<?xf32>
    %n = arith.addi %dim, %c64 : index
    %blocks = arith.ceildivui %n, %c256 : index
    gpu.launch_func @kernels::@add blocks in (%blocks, %c1, %c1)
        threads in (%c256, %c1, %c1)
        args(%x : memref<?xf32>, %y : memref<?xf32>, %z : memref<?xf32>,
             %n : index)
    return
  }
}
