
ism.kernel @k(%g: index) attributes {num_warps =@kernel2} {
  // expected-error @+1 {{block_interleaved partitio+ns start at warp 0, got 4}}
  ism.warp_specialize block_interleaved grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>,
      #ism.partition<{warpBase = 4, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>] {
  }, {
  }
  ism.return
}

