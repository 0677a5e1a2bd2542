// RUN: ism-opt %s -split-input-file -verify-diagnostics

ism.kernel @writer(%x: memref<?xf32>, %y: memref<?xf32>) {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<128xf32>
  ism.store %t, %y[%p] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
  %n = arith.constant 4 : index
  // expected-error @+1 {{launches of @writer and @writer share a buffer that @writer writes (argument #1); co-scheduled launches run in no order, so none may write a buffer another one uses}}
  ism.coschedule warp_specialized {
    ism.launch @writer grid(%n) (%a, %b) : (memref<?xf32>, memref<?xf32>)
    ism.launch @writer grid(%n) (%b, %c) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

ism.kernel @writer(%x: memref<?xf32>, %y: memref<?xf32>) {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<128xf32>
  ism.store %t, %y[%p] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

// Reading one buffer from both launches is fine.
func.func @main(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
  %n = arith.constant 4 : index
  ism.coschedule warp_specialized {
    ism.launch @writer grid(%n) (%a, %b) : (memref<?xf32>, memref<?xf32>)
    ism.launch @writer grid(%n) (%a, %c) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+1 {{partitions 0 and 1 share warps; each warp runs one partition}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>,
      #ism.partition<{warpBase = 2, numWarps = 4, registers = [], barriers = [2], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }, {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+1 {{partitions 0 and 1 both use named barrier 1}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>,
      #ism.partition<{warpBase = 4, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }, {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+1 {{partition 1 uses warps 4..11 but the kernel has 8}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>,
      #ism.partition<{warpBase = 4, numWarps = 8, registers = [], barriers = [2], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }, {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+1 {{needs three grid sizes per partition (6), got 3}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>,
      #ism.partition<{warpBase = 4, numWarps = 4, registers = [], barriers = [2], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }, {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+1 {{block_interleaved partitions start at warp 0, got 4}}
  ism.warp_specialize block_interleaved grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>,
      #ism.partition<{warpBase = 4, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }, {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+2 {{registers are set per warpgroup (setmaxnreg), so the partition must start and end on a warpgroup: warp_base = 2, num_warps = 4}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 2, numWarps = 4, registers = [64], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+2 {{registers must be multiples of 8 from 24 to 256 (what setmaxnreg takes), got 100}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [100], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+2 {{named barrier ids must be from 1 to 15 (0 is the CTA-wide barrier), got 0}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [0], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 6 : i32} {
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 6, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }
  ism.return
}

// -----

// expected-error @+1 {{num_warps must be a power of two from 1 to 32, got 6}}
ism.kernel @k(%g: index) attributes {num_warps = 6 : i32} {
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+2 {{cluster_m = 2 and cluster_n = 2: a partition's cluster is 1x1, 2x1 or 1x2 CTAs}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 8, registers = [], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8, clusterM = 2, clusterN = 2}>] {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+2 {{only a wgmma partition (stages > 0) can have a cluster}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0, clusterM = 2}>] {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 16 : i32} {
  // expected-error @+1 {{partitions 0 and 1 both have a cluster; a kernel has one cluster barrier}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 8, registers = [], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8, clusterM = 2}>,
      #ism.partition<{warpBase = 8, numWarps = 8, registers = [], barriers = [4, 5, 6], sharedMemory = 100000, stages = 3, workCounter = -1, groupSize = 8, clusterN = 2}>] {
  }, {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+1 {{partition 0 has a 2x1 cluster, which a block_interleaved kernel cannot have: its CTAs run one program at a time}}
  ism.warp_specialize block_interleaved grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 8, registers = [], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8, clusterM = 2}>] {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 4 : i32} {
  // expected-error @+2 {{operand_stages must be from 0 (the lowering's choice) to 8, got 9}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0, operandStages = 9}>] {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+2 {{operand_stages is for the products of a partition without a wgmma K loop; a wgmma partition's ring depth is its stages}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 8, registers = [], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8, operandStages = 2}>] {
  }
  ism.return
}

// -----

// A partition after a wgmma partition's tiles is one warpgroup of a
// counter-driven launch.
ism.kernel @k(%g: index) attributes {num_warps = 12 : i32} {
  // expected-error @+3 {{a partition that runs after a wgmma partition's consumers is one warpgroup of a counter-driven launch without tensor cores}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 12, registers = [], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8}>,
      #ism.partition<{warpBase = 0, numWarps = 8, registers = [], barriers = [4], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, after = 0}>] {
  }, {
  }
  ism.return
}

// -----

// Its warps must be consumer warps of an earlier wgmma partition: warps
// 8-11 are the producer's.
ism.kernel @k(%g: index) attributes {num_warps = 12 : i32} {
  // expected-error @+1 {{partition 1 runs after partition 0, which must be an earlier wgmma partition without a cluster whose consumer warps hold its warps}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 12, registers = [], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8}>,
      #ism.partition<{warpBase = 8, numWarps = 4, registers = [], barriers = [4], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, after = 0}>] {
  }, {
  }
  ism.return
}

// -----

// ... and the partition it follows must run the wgmma K loop.
ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+1 {{partition 1 runs after partition 0, which must be an earlier wgmma partition without a cluster whose consumer warps hold its warps}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 8, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0}>,
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [2], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, after = 0}>] {
  }, {
  }
  ism.return
}

// -----

// Two copies after the same partition take different consumer warpgroups.
ism.kernel @k(%g: index) attributes {num_warps = 12 : i32} {
  // expected-error @+1 {{partitions 1 and 2 both run after partition 0 on warps from 4}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 12, registers = [], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8}>,
      #ism.partition<{warpBase = 4, numWarps = 4, registers = [], barriers = [4], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, after = 0}>,
      #ism.partition<{warpBase = 4, numWarps = 4, registers = [], barriers = [5], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, after = 0}>] {
  }, {
  }, {
  }
  ism.return
}

// -----

// The copies after a wgmma partition meet on its consumers' barrier: one
// per consumer warpgroup, or the barrier would wait forever.
ism.kernel @k(%g: index) attributes {num_warps = 12 : i32} {
  // expected-error @+1 {{partition 0 has 2 consumer warpgroups, and either each runs one partition after its tiles or none does; got 1}}
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 12, registers = [], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8}>,
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [4], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, after = 0}>] {
  }, {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 4 : i32} {
  ism.warp_specialize ordered grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 16, stages = 0, workCounter = 1, groupSize = 0}>,
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 16, stages = 0, workCounter = 2, groupSize = 0}>] {
    // expected-error @+1 {{waits for launches in increasing order, each before its own partition (0), got 0}}
    ism.task_wait [0]
  }, {
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 4 : i32} {
  ism.warp_specialize ordered grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 16, stages = 0, workCounter = 1, groupSize = 0}>,
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 16, stages = 0, workCounter = 2, groupSize = 0}>] {
  }, {
    // expected-error @+1 {{waits for launches in increasing order, each before its own partition (1), got 0}}
    ism.task_wait [0, 0]
  }
  ism.return
}

// -----

ism.kernel @k(%g: index) attributes {num_warps = 8 : i32} {
  // expected-error @+1 {{partition 0 is a wgmma partition (stages = 3), which an ordered kernel cannot run as tasks}}
  ism.warp_specialize ordered grids(%g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 8, registers = [], barriers = [1, 2, 3], sharedMemory = 16, stages = 3, workCounter = -1, groupSize = 8}>] {
  }
  ism.return
}
