//===- PowerMonitor.cpp - SM clock and board power through NVML -----------===//

#include "ism/Runtime/PowerMonitor.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <dlfcn.h>
#include <type_traits>

using namespace mlir::ism::nvml;

namespace {

using NvmlReturn = int;
using NvmlDevice = void *;
constexpr NvmlReturn kNvmlSuccess = 0;
/// nvmlClockType_t's NVML_CLOCK_SM.
constexpr int kClockSm = 1;
/// nvmlClocksEventReasons' software power cap bit.
constexpr unsigned long long kReasonSwPowerCap = 0x4;
/// NVML_FI_DEV_POWER_INSTANT: the board's power now, in mW (Hopper and
/// later); nvmlDeviceGetPowerUsage averages over a second on these GPUs,
/// longer than most timed windows.
constexpr unsigned kFieldPowerInstant = 186;

/// nvmlFieldValue_t.
struct FieldValue {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  NvmlReturn nvmlReturn;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    unsigned short us;
  } value;
};
/// nvmlValueType_t's NVML_VALUE_TYPE_UNSIGNED_INT.
constexpr int kValueUnsignedInt = 1;

/// The NVML entry points the monitor calls, resolved once.
struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*handleByPciBusId)(const char *, NvmlDevice *) = nullptr;
  NvmlReturn (*clockInfo)(NvmlDevice, int, unsigned *) = nullptr;
  NvmlReturn (*powerUsage)(NvmlDevice, unsigned *) = nullptr;
  NvmlReturn (*clockReasons)(NvmlDevice, unsigned long long *) = nullptr;
  /// Optional (older drivers lack it): instant power through field values.
  NvmlReturn (*fieldValues)(NvmlDevice, int, FieldValue *) = nullptr;
  const char *(*errorString)(NvmlReturn) = nullptr;
  /// Empty when NVML is usable, else why not.
  std::string unavailable;

  static const Nvml &get() {
    static Nvml nvml = load();
    return nvml;
  }

  std::string error(const char *call, NvmlReturn r) const {
    return std::string(call) + " failed: " +
           (errorString ? errorString(r) : std::to_string(r));
  }

private:
  static Nvml load() {
    Nvml n;
    void *library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *why = dlerror();
      n.unavailable = std::string("no NVML (libnvidia-ml.so.1): ") +
                      (why ? why : "dlopen failed");
      return n;
    }
    auto resolve = [&](const char *symbol, auto &fn) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(library, symbol));
      if (!fn && n.unavailable.empty())
        n.unavailable = std::string("NVML has no ") + symbol;
    };
    resolve("nvmlInit_v2", n.init);
    resolve("nvmlDeviceGetHandleByPciBusId_v2", n.handleByPciBusId);
    resolve("nvmlDeviceGetClockInfo", n.clockInfo);
    resolve("nvmlDeviceGetPowerUsage", n.powerUsage);
    resolve("nvmlDeviceGetCurrentClocksThrottleReasons", n.clockReasons);
    resolve("nvmlErrorString", n.errorString);
    n.fieldValues = reinterpret_cast<decltype(n.fieldValues)>(
        dlsym(library, "nvmlDeviceGetFieldValues"));
    if (n.unavailable.empty())
      if (NvmlReturn r = n.init(); r != kNvmlSuccess)
        n.unavailable = n.error("nvmlInit_v2", r);
    return n;
  }
};

} // namespace

PowerMonitor::PowerMonitor(int pciDomain, int pciBus, int pciDevice) {
  const Nvml &nvml = Nvml::get();
  if (!nvml.unavailable.empty()) {
    unavailable = nvml.unavailable;
    return;
  }
  std::string busId = llvm::formatv("{0:x-8}:{1:x-2}:{2:x-2}.0", pciDomain,
                                    pciBus, pciDevice)
                          .str();
  if (NvmlReturn r = nvml.handleByPciBusId(busId.c_str(), &device);
      r != kNvmlSuccess) {
    unavailable = nvml.error("nvmlDeviceGetHandleByPciBusId_v2", r) +
                  " (PCI " + busId + ")";
    device = nullptr;
  }
}

PowerMonitor::~PowerMonitor() {
  if (running.exchange(false) && thread.joinable())
    thread.join();
}

bool PowerMonitor::sample() {
  const Nvml &nvml = Nvml::get();
  Sample s{0, 0, false};
  unsigned long long reasons = 0;
  NvmlReturn r = nvml.clockInfo(device, kClockSm, &s.smClockMhz);
  FieldValue instant{};
  instant.fieldId = kFieldPowerInstant;
  if (r == kNvmlSuccess && nvml.fieldValues &&
      nvml.fieldValues(device, 1, &instant) == kNvmlSuccess &&
      instant.nvmlReturn == kNvmlSuccess)
    s.powerMw = instant.valueType == kValueUnsignedInt
                    ? instant.value.ui
                    : unsigned(instant.value.ull);
  else if (r == kNvmlSuccess)
    r = nvml.powerUsage(device, &s.powerMw);
  if (r != kNvmlSuccess) {
    unavailable = nvml.error(s.smClockMhz ? "nvmlDeviceGetPowerUsage"
                                          : "nvmlDeviceGetClockInfo",
                             r);
    return false;
  }
  // The reasons are a nicety: a driver without them reports no cap.
  if (nvml.clockReasons(device, &reasons) == kNvmlSuccess)
    s.capped = reasons & kReasonSwPowerCap;
  samples.push_back(s);
  return true;
}

void PowerMonitor::start(unsigned intervalMs) {
  samples.clear();
  if (!device || !unavailable.empty() || running)
    return;
  if (!sample())
    return;
  running = true;
  thread = std::thread([this, intervalMs] {
    while (running) {
      std::this_thread::sleep_for(std::chrono::milliseconds(intervalMs));
      if (running && !sample())
        break;
    }
  });
}

PowerSummary PowerMonitor::stop() {
  if (running.exchange(false) && thread.joinable())
    thread.join();
  PowerSummary summary;
  if (!device || !unavailable.empty() || samples.empty() || !sample()) {
    summary.unavailable = unavailable.empty() ? "NVML gave no samples"
                                              : unavailable;
    return summary;
  }
  summary.available = true;
  summary.samples = samples.size();
  std::vector<unsigned> clocks;
  double power = 0;
  unsigned capped = 0;
  for (const Sample &s : samples) {
    clocks.push_back(s.smClockMhz);
    power += s.powerMw / 1000.0;
    summary.powerMaxW = std::max(summary.powerMaxW, s.powerMw / 1000.0);
    capped += s.capped;
  }
  std::sort(clocks.begin(), clocks.end());
  summary.smClockMedianMhz = clocks[clocks.size() / 2];
  summary.smClockMinMhz = clocks.front();
  summary.smClockMaxMhz = clocks.back();
  summary.powerMeanW = power / samples.size();
  summary.powerCapped = double(capped) / samples.size();
  return summary;
}

std::string PowerSummary::describe() const {
  if (!available)
    return "clock and power not measured: " + unavailable;
  return llvm::formatv("SM clock {0:F0} MHz ({1:F0}-{2:F0}), board power "
                       "{3:F0} W (max {4:F0}), at the power cap in {5:F0}% "
                       "of {6} samples",
                       smClockMedianMhz, smClockMinMhz, smClockMaxMhz,
                       powerMeanW, powerMaxW, 100 * powerCapped, samples)
      .str();
}

llvm::json::Object PowerSummary::toJSON(double ms) const {
  if (!available)
    return llvm::json::Object{{"sm_clock_mhz", nullptr},
                              {"power_w", nullptr},
                              {"energy_per_call_mj", nullptr},
                              {"unavailable", unavailable}};
  return llvm::json::Object{{"sm_clock_mhz", smClockMedianMhz},
                            {"sm_clock_min_mhz", smClockMinMhz},
                            {"sm_clock_max_mhz", smClockMaxMhz},
                            {"power_w", powerMeanW},
                            {"power_max_w", powerMaxW},
                            {"power_capped", powerCapped},
                            {"samples", samples},
                            {"energy_per_call_mj", energyPerCallMj(ms)}};
}
