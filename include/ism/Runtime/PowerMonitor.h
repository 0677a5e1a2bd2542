//===- PowerMonitor.h - SM clock and board power through NVML ---*- C++ -*-===//
//
// What the GPU's clock and power were while the runner timed something:
// NVML (libnvidia-ml.so.1, which the NVIDIA driver installs) is opened with
// dlopen when first needed, like libcuda, so the runner starts anywhere;
// without it the summary says why instead of giving figures. A thread
// samples the SM clock, the board's power draw (instant, where NVML has the
// field; its one-second average otherwise) and whether the software
// power cap holds the clock down, every few milliseconds between start()
// and stop().
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNTIME_POWERMONITOR_H
#define ISM_RUNTIME_POWERMONITOR_H

#include "llvm/Support/JSON.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace mlir::ism::nvml {

/// The clock and power during a timed window.
struct PowerSummary {
  /// Whether NVML gave figures; `unavailable` says why not.
  bool available = false;
  std::string unavailable;
  unsigned samples = 0;
  /// SM clock (MHz) over the samples.
  double smClockMedianMhz = 0, smClockMinMhz = 0, smClockMaxMhz = 0;
  /// Board power draw (W) over the samples.
  double powerMeanW = 0, powerMaxW = 0;
  /// The share of samples (0 to 1) in which the software power cap held
  /// the clock down.
  double powerCapped = 0;

  /// Energy of one call of `ms` milliseconds at the mean power, in mJ.
  double energyPerCallMj(double ms) const { return powerMeanW * ms; }
  /// One line for people: "SM clock 1980 MHz (1755-1980), board power 512
  /// W (max 600), at the power cap in 0% of 24 samples", or why there are
  /// no figures.
  std::string describe() const;
  /// The figures as JSON (nulls and "unavailable" without NVML), with the
  /// energy of one call of `ms` milliseconds.
  llvm::json::Object toJSON(double ms) const;
};

/// Samples one GPU, found by its PCI location (the CUDA device's PCI
/// domain, bus and device numbers).
class PowerMonitor {
public:
  PowerMonitor(int pciDomain, int pciBus, int pciDevice);
  /// A monitor that measures nothing, because of `why`.
  explicit PowerMonitor(std::string why) : unavailable(std::move(why)) {}
  ~PowerMonitor();
  PowerMonitor(const PowerMonitor &) = delete;
  PowerMonitor &operator=(const PowerMonitor &) = delete;

  /// Starts sampling every `intervalMs` milliseconds (one sample at once).
  void start(unsigned intervalMs = 5);
  /// Stops sampling (one last sample) and summarises the window.
  PowerSummary stop();

private:
  struct Sample {
    unsigned smClockMhz;
    unsigned powerMw;
    bool capped;
  };
  bool sample();

  void *device = nullptr;
  std::string unavailable;
  std::vector<Sample> samples;
  std::atomic<bool> running{false};
  std::thread thread;
};

} // namespace mlir::ism::nvml

#endif // ISM_RUNTIME_POWERMONITOR_H
