/* A stand-in for the CUDA driver (libcuda.so.1) with the entry points
 * ism-run resolves, for testing the runner's GPU-side checks on machines
 * without a GPU (test/Runner/fake-driver.test). One device, "Fake GPU",
 * with FAKE_CUDA_MEMORY bytes of memory (default 1 GiB) and the launch
 * limits of every NVIDIA GPU. Memory is host memory; kernels do not run:
 * a launch of a kernel whose name starts with "spin" keeps its stream busy
 * for ever (cuStreamQuery and cuEventQuery say CUDA_ERROR_NOT_READY, the
 * synchronising calls never return), from the FAKE_CUDA_SPIN_FROM-th such
 * launch on (default 1: the first); any other launch finishes at once.
 * Launches past the grid limits fail as the real driver does.
 *
 * Build: cc -shared -fPIC fake_libcuda.c -o DIR/libcuda.so.1, then run
 * with LD_LIBRARY_PATH=DIR. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotInitialized = 3,
  kNotReady = 600,
};

/* A stream (or the legacy stream, 0) that ran a "spin" kernel. */
static void *hungStreams[64];
static int numHung;

static int isHung(void *stream) {
  for (int i = 0; i < numHung; ++i)
    if (hungStreams[i] == stream)
      return 1;
  return 0;
}

static void hangForever(void) {
  for (;;)
    pause();
}

static uint64_t deviceMemory(void) {
  const char *text = getenv("FAKE_CUDA_MEMORY");
  return text ? strtoull(text, 0, 10) : (uint64_t)1 << 30;
}

static uint64_t allocated;

/// As the real driver, device queries before cuInit has returned fail with
/// CUDA_ERROR_NOT_INITIALIZED. FAKE_CUDA_INIT_MS makes cuInit take that
/// long (the real one takes a while too), so that threads that load the
/// driver at the same time overlap.
static volatile int initialised = 0;
CUresult cuInit(unsigned flags) {
  const char *text = getenv("FAKE_CUDA_INIT_MS");
  if (text)
    usleep(1000 * atoi(text));
  initialised = 1;
  return kSuccess;
}
CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return kSuccess;
}
CUresult cuGetErrorString(CUresult result, const char **text) {
  *text = result == kOutOfMemory    ? "out of memory"
          : result == kInvalidValue ? "invalid argument"
          : result == kNotInitialized ? "initialization error"
                                    : "fake error";
  return kSuccess;
}
CUresult cuGetErrorName(CUresult result, const char **name) {
  *name = result == kOutOfMemory    ? "CUDA_ERROR_OUT_OF_MEMORY"
          : result == kInvalidValue ? "CUDA_ERROR_INVALID_VALUE"
          : result == kNotInitialized ? "CUDA_ERROR_NOT_INITIALIZED"
                                    : "CUDA_ERROR_UNKNOWN";
  return kSuccess;
}
CUresult cuDeviceGetCount(int *count) {
  if (!initialised)
    return kNotInitialized;
  *count = 1;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  if (!initialised)
    return kNotInitialized;
  *device = ordinal;
  return ordinal == 0 ? kSuccess : kInvalidValue;
}
CUresult cuDeviceGetName(char *name, int length, int device) {
  strncpy(name, "Fake GPU", length);
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  switch (attribute) {
  case 1: /* max threads per block */
  case 2: /* max block x */
  case 3: /* max block y */
    *value = 1024;
    break;
  case 4: /* max block z */
    *value = 64;
    break;
  case 5: /* max grid x */
    *value = 2147483647;
    break;
  case 6: /* max grid y */
  case 7: /* max grid z */
    *value = 65535;
    break;
  case 8: /* shared memory per block */
    *value = 48 * 1024;
    break;
  case 16: /* SMs */
    *value = 4;
    break;
  case 38: /* L2 */
    *value = 1 << 20;
    break;
  case 75: /* compute capability */
    *value = 9;
    break;
  case 76:
    *value = 0;
    break;
  case 97: /* shared memory per block, opt-in */
    *value = 227 * 1024;
    break;
  default:
    *value = 0;
  }
  return kSuccess;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int device) {
  *bytes = deviceMemory();
  return kSuccess;
}
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  *total = deviceMemory();
  *free = *total > allocated ? *total - allocated : 0;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  static int dummy;
  *context = &dummy;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(int device) { return kSuccess; }
CUresult cuCtxSetCurrent(void *context) { return kSuccess; }
CUresult cuCtxSynchronize(void) {
  if (numHung)
    hangForever();
  return kSuccess;
}
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                            int *options, void **values) {
  static int dummy;
  *module = &dummy;
  /* FAKE_CUDA_IMAGE_LOG names a file that gets one line per module: "cubin"
     for an ELF image (assembled before the load), else "ptx". */
  const char *log = getenv("FAKE_CUDA_IMAGE_LOG");
  if (log) {
    FILE *f = fopen(log, "a");
    if (f) {
      fputs(memcmp(image, "\177ELF", 4) == 0 ? "cubin\n" : "ptx\n", f);
      fclose(f);
    }
  }
  return kSuccess;
}
CUresult cuModuleUnload(void *module) { return kSuccess; }
/* A function handle is its name, kept in a table that lives as long as the
   process (CUDA's functions belong to their modules; nothing frees them, and
   LeakSanitizer in the sanitizer build must not see a leak). */
static char functionNames[64][128];
static int numFunctions;
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  for (int i = 0; i < numFunctions; ++i)
    if (strcmp(functionNames[i], name) == 0) {
      *function = functionNames[i];
      return kSuccess;
    }
  if (numFunctions == 64 || strlen(name) >= 128)
    return kInvalidValue;
  strcpy(functionNames[numFunctions], name);
  *function = functionNames[numFunctions++];
  return kSuccess;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  return kSuccess;
}
CUresult cuFuncGetAttribute(int *value, int attribute, void *function) {
  *value = 0;
  return kSuccess;
}
/* Stream capture (CUDA graphs): while a stream is captured, its launches
   and asynchronous memsets are recorded in a graph instead of run (a
   launch logs "capture NAME" to FAKE_CUDA_LAUNCH_LOG); cuGraphLaunch runs
   them again in order, as launches and memsets of the stream it is given.
   Built with -DFAKE_CUDA_NO_GRAPHS, the driver has none of these entry
   points (as drivers before CUDA 12). */
struct Node {
  int isLaunch;
  void *function;
  unsigned grid[3], block[3], shared;
  uint64_t dst;
  unsigned value;
  size_t count;
  int wordBytes;
};
struct Graph {
  struct Node *nodes;
  int count;
};
static void *captureStream;
static struct Graph *captureGraph;
static void addNode(struct Node node) {
  captureGraph->nodes = realloc(captureGraph->nodes,
                                (captureGraph->count + 1) * sizeof(node));
  captureGraph->nodes[captureGraph->count++] = node;
}

static void logLaunch(const char *what, void *function, unsigned gx,
                      unsigned gy, unsigned gz, unsigned bx, unsigned by,
                      unsigned bz) {
  /* FAKE_CUDA_LAUNCH_LOG names a file that gets one line per launch:
     "launch NAME grid GX GY GZ block BX BY BZ" ("capture ..." for one
     recorded into a graph). */
  const char *launches = getenv("FAKE_CUDA_LAUNCH_LOG");
  if (launches) {
    FILE *f = fopen(launches, "a");
    if (f) {
      fprintf(f, "%s %s grid %u %u %u block %u %u %u\n", what,
              (const char *)function, gx, gy, gz, bx, by, bz);
      fclose(f);
    }
  }
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  if (gx == 0 || gy == 0 || gz == 0 || gx > 2147483647u || gy > 65535 ||
      gz > 65535 || bx * by * bz > 1024)
    return kInvalidValue;
  if (captureStream && stream == captureStream) {
    struct Node node = {1, function, {gx, gy, gz}, {bx, by, bz}, shared};
    addNode(node);
    logLaunch("capture", function, gx, gy, gz, bx, by, bz);
    return kSuccess;
  }
  logLaunch("launch", function, gx, gy, gz, bx, by, bz);
  static int spins;
  const char *from = getenv("FAKE_CUDA_SPIN_FROM");
  if (strncmp((const char *)function, "spin", 4) == 0 &&
      ++spins >= (from ? atoi(from) : 1) && numHung < 64)
    hungStreams[numHung++] = stream;
  return kSuccess;
}
/* cuda.h's CUlaunchConfig and CUlaunchAttribute, as far as used here. */
typedef struct {
  unsigned id;
  char pad[4];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
} FakeLaunchAttribute;
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  void *hStream;
  FakeLaunchAttribute *attrs;
  unsigned numAttrs;
} FakeLaunchConfig;
/* Logs "dependent launch NAME" to FAKE_CUDA_IMAGE_LOG for a launch with
   programmatic stream serialization, then launches as cuLaunchKernel. */
CUresult cuLaunchKernelEx(const FakeLaunchConfig *config, void *function,
                          void **params, void **extra) {
  const char *log = getenv("FAKE_CUDA_IMAGE_LOG");
  for (unsigned i = 0; log && i < config->numAttrs; ++i) {
    if (config->attrs[i].id != 6 ||
        !config->attrs[i].value.programmaticStreamSerializationAllowed)
      continue;
    FILE *f = fopen(log, "a");
    if (f) {
      fprintf(f, "dependent launch %s\n", (const char *)function);
      fclose(f);
    }
  }
  return cuLaunchKernel(function, config->gridDimX, config->gridDimY,
                        config->gridDimZ, config->blockDimX, config->blockDimY,
                        config->blockDimZ, config->sharedMemBytes,
                        config->hStream, params, extra);
}
CUresult cuMemAlloc_v2(uint64_t *ptr, size_t bytes) {
  if (allocated + bytes > deviceMemory())
    return kOutOfMemory;
  void *memory = calloc(1, bytes);
  if (!memory)
    return kOutOfMemory;
  allocated += bytes;
  *ptr = (uint64_t)(uintptr_t)memory;
  return kSuccess;
}
CUresult cuMemFree_v2(uint64_t ptr) {
  if (numHung)
    hangForever(); /* as the real cuMemFree waits for the kernel */
  free((void *)(uintptr_t)ptr);
  return kSuccess;
}
CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes) {
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes,
                              void *stream) {
  return cuMemcpyHtoD_v2(dst, src, bytes);
}
CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes) {
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return kSuccess;
}
/* FAKE_CUDA_MEMSET_LOG names a file that gets "memset VALUE BYTES" per
   byte memset. */
CUresult cuMemsetD8_v2(uint64_t dst, unsigned char value, size_t bytes) {
  const char *log = getenv("FAKE_CUDA_MEMSET_LOG");
  if (log) {
    FILE *f = fopen(log, "a");
    if (f) {
      fprintf(f, "memset %u %zu\n", (unsigned)value, bytes);
      fclose(f);
    }
  }
  memset((void *)(uintptr_t)dst, value, bytes);
  return kSuccess;
}
CUresult cuMemsetD8Async(uint64_t dst, unsigned char value, size_t bytes,
                         void *stream) {
  if (captureStream && stream == captureStream) {
    struct Node node = {0, 0, {0}, {0}, 0, dst, value, bytes, 1};
    addNode(node);
    return kSuccess;
  }
  return cuMemsetD8_v2(dst, value, bytes);
}
CUresult cuMemsetD32Async(uint64_t dst, unsigned value, size_t count,
                          void *stream) {
  if (captureStream && stream == captureStream) {
    struct Node node = {0, 0, {0}, {0}, 0, dst, value, count, 4};
    addNode(node);
    return kSuccess;
  }
  uint32_t *words = (uint32_t *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return kSuccess;
}
CUresult cuStreamCreate(void **stream, unsigned flags) {
  *stream = malloc(1);
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *stream) {
  /* A hung stream stays: the kernel on it never finishes. */
  if (!isHung(stream))
    free(stream);
  return kSuccess;
}
CUresult cuStreamSynchronize(void *stream) {
  if (isHung(stream))
    hangForever();
  return kSuccess;
}
CUresult cuStreamQuery(void *stream) {
  return isHung(stream) ? kNotReady : kSuccess;
}
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  return kSuccess;
}

/* An event remembers whether its stream was hung when it was recorded. */
struct Event {
  int hung;
};
CUresult cuEventCreate(void **event, unsigned flags) {
  *event = calloc(1, sizeof(struct Event));
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *event) {
  free(event);
  return kSuccess;
}
CUresult cuEventRecord(void *event, void *stream) {
  ((struct Event *)event)->hung = isHung(stream);
  return kSuccess;
}
CUresult cuEventSynchronize(void *event) {
  if (((struct Event *)event)->hung)
    hangForever();
  return kSuccess;
}
CUresult cuEventQuery(void *event) {
  return ((struct Event *)event)->hung ? kNotReady : kSuccess;
}
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  *ms = 0.001f;
  return kSuccess;
}

#ifndef FAKE_CUDA_NO_GRAPHS
CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  if (captureStream)
    return kInvalidValue;
  captureStream = stream;
  captureGraph = calloc(1, sizeof(struct Graph));
  return kSuccess;
}
CUresult cuStreamEndCapture(void *stream, void **graph) {
  if (!captureStream || stream != captureStream)
    return kInvalidValue;
  *graph = captureGraph;
  captureStream = 0;
  captureGraph = 0;
  return kSuccess;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags) {
  const struct Graph *from = graph;
  struct Graph *copy = calloc(1, sizeof(struct Graph));
  copy->count = from->count;
  copy->nodes = malloc(from->count * sizeof(struct Node) + 1);
  memcpy(copy->nodes, from->nodes, from->count * sizeof(struct Node));
  *exec = copy;
  return kSuccess;
}
CUresult cuGraphLaunch(void *exec, void *stream) {
  const struct Graph *graph = exec;
  for (int i = 0; i < graph->count; ++i) {
    const struct Node *node = &graph->nodes[i];
    CUresult result =
        node->isLaunch
            ? cuLaunchKernel(node->function, node->grid[0], node->grid[1],
                             node->grid[2], node->block[0], node->block[1],
                             node->block[2], node->shared, stream, 0, 0)
        : node->wordBytes == 4
            ? cuMemsetD32Async(node->dst, node->value, node->count, stream)
            : cuMemsetD8Async(node->dst, (unsigned char)node->value,
                              node->count, stream);
    if (result != kSuccess)
      return result;
  }
  return kSuccess;
}
static void freeGraph(struct Graph *graph) {
  free(graph->nodes);
  free(graph);
}
CUresult cuGraphExecDestroy(void *exec) {
  freeGraph(exec);
  return kSuccess;
}
CUresult cuGraphDestroy(void *graph) {
  freeGraph(graph);
  return kSuccess;
}
#endif
