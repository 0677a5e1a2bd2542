//===- GPULauncher.cpp - Running launches on the GPU ----------------------===//

#include "ism/Runner/GPULauncher.h"

#include <optional>

#include "ism/Dialect/Ism/Transforms/WorkLoop.h"
#include "ism/Runner/Buffer.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::runner;

llvm::Expected<const cuda::Kernel *>
GPULauncher::getKernel(llvm::StringRef name, unsigned sharedMemoryBytes) {
  auto it = kernels.find(name);
  if (it != kernels.end() && it->second.sharedMemoryBytes == sharedMemoryBytes)
    return &it->second;
  llvm::Expected<cuda::Kernel> kernel =
      context.getKernel(name, sharedMemoryBytes, module);
  if (!kernel)
    return kernel.takeError();
  kernels[name] = *kernel;
  return &kernels[name];
}

llvm::Expected<uint64_t>
GPULauncher::inWholeClusters(const cuda::Kernel &kernel,
                             const CompiledKernel &facts, uint64_t ctas) {
  unsigned cluster = facts.clusterSize;
  if (cluster <= 1 || ctas == 0)
    return ctas;
  // Occupancy depends on the kernel's shared memory too.
  auto it = maxActiveClusters.find(kernel.name);
  if (it == maxActiveClusters.end() ||
      it->second.first != kernel.sharedMemoryBytes) {
    llvm::Expected<unsigned> clusters =
        context.getMaxActiveClusters(kernel, facts.numThreads, cluster);
    if (!clusters)
      return clusters.takeError();
    it = maxActiveClusters
             .insert_or_assign(
                 kernel.name,
                 std::make_pair(kernel.sharedMemoryBytes, *clusters))
             .first;
  }
  return std::min<uint64_t>((ctas + cluster - 1) / cluster, it->second.second) *
         cluster;
}

/// Appends the kernel parameters of one argument to `params`, one 8-byte
/// slot each (the driver copies each parameter's size from its slot).
static llvm::Error
appendParams(Type type, const HostValue &value,
             llvm::function_ref<const DeviceArg *(unsigned)> getBuffer,
             std::vector<uint64_t> &params) {
  if (auto memref = dyn_cast<MemRefType>(type)) {
    const DeviceArg *found = value.kind == HostValue::Kind::Buffer
                                 ? getBuffer(value.buffer)
                                 : nullptr;
    if (!found)
      return llvm::createStringError("a memref argument is not a buffer");
    const DeviceArg &buffer = *found;
    params.push_back(buffer.ptr); // allocated
    params.push_back(buffer.ptr); // aligned
    params.push_back(0);          // offset
    for (int64_t size : buffer.shape)
      params.push_back(static_cast<uint64_t>(size));
    int64_t stride = 1;
    std::vector<int64_t> strides(buffer.shape.size());
    for (int d = static_cast<int>(buffer.shape.size()) - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= buffer.shape[d];
    }
    for (int64_t s : strides)
      params.push_back(static_cast<uint64_t>(s));
    return llvm::Error::success();
  }
  uint64_t slot = 0;
  if (type.isIntOrIndex()) {
    // Little-endian: the low bytes of the slot hold the N-bit integer.
    slot = static_cast<uint64_t>(value.intValue);
  } else if (std::optional<DType> dtype = getDType(type)) {
    HostBuffer scalar(*dtype, {});
    scalar.set(0, value.floatValue);
    std::memcpy(&slot, scalar.bytes.data(), scalar.bytes.size());
  } else {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return llvm::createStringError("kernel parameters of type " + text +
                                   " are not supported");
  }
  params.push_back(slot);
  return llvm::Error::success();
}

llvm::Error GPULauncher::run(const cuda::Kernel &kernel, const unsigned grid[3],
                             const unsigned block[3],
                             llvm::ArrayRef<Type> types,
                             llvm::ArrayRef<HostValue> args,
                             llvm::ArrayRef<uint64_t> hiddenSlots,
                             cuda::CUstream onStream) {
  std::vector<uint64_t> slots;
  for (auto [type, value] : llvm::zip(types, args))
    if (llvm::Error error = appendParams(
            type, value, [&](unsigned n) { return getBuffer(n); }, slots))
      return error;
  slots.insert(slots.end(), hiddenSlots.begin(), hiddenSlots.end());
  std::vector<void *> params;
  for (uint64_t &slot : slots)
    params.push_back(&slot);
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return llvm::Error::success(); // an empty grid runs nothing
  ++numLaunches;
  return context.launch(kernel, grid, block, onStream, params);
}

GPULauncher::~GPULauncher() {
  // Work already queued on the streams finishes; the driver releases them
  // afterwards.
  for (cuda::CUstream aux : auxiliaryStreams)
    llvm::consumeError(context.destroyStream(aux));
  for (cuda::CUevent event : joinEvents)
    llvm::consumeError(context.destroyEvent(event));
  if (forkEvent)
    llvm::consumeError(context.destroyEvent(forkEvent));
}

const DeviceArg *GPULauncher::getBuffer(unsigned number) const {
  if (number >= kFirstTemporary) {
    unsigned slot = number - kFirstTemporary;
    return slot < temporaries.size() ? &temporaries[slot] : nullptr;
  }
  return number < buffers.size() ? &buffers[number] : nullptr;
}

llvm::Expected<unsigned> GPULauncher::allocate(unsigned slot, DType dtype,
                                               llvm::ArrayRef<int64_t> shape,
                                               bool zeroed) {
  llvm::Expected<uint64_t> bytes = getBufferBytes(dtype, shape);
  if (!bytes)
    return bytes.takeError();
  // At least a byte: an empty temporary still gets an address.
  uint64_t storageBytes = std::max<uint64_t>(*bytes, 1);
  TemporaryStorage &kept = temporaryStorage[{stream, slot}];
  cuda::DeviceBuffer &storage = kept.buffer;
  if (storage.size() < storageBytes) {
    // The stream's earlier runs may still read the old storage.
    if (storage.get())
      if (llvm::Error error = context.synchronize())
        return std::move(error);
    llvm::Expected<cuda::DeviceBuffer> grown = context.allocate(storageBytes);
    if (!grown)
      return llvm::createStringError(
          llvm::formatv("cannot allocate temporary buffer {0} ({1} bytes) on "
                        "the GPU: {2}",
                        slot, *bytes, llvm::toString(grown.takeError()))
              .str());
    storage = std::move(*grown);
    kept.zeroed = false;
  }
  if (zeroed && !kept.zeroed) {
    // The whole storage: a later run may ask for more of it.
    if (llvm::Error error =
            context.memset(storage.get(), 0, storage.size(), stream))
      return std::move(error);
  } else if (!zeroed && poisonTemporaries && *bytes) {
    if (llvm::Error error = context.memset(storage.get(), 0xFF, *bytes, stream))
      return std::move(error);
  }
  kept.zeroed = zeroed;
  if (temporaries.size() <= slot)
    temporaries.resize(slot + 1);
  temporaries[slot] = {storage.get(), llvm::SmallVector<int64_t, 4>(shape)};
  return kFirstTemporary + slot;
}

llvm::Error GPULauncher::launch(LaunchOp op, const unsigned grid[3],
                                llvm::ArrayRef<HostValue> args) {
  return launchOn(op, grid, args, stream);
}

llvm::Error GPULauncher::launchOn(LaunchOp op, const unsigned grid[3],
                                  llvm::ArrayRef<HostValue> args,
                                  cuda::CUstream onStream) {
  llvm::StringRef name = op.getKernel();
  auto info = compiled.kernels.find(name);
  if (info == compiled.kernels.end())
    return llvm::createStringError("kernel '" + name.str() +
                                   "' is not in the compiled module");
  if (info->second.numThreads == 0)
    return llvm::createStringError("kernel '" + name.str() +
                                   "' has no block size");
  llvm::Expected<const cuda::Kernel *> kernel =
      getKernel(name, info->second.sharedMemoryBytes);
  if (!kernel)
    return kernel.takeError();
  unsigned block[3] = {info->second.numThreads, 1, 1};
  llvm::SmallVector<Type> types(op.getArgs().getTypes());
  const CompiledKernel &facts = info->second;
  llvm::Expected<std::vector<uint64_t>> maps =
      getTensorMaps(facts, types, args, onStream);
  if (!maps)
    return maps.takeError();
  std::vector<uint64_t> hidden = std::move(*maps);
  if (!facts.persistent)
    return run(**kernel, grid, block, types, args, hidden, onStream);
  // A persistent kernel walks the logical grid itself: one CTA per SM, or
  // as many clusters as run at once, each taking a pair of programs (or,
  // with cluster_k = 2, one program over both CTAs).
  uint64_t total = uint64_t(grid[0]) * grid[1] * grid[2] * facts.ctasPerProgram;
  for (unsigned d = 0; d < 3; ++d)
    hidden.push_back(grid[d]);
  unsigned sms = persistentCtas ? persistentCtas
                                : std::max(1, context.getDeviceInfo().smCount);
  llvm::Expected<uint64_t> ctas =
      inWholeClusters(**kernel, facts, std::min<uint64_t>(total, sms));
  if (!ctas)
    return ctas.takeError();
  unsigned physical[3] = {unsigned(*ctas), 1, 1};
  return run(**kernel, physical, block, types, args, hidden, onStream);
}

llvm::Error GPULauncher::ensureAuxiliaryStreams(size_t count) {
  if (!forkEvent) {
    llvm::Expected<cuda::CUevent> event =
        context.createEvent(cuda::kEventDisableTiming);
    if (!event)
      return event.takeError();
    forkEvent = *event;
  }
  while (auxiliaryStreams.size() < count) {
    llvm::Expected<cuda::CUstream> aux = context.createStream();
    if (!aux)
      return aux.takeError();
    auxiliaryStreams.push_back(*aux);
    llvm::Expected<cuda::CUevent> event =
        context.createEvent(cuda::kEventDisableTiming);
    if (!event)
      return event.takeError();
    joinEvents.push_back(*event);
  }
  return llvm::Error::success();
}

llvm::Error
GPULauncher::launchConcurrently(CoscheduleOp op,
                                llvm::ArrayRef<RegionLaunch> launches) {
  if (launches.size() <= 1)
    return LaunchHandler::launchConcurrently(op, launches);
  size_t numAux = launches.size() - 1;
  if (llvm::Error error = ensureAuxiliaryStreams(numAux))
    return error;
  // Fork: the auxiliary streams start after everything queued so far on the
  // main stream (the previous launches, the L2 flush, the start event).
  if (llvm::Error error = context.record(forkEvent, stream))
    return error;
  for (size_t i = 0; i < numAux; ++i)
    if (llvm::Error error = context.waitEvent(auxiliaryStreams[i], forkEvent))
      return error;
  for (auto [i, launch] : llvm::enumerate(launches)) {
    cuda::CUstream onStream = i == 0 ? stream : auxiliaryStreams[i - 1];
    if (llvm::Error error =
            launchOn(launch.op, launch.grid.data(), launch.args, onStream))
      return error;
  }
  // Join: what the main stream runs next (the next launch, the end event)
  // waits for every launch of the region.
  for (size_t i = 0; i < numAux; ++i) {
    if (llvm::Error error = context.record(joinEvents[i], auxiliaryStreams[i]))
      return error;
    if (llvm::Error error = context.waitEvent(stream, joinEvents[i]))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error
GPULauncher::launchFused(CoscheduleOp op, llvm::StringRef name,
                         llvm::ArrayRef<std::array<unsigned, 3>> grids,
                         llvm::ArrayRef<HostValue> args) {
  auto info = compiled.kernels.find(name);
  if (info == compiled.kernels.end())
    return llvm::createStringError("fused kernel '" + name.str() +
                                   "' is not in the compiled module");
  const CompiledKernel &facts = info->second;
  if (!facts.fused)
    return llvm::createStringError(
        "kernel '" + name.str() +
        "' was named as the fused kernel of an ism.coschedule but carries no "
        "fused facts (CompiledKernel::fused)");
  if (facts.numThreads == 0)
    return llvm::createStringError("kernel '" + name.str() +
                                   "' has no block size");

  // The region's launches and where each one's arguments start in `args`;
  // the fused parameters (below, CompiledKernel::Fused::params) name them.
  // TmaOperand::arg indexes the parameter list.
  SmallVector<LaunchOp> launches;
  std::vector<std::string> launchNames;
  SmallVector<size_t> firstArg;
  size_t numArgs = 0;
  for (Operation &inner : op.getBody().front()) {
    auto launch = dyn_cast<LaunchOp>(&inner);
    if (!launch)
      continue;
    launches.push_back(launch);
    launchNames.push_back(launch.getKernel().str());
    firstArg.push_back(numArgs);
    numArgs += launch.getArgs().size();
  }
  size_t numRegionLaunches = launches.size();
  if (numArgs != args.size() || numRegionLaunches != grids.size())
    return llvm::createStringError(
        llvm::formatv(
            "fused kernel '{0}': got {1} argument value(s) and {2} grid(s) for "
            "an ism.coschedule whose {3} launches take {4} argument(s)",
            name, args.size(), grids.size(), numRegionLaunches, numArgs)
            .str());
  if (facts.fused->partitions.size() != grids.size())
    return llvm::createStringError(
        llvm::formatv("fused kernel '{0}' has {1} partition(s) but its "
                      "ism.coschedule has "
                      "{2} launches",
                      name, facts.fused->partitions.size(), grids.size())
            .str());
  // The parameters as the pass listed them (CompiledKernel::Fused::params):
  // deduplicating the host values here could part from the pass's list,
  // whose IR was canonicalized (two equal sizes one value there, two here).
  if (facts.fused->params.empty())
    return llvm::createStringError(
        llvm::formatv("fused kernel '{0}' carries no parameter list "
                      "(compiled by an older ism-coschedule?)",
                      name)
            .str());
  llvm::SmallVector<Type> types;
  llvm::SmallVector<HostValue> values;
  Type index = IndexType::get(op.getContext());
  for (auto [k, use] : llvm::enumerate(facts.fused->params)) {
    auto [launch, at] = use;
    bool valid = launch < numRegionLaunches &&
                 (at >= 0 ? size_t(at) < launches[launch].getArgs().size()
                          : at >= -3);
    if (!valid)
      return llvm::createStringError(
          llvm::formatv("fused kernel '{0}': parameter {1} names launch {2}'s "
                        "{3} {4}, which its ism.coschedule does not have",
                        name, k, launch, at >= 0 ? "argument" : "grid size",
                        at >= 0 ? at : -1 - at)
              .str());
    if (at >= 0) {
      types.push_back(launches[launch].getArgs()[at].getType());
      values.push_back(args[firstArg[launch] + at]);
    } else {
      types.push_back(index);
      values.push_back(HostValue::getInt(grids[launch][-1 - at]));
    }
  }
  uint64_t largest = 0, sum = 0;
  for (const std::array<unsigned, 3> &grid : grids) {
    uint64_t total = uint64_t(grid[0]) * grid[1] * grid[2];
    largest = std::max(largest, total);
    sum += total;
  }

  // The physical grid.
  uint64_t ctas;
  if (facts.fused->policy == "warp_specialized") {
    uint64_t sms = std::max(1, context.getDeviceInfo().smCount);
    ctas = std::min(largest, sms * std::max(1u, facts.fused->ctasPerSM));
  } else if (facts.fused->policy == "block_interleaved") {
    ctas = sum;
  } else if (facts.fused->policy == "ordered") {
    uint64_t sms = std::max(1, context.getDeviceInfo().smCount);
    ctas = std::min(sum, sms * std::max(1u, facts.fused->ctasPerSM));
  } else {
    return llvm::createStringError("fused kernel '" + name.str() +
                                   "' has unknown policy '" +
                                   facts.fused->policy + "'");
  }
  if (ctas > 0x7fffffffu)
    return llvm::createStringError(
        llvm::formatv(
            "fused kernel '{0}': {1} CTAs exceed the grid limit of 2^31 - 1",
            name, ctas)
            .str());

  llvm::Expected<const cuda::Kernel *> kernel =
      getKernel(name, facts.sharedMemoryBytes);
  if (!kernel)
    return kernel.takeError();
  llvm::Expected<uint64_t> whole = inWholeClusters(**kernel, facts, ctas);
  if (!whole)
    return whole.takeError();
  ctas = *whole;

  bool ordered = facts.fused->policy == "ordered";
  // The hidden parameters: TMA descriptors, then the work counters.
  llvm::Expected<std::vector<uint64_t>> maps =
      getTensorMaps(facts, types, values, stream);
  if (!maps)
    return maps.takeError();
  std::vector<uint64_t> hidden = std::move(*maps);
  cuda::CUdeviceptr counters = 0;
  if (unsigned numCounters = facts.fused->workCounters) {
    // One set per stream: launches of this kernel on two streams may run
    // at the same time.
    std::string counterKey =
        llvm::formatv("{0}@{1}", name, static_cast<void *>(stream)).str();
    auto it = workCounters.find(counterKey);
    if (it == workCounters.end()) {
      llvm::Expected<cuda::DeviceBuffer> buffer =
          context.allocate(size_t(numCounters) * sizeof(uint32_t));
      if (!buffer)
        return buffer.takeError();
      if (ordered)
        if (llvm::Error error =
                context.memset32(buffer->get(), 0, numCounters, stream))
          return error;
      it = workCounters.try_emplace(counterKey, std::move(*buffer)).first;
    }
    counters = it->second.get();
    hidden.push_back(counters);
    if (ordered) {
      if (numCounters != getOrderedCounterCount(grids.size()))
        return llvm::createStringError(
            llvm::formatv("ordered fused kernel '{0}' has {1} counters, not "
                          "the {2} its {3} launches need",
                          name, numCounters,
                          getOrderedCounterCount(grids.size()), grids.size())
                .str());
      orderedKernels[counterKey] = {name.str(), launchNames,
                                    facts.fused->timeoutMs};
    }
  }
  // Traced kernels: the trace buffer (one record per work item of every
  // launch, in region order), or 0 when not recording.
  if (facts.fused->trace) {
    cuda::CUdeviceptr traceBuffer = 0;
    if (recordTraces && sum > 0) {
      if (sum > UINT64_MAX / kTraceRecordBytes)
        return llvm::createStringError(
            llvm::formatv("fused kernel '{0}': a trace of {1} work items does "
                          "not fit in 64-bit sizes",
                          name, sum)
                .str());
      size_t bytes = size_t(sum) * kTraceRecordBytes;
      llvm::Expected<cuda::DeviceBuffer> buffer = context.allocate(bytes);
      if (!buffer)
        return buffer.takeError();
      traceBuffer = buffer->get();
      // Records of work items that never run stay all-zero.
      if (llvm::Error error = context.memset(traceBuffer, 0, bytes, stream))
        return error;
      PendingTrace pending;
      pending.trace.kernel = name.str();
      pending.trace.launchNames = launchNames;
      for (const std::array<unsigned, 3> &grid : grids)
        pending.trace.launchItems.push_back(uint64_t(grid[0]) * grid[1] *
                                            grid[2]);
      pending.buffer = std::move(*buffer);
      pendingTraces.push_back(std::move(pending));
    }
    hidden.push_back(traceBuffer);
  }

  if (ctas == 0)
    return llvm::Error::success(); // every launch of the region is empty
  // The counters start at zero on every launch; the memset is ordered
  // before the kernel on the same stream. (An ordered kernel's last CTA
  // zeroes its own, and its error record stays until it is read.)
  if (counters && !ordered)
    if (llvm::Error error =
            context.memset32(counters, 0, facts.fused->workCounters, stream))
      return error;
  unsigned physical[3] = {unsigned(ctas), 1, 1};
  unsigned block[3] = {facts.numThreads, 1, 1};
  return run(**kernel, physical, block, types, values, hidden, stream);
}

llvm::Error GPULauncher::checkOrderedWaits() {
  if (orderedKernels.empty())
    return llvm::Error::success();
  if (llvm::Error error = context.synchronize())
    return error;
  std::string message;
  for (const auto &entry : orderedKernels) {
    auto counters = workCounters.find(entry.getKey());
    if (counters == workCounters.end())
      continue;
    const OrderedKernel &info = entry.getValue();
    size_t first = info.launchNames.size() + kOrderedDoneCounters;
    uint32_t record[kOrderedErrorWords];
    if (llvm::Error error = context.copyToHost(
            record, counters->second.get() + first * sizeof(uint32_t),
            sizeof(record)))
      return error;
    if (record[0] == 0 || !message.empty())
      continue;
    unsigned waiter = record[0] - 1, awaited = record[2];
    auto nameOf = [&](unsigned launch) {
      return launch < info.launchNames.size()
                 ? "@" + info.launchNames[launch]
                 : "launch " + std::to_string(launch);
    };
    message =
        llvm::formatv("ordered fused kernel '{0}': program {1} of launch {2} "
                      "({3}) waited more than {4} ms for launch {5} ({6}), "
                      "which had finished {7} of its programs; the kernel "
                      "gave up and its outputs are not valid",
                      info.kernel, record[1], waiter, nameOf(waiter),
                      info.timeoutMs, awaited, nameOf(awaited), record[3])
            .str();
    if (llvm::Error error = context.memset32(
            counters->second.get() + first * sizeof(uint32_t), 0,
            kOrderedErrorWords, stream))
      return error;
  }
  if (message.empty())
    return llvm::Error::success();
  if (llvm::Error error = context.synchronize())
    return error;
  return llvm::createStringError(message);
}

llvm::Expected<std::vector<FusedTrace>> GPULauncher::takeTraces() {
  // The kernels write their buffers on the launcher's stream.
  if (llvm::Error error = context.synchronize())
    return std::move(error);
  std::vector<FusedTrace> traces;
  for (PendingTrace &pending : pendingTraces) {
    if (llvm::Error error = checkHostMemory(pending.buffer.size(),
                                            "the trace of fused kernel '" +
                                                pending.trace.kernel + "'"))
      return std::move(error);
    FusedTrace trace = std::move(pending.trace);
    trace.words.resize(pending.buffer.size() / sizeof(uint64_t));
    if (llvm::Error error =
            context.copyToHost(trace.words.data(), pending.buffer.get(),
                               trace.words.size() * sizeof(uint64_t)))
      return std::move(error);
    traces.push_back(std::move(trace));
  }
  pendingTraces.clear();
  return std::move(traces);
}

llvm::Expected<std::vector<uint64_t>> GPULauncher::getTensorMaps(
    const CompiledKernel &facts, llvm::ArrayRef<Type> types,
    llvm::ArrayRef<HostValue> args, cuda::CUstream onStream) {
  std::vector<uint64_t> maps;
  for (const CompiledKernel::TmaOperand &operand : facts.tma) {
    llvm::Expected<uint64_t> map = getTensorMap(operand, types, args, onStream);
    if (!map)
      return map.takeError();
    maps.push_back(*map);
  }
  return maps;
}

llvm::Expected<uint64_t> GPULauncher::getTensorMap(
    const CompiledKernel::TmaOperand &operand, llvm::ArrayRef<Type> types,
    llvm::ArrayRef<HostValue> args, cuda::CUstream onStream) {
  if (operand.arg < 0 || size_t(operand.arg) >= args.size() ||
      args[operand.arg].kind != HostValue::Kind::Buffer)
    return 0;
  auto memref = dyn_cast<MemRefType>(types[operand.arg]);
  cuda::Driver &driver = context.getDriver();
  // A tile of the last two dimensions (the box takes one index of each
  // leading one); TMA describes at most five.
  if (!memref || memref.getRank() < 2 || memref.getRank() > 5 ||
      !driver.cuTensorMapEncodeTiled)
    return 0;
  Type element = memref.getElementType();
  // 8-bit floats are bytes to TMA.
  int dtype = element.isBF16()  ? cuda::kTensorMapBFloat16
              : element.isF16() ? cuda::kTensorMapFloat16
              : isa<Float8E4M3FNType, Float8E5M2Type>(element)
                  ? cuda::kTensorMapUInt8
                  : -1;
  const DeviceArg *found = getBuffer(args[operand.arg].buffer);
  if (!found)
    return 0;
  const DeviceArg &buffer = *found;
  uint64_t elementBytes = memref.getElementTypeBitWidth() / 8;
  unsigned rank = memref.getRank();
  if (buffer.shape.size() != rank)
    return 0;
  // Sizes and byte strides innermost first (the buffer is row-major).
  uint64_t dims[5], strides[4];
  uint64_t stride = elementBytes;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t size = buffer.shape[rank - 1 - d];
    if (size <= 0 || uint64_t(size) >= (uint64_t(1) << 32))
      return 0;
    dims[d] = size;
    if (d > 0)
      strides[d - 1] = stride;
    stride *= size;
  }
  // TMA needs a 16-byte aligned base and strides (below 2^40 bytes).
  for (unsigned d = 0; d + 1 < rank; ++d)
    if (strides[d] % 16 != 0 || strides[d] >= (uint64_t(1) << 40))
      return 0;
  if (dtype < 0 || buffer.ptr % 16 != 0)
    return 0;
  // TMA's im2col mode: a rank-4 NHWC tensor (the corners and offsets it
  // takes are 8 bits for two spatial dimensions).
  bool im2col = !operand.im2col.empty();
  if (im2col) {
    if (rank != 4 || operand.im2col.size() != 8 ||
        !driver.cuTensorMapEncodeIm2col)
      return 0;
    for (int64_t v : operand.im2col)
      if (v < 0 || v > 127)
        return 0;
  }
  std::vector<uint64_t> key = {buffer.ptr, uint64_t(dtype), operand.boxRows,
                               operand.boxCols};
  key.insert(key.end(), dims, dims + rank);
  key.insert(key.end(), operand.im2col.begin(), operand.im2col.end());
  constexpr size_t kMapBytes = 128;
  if (!tensorMapSlab.get()) {
    llvm::Expected<cuda::DeviceBuffer> slab =
        context.allocate(kTensorMapSlots * kMapBytes);
    if (!slab)
      return slab.takeError();
    tensorMapSlab = std::move(*slab);
  }
  auto it = tensorMaps.find(key);
  if (it == tensorMaps.end() && tensorMaps.size() == kTensorMapSlots) {
    // Every slot is taken: once the kernels queued so far (which may read
    // any of them) have finished, the slab starts over.
    if (llvm::Error error = context.synchronize())
      return std::move(error);
    tensorMaps.clear();
  }
  if (it != tensorMaps.end() && it->second.stream == onStream)
    return tensorMapSlab.get() + it->second.index * kMapBytes;
  alignas(64) unsigned char map[kMapBytes] = {};
  uint32_t box[5] = {operand.boxCols, operand.boxRows, 1, 1, 1};
  uint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  // A box's rows are swizzled by their own width (the lowering lays the
  // tiles out that way): 128 bytes, or 64 for a 32-column 16-bit B tile.
  uint64_t boxRowBytes = uint64_t(operand.boxCols) * elementBytes;
  if (boxRowBytes != 128 && boxRowBytes != 64)
    return llvm::createStringError(
        llvm::formatv("a TMA box of {0} columns of {1}-byte elements: its "
                      "rows must be 128 or 64 bytes",
                      operand.boxCols, elementBytes)
            .str());
  int swizzle = boxRowBytes == 128 ? cuda::kTensorMapSwizzle128B
                                   : cuda::kTensorMapSwizzle64B;
  if (im2col) {
    // The pixels walk the output positions: W from -pad to
    // W - 1 + pad - dil (S - 1) and H likewise, `stride` apart; the
    // instruction adds the tap (r dil, s dil). Corners and strides are
    // W's first.
    llvm::ArrayRef<int64_t> c = operand.im2col; // R S sh sw ph pw dh dw
    int lower[2] = {int(-c[5]), int(-c[4])};
    int upper[2] = {int(c[5] - c[7] * (c[1] - 1)),
                    int(c[4] - c[6] * (c[0] - 1))};
    uint32_t traversal[4] = {1, uint32_t(c[3]), uint32_t(c[2]), 1};
    if (c[2] > 8 || c[3] > 8) // TMA's traversal strides go up to 8
      return 0;
    if (llvm::Error error = driver.check(
            driver.cuTensorMapEncodeIm2col(
                map, dtype, rank, reinterpret_cast<void *>(buffer.ptr), dims,
                strides, lower, upper, operand.boxCols, operand.boxRows,
                traversal, /*interleave=*/0, swizzle,
                cuda::kTensorMapL2Promotion256B, /*oobFill=*/0),
            "cuTensorMapEncodeIm2col"))
      return std::move(error);
  } else if (llvm::Error error = driver.check(
          driver.cuTensorMapEncodeTiled(
              map, dtype, rank, reinterpret_cast<void *>(buffer.ptr), dims,
              strides, box, elementStrides, /*interleave=*/0, swizzle,
              cuda::kTensorMapL2Promotion256B,
              /*oobFill=*/0),
          "cuTensorMapEncodeTiled"))
    return std::move(error);
  // A descriptor first used on another stream is copied again on this one
  // (the same bytes), so that the copy is ordered before this launch.
  size_t index = it != tensorMaps.end() ? it->second.index : tensorMaps.size();
  uint64_t address = tensorMapSlab.get() + index * kMapBytes;
  if (llvm::Error error =
          context.copyToDeviceAsync(address, map, kMapBytes, onStream))
    return std::move(error);
  tensorMaps[key] = {index, onStream};
  return address;
}

llvm::Error GPULauncher::launchGPUFunc(gpu::LaunchFuncOp op,
                                       const unsigned grid[3],
                                       const unsigned block[3],
                                       unsigned dynamicSharedMemoryBytes,
                                       llvm::ArrayRef<HostValue> args) {
  llvm::Expected<const cuda::Kernel *> kernel =
      getKernel(op.getKernelName().getValue(), dynamicSharedMemoryBytes);
  if (!kernel)
    return kernel.takeError();
  llvm::SmallVector<Type> types(op.getKernelOperands().getTypes());
  return run(**kernel, grid, block, types, args, {}, stream);
}

llvm::Expected<DeviceBuffers>
mlir::ism::runner::uploadArguments(cuda::Context &gpu,
                                   llvm::ArrayRef<BoundArg> args,
                                   llvm::ArrayRef<std::string> names) {
  DeviceBuffers device;
  device.buffers.resize(args.size());
  device.args.resize(args.size());
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (!arg.isBuffer)
      continue;
    std::string name =
        i < names.size() ? names[i] : llvm::formatv("argument {0}", i).str();
    llvm::Expected<cuda::DeviceBuffer> buffer =
        gpu.allocate(arg.buffer.getSizeInBytes());
    if (!buffer)
      return llvm::createStringError(
          llvm::formatv("{0}: a {1} buffer of {2} elements on the GPU: {3}",
                        name, getDTypeName(arg.buffer.dtype),
                        arg.buffer.getNumElements(),
                        llvm::toString(buffer.takeError()))
              .str());
    device.buffers[i] = std::move(*buffer);
    device.args[i] = {device.buffers[i].get(), arg.buffer.shape};
    if (llvm::Error error =
            gpu.copyToDevice(device.args[i].ptr, arg.buffer.bytes.data(),
                             arg.buffer.getSizeInBytes()))
      return std::move(error);
  }
  return std::move(device);
}

llvm::Expected<std::vector<double>> mlir::ism::runner::timeHostFunction(
    cuda::Context &gpu, cuda::CUstream stream, func::FuncOp entry,
    llvm::ArrayRef<BoundArg> args, LaunchHandler &launcher,
    const TimingOptions &options, const HostExecutionOptions &execution) {
  HostExecutionOptions quiet = execution;
  quiet.notes = nullptr;
  size_t flushBytes =
      std::max<size_t>(2 * size_t(gpu.getDeviceInfo().l2CacheBytes), 1);
  cuda::DeviceBuffer flushBuffer;
  if (options.flushL2) {
    llvm::Expected<cuda::DeviceBuffer> buffer = gpu.allocate(flushBytes);
    if (!buffer)
      return buffer.takeError();
    flushBuffer = std::move(*buffer);
  }
  llvm::Expected<cuda::CUevent> start = gpu.createEvent();
  if (!start)
    return start.takeError();
  llvm::scope_exit destroyStart(
      [&] { llvm::consumeError(gpu.destroyEvent(*start)); });
  llvm::Expected<cuda::CUevent> end = gpu.createEvent();
  if (!end)
    return end.takeError();
  llvm::scope_exit destroyEnd(
      [&] { llvm::consumeError(gpu.destroyEvent(*end)); });
  unsigned calls = std::max(1u, options.callsPerRep);
  cuda::CUgraphExec graph = nullptr;
  if (options.graph) {
    if (llvm::Error error = executeHostFunction(entry, args, launcher, quiet))
      return std::move(error);
    if (llvm::Error error = gpu.synchronize())
      return std::move(error);
    llvm::Expected<cuda::CUgraphExec> captured = captureHostFunction(
        gpu, stream, entry, args, launcher, calls, quiet);
    if (!captured)
      return captured.takeError();
    graph = *captured;
  }
  llvm::scope_exit destroyGraph([&] {
    if (graph)
      llvm::consumeError(gpu.destroyGraph(graph));
  });
  std::vector<double> times;
  std::optional<nvml::PowerMonitor> monitor;
  if (options.power) {
    const cuda::DeviceInfo &info = gpu.getDeviceInfo();
    monitor.emplace(info.pciDomain, info.pciBus, info.pciDevice);
  }
  for (unsigned rep = 0; rep < options.warmup + options.repetitions; ++rep) {
    if (monitor && rep == options.warmup)
      monitor->start();
    if (options.flushL2)
      if (llvm::Error error =
              gpu.memset(flushBuffer.get(), rep & 0xff, flushBytes, stream))
        return std::move(error);
    if (llvm::Error error = gpu.record(*start, stream))
      return std::move(error);
    if (graph) {
      if (llvm::Error error = gpu.launchGraph(graph, stream))
        return std::move(error);
    } else {
      for (unsigned call = 0; call < calls; ++call)
        if (llvm::Error error =
                executeHostFunction(entry, args, launcher, quiet))
          return std::move(error);
    }
    if (llvm::Error error = gpu.record(*end, stream))
      return std::move(error);
    llvm::Expected<float> ms = gpu.elapsedMs(*start, *end);
    if (!ms)
      return ms.takeError();
    if (rep >= options.warmup)
      times.push_back(*ms / calls);
  }
  if (monitor)
    *options.power = monitor->stop();
  return std::move(times);
}

llvm::Expected<cuda::CUgraphExec> mlir::ism::runner::captureHostFunction(
    cuda::Context &gpu, cuda::CUstream stream, func::FuncOp entry,
    llvm::ArrayRef<BoundArg> args, LaunchHandler &launcher, unsigned calls,
    const HostExecutionOptions &execution) {
  auto what = [&] {
    return "cannot capture @" + entry.getSymName().str() +
           "'s launches in a CUDA graph: ";
  };
  if (llvm::Error error = gpu.beginCapture(stream))
    return llvm::createStringError(what() + llvm::toString(std::move(error)));
  for (unsigned call = 0; call < calls; ++call)
    if (llvm::Error error =
            executeHostFunction(entry, args, launcher, execution)) {
      // End the capture; the partial graph is not wanted.
      llvm::Expected<cuda::CUgraphExec> partial = gpu.endCapture(stream);
      if (partial)
        llvm::consumeError(gpu.destroyGraph(*partial));
      else
        llvm::consumeError(partial.takeError());
      return std::move(error);
    }
  llvm::Expected<cuda::CUgraphExec> graph = gpu.endCapture(stream);
  if (!graph)
    return llvm::createStringError(what() + llvm::toString(graph.takeError()));
  return *graph;
}

llvm::Error mlir::ism::runner::replayHostFunction(
    cuda::Context &gpu, cuda::CUstream stream, func::FuncOp entry,
    llvm::ArrayRef<BoundArg> args, llvm::ArrayRef<DeviceArg> deviceArgs,
    LaunchHandler &launcher, const HostExecutionOptions &execution) {
  for (auto [i, arg] : llvm::enumerate(args))
    if (arg.isBuffer)
      if (llvm::Error error =
              gpu.copyToDevice(deviceArgs[i].ptr, arg.buffer.bytes.data(),
                               arg.buffer.getSizeInBytes()))
        return error;
  llvm::Expected<cuda::CUgraphExec> graph =
      captureHostFunction(gpu, stream, entry, args, launcher, 1, execution);
  if (!graph)
    return graph.takeError();
  llvm::Error launched = gpu.launchGraph(*graph, stream);
  llvm::Error finished = launched ? llvm::Error::success() : gpu.synchronize();
  llvm::Error destroyed = gpu.destroyGraph(*graph);
  return llvm::joinErrors(
      llvm::joinErrors(std::move(launched), std::move(finished)),
      std::move(destroyed));
}
