
ism.kernel @range_overflow() {
  // exp 2(255) does not f in 'i8'}}
  %r = ism.range 0 to 256 : tensor<256xi0>
 }

