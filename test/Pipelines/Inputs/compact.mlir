// Stream compaction of each 1024-element block: a stable partition that
// moves the positive elements to the front of the block's output slice, in
// order, and the others after them. The positions come from an inclusive
// cumsum (ism.scan) of the flags; one ism.scatter writes every element.

ism.kernel @compact(%x: memref<?xf32>, %out: memref<?xf32>, %counts: memref<?xi32>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %block = arith.constant 1024 : index
  %off = arith.muli %pid, %block : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %rest = arith.subi %n, %off : index
  %rest_i32 = arith.index_cast %rest : index to i32
  %lane = ism.range 0 to 1024 : tensor<1024xi32>
  %limit = ism.splat %rest_i32 : i32 -> tensor<1024xi32>
  %valid = arith.cmpi slt, %lane, %limit : tensor<1024xi32>
  %v = ism.load %x[%off] mask %valid : memref<?xf32> -> tensor<1024xf32>
  %zero = arith.constant dense<0.0> : tensor<1024xf32>
  %pos = arith.cmpf ogt, %v, %zero : tensor<1024xf32>
  %keep = arith.andi %pos, %valid : tensor<1024xi1>
  %one = arith.constant dense<1> : tensor<1024xi32>
  %none = arith.constant dense<0> : tensor<1024xi32>
  %flags = arith.select %keep, %one, %none : tensor<1024xi1>, tensor<1024xi32>
  %cum = ism.scan %flags axis = 0 : tensor<1024xi32> -> tensor<1024xi32> {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  %count = ism.reduce %flags axis = 0 : tensor<1024xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  // Kept: cum - 1. Others: count + (lane - cum), the number of others before.
  %front = arith.subi %cum, %one : tensor<1024xi32>
  %count_t = ism.splat %count : i32 -> tensor<1024xi32>
  %others = arith.subi %lane, %cum : tensor<1024xi32>
  %back = arith.addi %count_t, %others : tensor<1024xi32>
  %slot = arith.select %keep, %front, %back : tensor<1024xi1>, tensor<1024xi32>
  %off_i32 = arith.index_cast %off : index to i32
  %base = ism.splat %off_i32 : i32 -> tensor<1024xi32>
  %dst = arith.addi %base, %slot : tensor<1024xi32>
  ism.scatter %v, %out[%dst] mask %valid : tensor<1024xf32> -> memref<?xf32>[tensor<1024xi32>]
  %c_t = ism.splat %count : i32 -> tensor<1xi32>
  ism.store %c_t, %counts[%pid] : tensor<1xi32> -> memref<?xi32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %out: memref<?xf32>, %counts: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %block = arith.constant 1024 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %blocks = arith.ceildivui %n, %block : index
  ism.launch @compact grid(%blocks) (%x, %out, %counts)
      : (memref<?xf32>, memref<?xf32>, memref<?xi32>)
  return
}
