// HBM -> shared-memory bandwidth on Hopper (issue 46, item 5): how fast a
// large buffer, read once, can be moved into shared memory, by three
// mechanisms, as a function of the bytes in flight per SM:
//
//   ld      plain 16-byte ld.global into registers, then st.shared (one tile
//           of K vectors a thread in flight per CTA)
//   cpasync cp.async.cg 16-byte copies into an S-stage shared-memory ring,
//           commit/wait groups
//   tma     1-D bulk copies (cp.async.bulk.shared::cluster.global.mbarrier::
//           complete_tx::bytes), an S-stage ring of mbarriers, one thread
//           issuing
//   global  (reference) 16-byte ld.global into registers only, no shared
//           memory: the read roofline of the same loop
//
// A persistent grid (CTAs per SM x SMs) walks the buffer tile by tile
// (tile t to CTA t mod grid). Each thread XORs one word of every tile that
// arrives (word threadIdx.x) into an accumulator written at the end; the
// XOR of all accumulators is checked on every configuration against a
// plain global-memory kernel's XOR of the same words, and on one
// configuration a mode every word of every tile is XORed and checked
// against the XOR of the whole buffer, so that no mode can silently move
// nothing. Bytes in flight per SM = tile (stage) bytes x stages x CTAs per
// SM (ld, global: K x 16 B x threads x CTAs per SM).
//
// Timing: CUDA events, the L2 flushed (a memset of twice its size) before
// every repetition, median of --reps. The roofline is a device-to-device
// cudaMemcpy of the buffer in the same run; its GB/s counts read + write
// (2 x bytes), and % copy is a mode's GB/s over it.
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -o smem_bandwidth bench/smem_bandwidth.cu
//   ./smem_bandwidth [--bytes 2147483648] [--reps 9] [--csv out.csv]
//                    [--modes ld,cpasync,tma,global] [--max-inflight 204800]
//
// bench/smem_bandwidth.py compiles and runs it, and writes the table, CSV
// and a plot.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(call)                                                          \
  do {                                                                    \
    cudaError_t err_ = (call);                                            \
    if (err_ != cudaSuccess) {                                            \
      std::fprintf(stderr, "smem_bandwidth: %s:%d: %s: %s\n", __FILE__,   \
                   __LINE__, #call, cudaGetErrorString(err_));            \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

constexpr int kThreads = 256;

// --- device helpers ----------------------------------------------------------

__device__ __forceinline__ uint4 ld_global_v4(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                   smem_addr(dst)),
               "l"(src)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(count)
               : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
          smem_addr(bar)),
      "r"(bytes)
      : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  }
}

__device__ __forceinline__ void bulk_copy(void *dst, const void *src,
                                          uint32_t bytes, uint64_t *bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
      "[%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// One word of the tile a thread (word threadIdx.x), or with Full every
// word (threadIdx.x, + kThreads, ...).
template <bool Full>
__device__ __forceinline__ uint32_t consume(const uint32_t *tile,
                                            uint32_t words) {
  uint32_t acc = tile[threadIdx.x];
  if (Full) {
    for (uint32_t w = threadIdx.x + kThreads; w < words; w += kThreads)
      acc ^= tile[w];
  }
  return acc;
}

// The CTA's tiles: blockIdx.x, + gridDim.x, ...
__device__ __forceinline__ size_t my_tiles(size_t ntiles) {
  return blockIdx.x < ntiles
             ? (ntiles - blockIdx.x + gridDim.x - 1) / gridDim.x
             : 0;
}

// --- the kernels ---------------------------------------------------------------

// Registers only: K 16-byte loads a thread in flight, every word XORed.
template <int K>
__global__ void __launch_bounds__(kThreads)
    k_global(const uint4 *__restrict__ src, size_t ntiles, uint32_t *out) {
  uint32_t acc = 0;
  size_t n = my_tiles(ntiles);
  for (size_t i = 0; i < n; ++i) {
    const uint4 *p = src + (blockIdx.x + i * gridDim.x) * (K * kThreads);
    uint4 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = ld_global_v4(p + k * kThreads + threadIdx.x);
#pragma unroll
    for (int k = 0; k < K; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  out[blockIdx.x * kThreads + threadIdx.x] = acc;
}

// ld.global to registers, st.shared, barrier, consume, barrier.
template <int K, bool Full>
__global__ void __launch_bounds__(kThreads)
    k_ld(const uint4 *__restrict__ src, size_t ntiles, uint32_t *out) {
  extern __shared__ __align__(128) uint4 smem_v[];
  uint32_t acc = 0;
  size_t n = my_tiles(ntiles);
  for (size_t i = 0; i < n; ++i) {
    const uint4 *p = src + (blockIdx.x + i * gridDim.x) * (K * kThreads);
    uint4 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = ld_global_v4(p + k * kThreads + threadIdx.x);
#pragma unroll
    for (int k = 0; k < K; ++k) smem_v[k * kThreads + threadIdx.x] = v[k];
    __syncthreads();
    acc ^= consume<Full>(reinterpret_cast<const uint32_t *>(smem_v),
                         K * kThreads * 4);
    __syncthreads();
  }
  out[blockIdx.x * kThreads + threadIdx.x] = acc;
}

// cp.async.cg into an S-stage ring of V x kThreads x 16-byte tiles; every
// thread commits one group a tile (empty past the CTA's last tile), so that
// wait_group S - 1 means "the oldest tile has landed".
template <int S, int V, bool Full>
__global__ void __launch_bounds__(kThreads)
    k_cpasync(const uint4 *__restrict__ src, size_t ntiles, uint32_t *out) {
  extern __shared__ __align__(128) uint4 smem_v[];
  constexpr int kTile = V * kThreads;  // 16-byte vectors
  size_t n = my_tiles(ntiles);
  auto issue = [&](size_t i) {
    if (i < n) {
      const uint4 *p = src + (blockIdx.x + i * gridDim.x) * kTile;
      uint4 *d = smem_v + (i % S) * kTile;
#pragma unroll
      for (int v = 0; v < V; ++v)
        cp_async16(d + v * kThreads + threadIdx.x, p + v * kThreads + threadIdx.x);
    }
    cp_async_commit();
  };
#pragma unroll
  for (int s = 0; s < S; ++s) issue(s);
  uint32_t acc = 0;
  for (size_t i = 0; i < n; ++i) {
    cp_async_wait<S - 1>();
    __syncthreads();
    acc ^= consume<Full>(
        reinterpret_cast<const uint32_t *>(smem_v + (i % S) * kTile),
        kTile * 4);
    __syncthreads();  // the slot is free again
    issue(i + S);
  }
  cp_async_wait<0>();
  out[blockIdx.x * kThreads + threadIdx.x] = acc;
}

// 1-D bulk copies (TMA) of `tile` bytes into an S-stage ring; thread 0
// issues, one mbarrier a stage (arrival count 1 + the transaction bytes).
template <bool Full>
__global__ void __launch_bounds__(kThreads)
    k_tma(const uint8_t *__restrict__ src, size_t ntiles, uint32_t tile,
          int S, uint32_t *out) {
  extern __shared__ __align__(128) uint8_t smem_b[];
  uint64_t *full = reinterpret_cast<uint64_t *>(smem_b + size_t(S) * tile);
  size_t n = my_tiles(ntiles);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  auto issue = [&](size_t i) {
    int s = int(i % S);
    mbar_expect_tx(&full[s], tile);
    bulk_copy(smem_b + size_t(s) * tile,
              src + (blockIdx.x + i * gridDim.x) * size_t(tile), tile,
              &full[s]);
  };
  if (threadIdx.x == 0)
    for (size_t i = 0; i < size_t(S) && i < n; ++i) issue(i);
  uint32_t acc = 0;
  for (size_t i = 0; i < n; ++i) {
    int s = int(i % S);
    mbar_wait(&full[s], uint32_t((i / S) & 1));
    acc ^= consume<Full>(
        reinterpret_cast<const uint32_t *>(smem_b + size_t(s) * tile),
        tile / 4);
    __syncthreads();  // every thread has read slot s
    if (threadIdx.x == 0 && i + S < n) issue(i + S);
  }
  out[blockIdx.x * kThreads + threadIdx.x] = acc;
}

// --- data and reference checksums ------------------------------------------------

__device__ __host__ __forceinline__ uint32_t mix(uint64_t i) {
  i ^= i >> 33;
  i *= 0xff51afd7ed558ccdULL;
  i ^= i >> 33;
  i *= 0xc4ceb9fe1a85ec53ULL;
  i ^= i >> 33;
  return static_cast<uint32_t>(i);
}

__global__ void k_fill(uint32_t *p, size_t words) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = mix(i + 1);
}

// XOR of words [tile * tile_words + w] for w < sample (sample = tile_words:
// every word), over every tile; plain global loads, one atomicXor a block.
__global__ void k_reference(const uint32_t *p, size_t ntiles,
                            size_t tile_words, size_t sample,
                            unsigned long long *result) {
  uint32_t acc = 0;
  size_t total = ntiles * sample;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x)
    acc ^= p[(i / sample) * tile_words + i % sample];
  for (int o = 16; o > 0; o /= 2) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicXor(result, (unsigned long long)acc);
}

// --- host --------------------------------------------------------------------------

struct Config {
  std::string mode;
  uint32_t tile = 0;     // bytes a stage (tile)
  int stages = 1;        // ring depth (ld, global: 1)
  int ctas = 1;          // CTAs per SM
  int k = 0;             // ld/global: vectors a thread; cpasync: V
};

struct Runner {
  const void *kernel = nullptr;      // the timed variant (for attributes)
  const void *kernel_full = nullptr; // the every-word variant
};

template <int K>
Runner ld_runner() { return {(const void *)k_ld<K, false>, (const void *)k_ld<K, true>}; }
template <int K>
Runner global_runner() { return {(const void *)k_global<K>, (const void *)k_global<K>}; }
template <int S, int V>
Runner cp_runner() {
  return {(const void *)k_cpasync<S, V, false>, (const void *)k_cpasync<S, V, true>};
}

Runner find_runner(const Config &c) {
  if (c.mode == "tma") return {(const void *)k_tma<false>, (const void *)k_tma<true>};
  if (c.mode == "ld" || c.mode == "global") {
    bool ld = c.mode == "ld";
    switch (c.k) {
      case 1: return ld ? ld_runner<1>() : global_runner<1>();
      case 2: return ld ? ld_runner<2>() : global_runner<2>();
      case 4: return ld ? ld_runner<4>() : global_runner<4>();
      case 8: return ld ? ld_runner<8>() : global_runner<8>();
      case 16: return ld ? ld_runner<16>() : global_runner<16>();
    }
  }
  if (c.mode == "cpasync") {
#define CP_CASE(S, V) \
  if (c.stages == S && c.k == V) return cp_runner<S, V>();
#define CP_STAGES(V) \
  CP_CASE(1, V) CP_CASE(2, V) CP_CASE(3, V) CP_CASE(4, V) CP_CASE(6, V) CP_CASE(8, V)
    CP_STAGES(1) CP_STAGES(2) CP_STAGES(4)
#undef CP_STAGES
#undef CP_CASE
  }
  std::fprintf(stderr, "smem_bandwidth: no kernel for %s k=%d stages=%d\n",
               c.mode.c_str(), c.k, c.stages);
  std::exit(1);
}

size_t smem_bytes(const Config &c) {
  if (c.mode == "global") return 0;
  if (c.mode == "tma") return size_t(c.stages) * c.tile + 8 * size_t(c.stages);
  return size_t(c.stages) * c.tile;
}

size_t inflight(const Config &c) { return size_t(c.stages) * c.tile * c.ctas; }

void launch(const Config &c, const void *kernel, const void *src, size_t ntiles,
            uint32_t *out, int grid, size_t smem) {
  uint32_t tile = c.tile;
  int stages = c.stages;
  void *args_plain[] = {(void *)&src, (void *)&ntiles, (void *)&out};
  void *args_tma[] = {(void *)&src, (void *)&ntiles, (void *)&tile,
                      (void *)&stages, (void *)&out};
  CK(cudaLaunchKernel(kernel, dim3(grid), dim3(kThreads),
                      c.mode == "tma" ? args_tma : args_plain, smem, 0));
}

struct Result {
  Config c;
  size_t bytes = 0;
  double ms = 0, gbps = 0;
  bool ok = false, skipped = false, verified = false;
  std::string note;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Bench {
  int sms = 0;
  size_t max_smem_block = 0, max_smem_sm = 0;
  void *buf = nullptr, *copy_dst = nullptr, *flush = nullptr;
  size_t bytes = 0, flush_bytes = 0;
  uint32_t *out = nullptr;
  unsigned long long *ref = nullptr;
  int reps = 9;
  cudaEvent_t e0, e1;

  uint32_t reference(size_t ntiles, uint32_t tile, size_t sample) {
    CK(cudaMemset(ref, 0, sizeof(*ref)));
    k_reference<<<sms * 8, 256>>>(static_cast<const uint32_t *>(buf), ntiles,
                                  tile / 4, sample, ref);
    CK(cudaGetLastError());
    unsigned long long h = 0;
    CK(cudaMemcpy(&h, ref, sizeof(h), cudaMemcpyDeviceToHost));
    return static_cast<uint32_t>(h);
  }

  uint32_t collect(int grid) {
    std::vector<uint32_t> h(size_t(grid) * kThreads);
    CK(cudaMemcpy(h.data(), out, h.size() * 4, cudaMemcpyDeviceToHost));
    uint32_t x = 0;
    for (uint32_t v : h) x ^= v;
    return x;
  }

  template <typename F>
  double time_ms(F &&f) {
    std::vector<double> t;
    for (int r = 0; r < reps + 1; ++r) {
      CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes));
      CK(cudaEventRecord(e0));
      f();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r > 0) t.push_back(ms);  // the first is a warm-up
    }
    return median(t);
  }

  Result run(const Config &c, bool verify_full) {
    Result r;
    r.c = c;
    Runner rn = find_runner(c);
    size_t smem = smem_bytes(c);
    if (smem > max_smem_block) {
      r.skipped = true;
      r.note = "shared memory";
      return r;
    }
    for (const void *k : {rn.kernel, rn.kernel_full})
      CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              int(smem)));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, rn.kernel, kThreads,
                                                     smem));
    if (occ < c.ctas) {
      r.skipped = true;
      r.note = "occupancy " + std::to_string(occ);
      return r;
    }
    int grid = sms * c.ctas;
    size_t ntiles = bytes / c.tile;
    r.bytes = ntiles * c.tile;
    // The sampled checksum (word threadIdx.x of every tile), every config.
    CK(cudaMemset(out, 0, size_t(grid) * kThreads * 4));
    launch(c, rn.kernel, buf, ntiles, out, grid, smem);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    uint32_t got = collect(grid);
    uint32_t want = c.mode == "global" ? reference(ntiles, c.tile, c.tile / 4)
                                       : reference(ntiles, c.tile, kThreads);
    r.ok = got == want;
    if (!r.ok) {
      char b[96];
      std::snprintf(b, sizeof b, "checksum %08x, expected %08x", got, want);
      r.note = b;
    }
    if (verify_full && c.mode != "global") {
      CK(cudaMemset(out, 0, size_t(grid) * kThreads * 4));
      launch(c, rn.kernel_full, buf, ntiles, out, grid, smem);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      uint32_t got_full = collect(grid);
      uint32_t want_full = reference(ntiles, c.tile, c.tile / 4);
      r.verified = true;
      if (got_full != want_full) {
        r.ok = false;
        char b[96];
        std::snprintf(b, sizeof b, "full checksum %08x, expected %08x",
                      got_full, want_full);
        r.note = b;
      }
    }
    r.ms = time_ms([&] { launch(c, rn.kernel, buf, ntiles, out, grid, smem); });
    r.gbps = r.bytes / (r.ms * 1e-3) / 1e9;
    return r;
  }
};

std::vector<Config> sweep(const std::vector<std::string> &modes,
                          size_t max_inflight) {
  std::vector<Config> cs;
  auto want = [&](const std::string &m) {
    return std::find(modes.begin(), modes.end(), m) != modes.end();
  };
  const int ctas_list[] = {1, 2, 3, 4, 6, 8};
  for (const char *m : {"global", "ld"}) {
    if (!want(m)) continue;
    for (int k : {1, 2, 4, 8, 16}) {
      if (std::string(m) == "ld" && k == 16) continue;  // 64 KB / CTA
      for (int ctas : ctas_list) {
        Config c{m, uint32_t(k * kThreads * 16), 1, ctas, k};
        cs.push_back(c);
      }
    }
  }
  if (want("cpasync"))
    for (int v : {1, 2, 4})
      for (int s : {1, 2, 3, 4, 6, 8})
        for (int ctas : ctas_list)
          cs.push_back(Config{"cpasync", uint32_t(v * kThreads * 16), s, ctas, v});
  if (want("tma"))
    for (uint32_t kb : {4u, 8u, 12u, 16u, 24u, 32u, 48u, 64u})
      for (int s : {1, 2, 3, 4, 6, 8})
        for (int ctas : {1, 2, 3, 4})
          cs.push_back(Config{"tma", kb * 1024, s, ctas, 0});
  std::vector<Config> kept;
  for (const Config &c : cs)
    if (inflight(c) >= 4096 && inflight(c) <= max_inflight) kept.push_back(c);
  return kept;
}

int main(int argc, char **argv) {
  size_t bytes = size_t(2) << 30;
  int reps = 9;
  std::string csv_path, modes_arg = "global,ld,cpasync,tma";
  size_t max_inflight = 200 * 1024;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "smem_bandwidth: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--bytes") bytes = std::stoull(next());
    else if (a == "--reps") reps = std::stoi(next());
    else if (a == "--csv") csv_path = next();
    else if (a == "--modes") modes_arg = next();
    else if (a == "--max-inflight") max_inflight = std::stoull(next());
    else {
      std::fprintf(stderr,
                   "usage: smem_bandwidth [--bytes N] [--reps N] [--csv PATH] "
                   "[--modes global,ld,cpasync,tma] [--max-inflight BYTES]\n");
      return 2;
    }
  }
  if (reps < 1 || bytes < (size_t(64) << 20)) {
    std::fprintf(stderr, "smem_bandwidth: --reps >= 1, --bytes >= 64 MiB\n");
    return 2;
  }
  std::vector<std::string> modes;
  for (size_t p = 0; p <= modes_arg.size();) {
    size_t q = modes_arg.find(',', p);
    if (q == std::string::npos) q = modes_arg.size();
    if (q > p) modes.push_back(modes_arg.substr(p, q - p));
    p = q + 1;
  }

  int dev = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  if (prop.major < 9) {
    std::fprintf(stderr, "smem_bandwidth: %s is sm_%d%d; TMA bulk copies need "
                 "sm_90\n", prop.name, prop.major, prop.minor);
    return 1;
  }
  Bench b;
  b.sms = prop.multiProcessorCount;
  b.max_smem_block = prop.sharedMemPerBlockOptin;
  b.max_smem_sm = prop.sharedMemPerMultiprocessor;
  b.bytes = bytes / 65536 * 65536;
  b.reps = reps;
  b.flush_bytes = std::max<size_t>(2 * size_t(prop.l2CacheSize), 64 << 20);
  CK(cudaMalloc(&b.buf, b.bytes));
  CK(cudaMalloc(&b.copy_dst, b.bytes));
  CK(cudaMalloc(&b.flush, b.flush_bytes));
  CK(cudaMalloc(&b.out, size_t(b.sms) * 16 * kThreads * 4));
  CK(cudaMalloc(&b.ref, sizeof(unsigned long long)));
  CK(cudaEventCreate(&b.e0));
  CK(cudaEventCreate(&b.e1));
  k_fill<<<b.sms * 8, 256>>>(static_cast<uint32_t *>(b.buf), b.bytes / 4);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  // The fill is checked on the host on a few words, so that a reference
  // kernel reading garbage cannot agree with a kernel moving garbage.
  for (size_t w : {size_t(0), b.bytes / 8, b.bytes / 4 - 1}) {
    uint32_t h = 0;
    CK(cudaMemcpy(&h, static_cast<uint32_t *>(b.buf) + w, 4,
                  cudaMemcpyDeviceToHost));
    if (h != mix(w + 1)) {
      std::fprintf(stderr, "smem_bandwidth: fill check failed at word %zu\n", w);
      return 1;
    }
  }

  double copy_ms = b.time_ms([&] {
    CK(cudaMemcpyAsync(b.copy_dst, b.buf, b.bytes, cudaMemcpyDeviceToDevice));
  });
  double copy_gbps = 2.0 * b.bytes / (copy_ms * 1e-3) / 1e9;
  std::printf("device: %s, %d SMs, L2 %d MiB, %zu KiB shared memory per SM "
              "(%zu per CTA)\n",
              prop.name, b.sms, prop.l2CacheSize >> 20, b.max_smem_sm >> 10,
              b.max_smem_block >> 10);
  std::printf("buffer: %.2f GiB read once a run; median of %d; D2D copy %.0f "
              "GB/s (read + write)\n",
              b.bytes / double(1 << 30), reps, copy_gbps);

  std::vector<Config> configs = sweep(modes, max_inflight);
  std::vector<Result> results;
  // One configuration a mode is verified word by word: the first one with
  // 32 KiB or more in flight per SM.
  std::vector<std::string> verified;
  int failures = 0;
  std::printf("%-8s %8s %6s %5s %10s %9s %8s %7s %s\n", "mode", "stage_KB",
              "stages", "ctas", "inflight", "ms", "GB/s", "%copy", "check");
  for (const Config &c : configs) {
    bool full = inflight(c) >= 32 * 1024 &&
                std::find(verified.begin(), verified.end(), c.mode) ==
                    verified.end();
    Result r = b.run(c, full);
    if (r.verified) verified.push_back(c.mode);
    if (r.skipped) continue;
    if (!r.ok) ++failures;
    results.push_back(r);
    std::printf("%-8s %8.1f %6d %5d %9.0fK %9.4f %8.0f %7.1f %s%s%s\n",
                c.mode.c_str(), c.tile / 1024.0, c.stages, c.ctas,
                inflight(c) / 1024.0, r.ms, r.gbps, 100 * r.gbps / copy_gbps,
                r.ok ? "ok" : "FAIL", r.verified ? " (every word)" : "",
                r.note.empty() ? "" : (" " + r.note).c_str());
    std::fflush(stdout);
  }

  if (!csv_path.empty()) {
    FILE *f = std::fopen(csv_path.c_str(), "w");
    if (!f) {
      std::perror(csv_path.c_str());
      return 1;
    }
    std::fprintf(f, "mode,stage_bytes,stages,ctas_per_sm,inflight_bytes,bytes,"
                    "ms,gbps,pct_copy,copy_gbps,check,verified,device,sms\n");
    for (const Result &r : results)
      std::fprintf(f, "%s,%u,%d,%d,%zu,%zu,%.6f,%.2f,%.2f,%.2f,%s,%d,%s,%d\n",
                   r.c.mode.c_str(), r.c.tile, r.c.stages, r.c.ctas,
                   inflight(r.c), r.bytes, r.ms, r.gbps,
                   100 * r.gbps / copy_gbps, copy_gbps, r.ok ? "ok" : "FAIL",
                   int(r.verified), prop.name, b.sms);
    std::fclose(f);
  }

  // Best of each mode.
  std::printf("\nbest per mode (GB/s, %% of D2D copy %.0f GB/s):\n", copy_gbps);
  for (const std::string &m : modes) {
    const Result *best = nullptr;
    for (const Result &r : results)
      if (r.c.mode == m && r.ok && (!best || r.gbps > best->gbps)) best = &r;
    if (best)
      std::printf("  %-8s %6.0f GB/s %5.1f%%  (stage %.0f KB x %d x %d CTAs/SM"
                  " = %.0f KB in flight)\n",
                  m.c_str(), best->gbps, 100 * best->gbps / copy_gbps,
                  best->c.tile / 1024.0, best->c.stages, best->c.ctas,
                  inflight(best->c) / 1024.0);
  }
  for (const std::string &m : modes)
    if (m != "global" &&
        std::find(verified.begin(), verified.end(), m) == verified.end()) {
      std::printf("smem_bandwidth: mode %s was not verified word by word\n",
                  m.c_str());
      ++failures;
    }
  std::printf("checks: %d failed of %zu\n", failures, results.size());
  CK(cudaFree(b.buf));
  CK(cudaFree(b.copy_dst));
  CK(cudaFree(b.flush));
  CK(cudaFree(b.out));
  CK(cudaFree(b.ref));
  return failures ? 1 : 0;
}
