#pragma once
// The CUPTI activity tracer (CUDA builds): the thin glue between CUPTI and RecordProcessor.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commscope/profiler/clock.hpp"
#include "commscope/profiler/device_records.hpp"

namespace commscope::profiler::detail {

class DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;
  // Stops collection, forces CUPTI to flush every buffer (cuptiActivityFlushAll with
  // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) and returns the decoded records, in any order.
  virtual std::vector<DeviceRecord> stop() = 0;
  // Records CUPTI reported as dropped (cuptiActivityGetNumDroppedRecords), summed over contexts.
  virtual std::int64_t dropped() const = 0;
  // CUPTI's clock minus the rank clock (ns since the epoch of `clock`), measured at start.
  virtual std::int64_t cupti_minus_host_ns() const = 0;
};

// Starts CUPTI activity collection (CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, DRIVER,
// EXTERNAL_CORRELATION, SYNCHRONIZATION) with preallocated buffers, and installs the recorder's
// external-correlation hooks (OperatorScope -> CUSTOM0, CommScope -> CUSTOM1). Returns nullptr
// and a one-line reason in `why` when it cannot: a build without CUDA, no device, CUPTI busy
// (another subscriber/profiler), or any CUPTI error. Never throws.
std::unique_ptr<DeviceTracer> start_cupti(const TickConverter& clock, std::string& why);

}  // namespace commscope::profiler::detail
