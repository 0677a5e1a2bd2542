/* A stand-in for libnvidia-ml.so.1 with the entry points the runner's
 * PowerMonitor calls: one device at the fake driver's PCI location
 * (00000000:00:00.0) whose SM clock alternates between 1500 and 1980 MHz,
 * drawing 700 W at the power cap at 1500 and 400 W without it at 1980 as
 * its instant power (the field NVML_FI_DEV_POWER_INSTANT), while its
 * one-second average (nvmlDeviceGetPowerUsage) still says 100 W. */
#include <string.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
static int device;
static unsigned calls;

nvmlReturn_t nvmlInit_v2(void) { return 0; }
const char *nvmlErrorString(nvmlReturn_t r) {
  return r == 0 ? "Success" : "Not Found";
}
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus,
                                              nvmlDevice_t *out) {
  if (strcmp(bus, "00000000:00:00.0") != 0)
    return 6; /* NVML_ERROR_NOT_FOUND */
  *out = &device;
  return 0;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz) {
  ++calls;
  *mhz = calls % 2 ? 1500 : 1980;
  return 0;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw) {
  *mw = 100000;
  return 0;
}
typedef struct {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  union {
    unsigned ui;
    unsigned long long ull;
  } value;
} nvmlFieldValue_t;
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count,
                                      nvmlFieldValue_t *values) {
  for (int i = 0; i < count; ++i) {
    values[i].nvmlReturn = values[i].fieldId == 186 ? 0 : 2;
    values[i].valueType = 1; /* unsigned int */
    values[i].value.ui = calls % 2 ? 700000 : 400000;
  }
  return 0;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                       unsigned long long *r) {
  *r = calls % 2 ? 0x4 : 0;
  return 0;
}
