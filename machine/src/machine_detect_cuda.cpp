// The GPU part of the machine model: the device-to-device copy rate (CUDA events) and the link
// between a node's GPUs from NVML. NVML is opened at run time (dlopen of libnvidia-ml.so.1, the
// driver's), so that the build needs no NVML headers and a machine without it still runs; its
// few calls are declared here as nvml.h declares them (a stable C ABI).
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <string>

#include "commscope/common/timing.hpp"
#include "commscope/machine/machine_detect.hpp"
#include "machine_detect_cuda.hpp"

namespace commscope::machine::detail {
namespace {

using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlReturn = int;                   // NVML_SUCCESS = 0
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

// The calls of NVML that say how the current GPU is linked.
class Nvml {
 public:
  Nvml() : lib_(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    if (!lib_) return;
    init_ = sym<NvmlReturn (*)()>("nvmlInit_v2");
    shutdown_ = sym<NvmlReturn (*)()>("nvmlShutdown");
    by_bus_ = sym<NvmlReturn (*)(const char*, NvmlDevice*)>("nvmlDeviceGetHandleByPciBusId_v2");
    link_state_ = sym<NvmlReturn (*)(NvmlDevice, unsigned, int*)>("nvmlDeviceGetNvLinkState");
    link_version_ = sym<NvmlReturn (*)(NvmlDevice, unsigned, unsigned*)>("nvmlDeviceGetNvLinkVersion");
    pcie_gen_ = sym<NvmlReturn (*)(NvmlDevice, unsigned*)>("nvmlDeviceGetMaxPcieLinkGeneration");
    pcie_width_ = sym<NvmlReturn (*)(NvmlDevice, unsigned*)>("nvmlDeviceGetMaxPcieLinkWidth");
    ok_ = init_ && shutdown_ && by_bus_ && link_state_ && link_version_ && pcie_gen_ && pcie_width_ && init_() == 0;
  }
  ~Nvml() {
    if (ok_) shutdown_();
    if (lib_) dlclose(lib_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // The intra-node link of the GPU at `bus_id`: NVLink where links are up, else PCIe.
  Rate link(const std::string& bus_id) const {
    if (!lib_) return {0, FigureSource::none, "no NVML (libnvidia-ml.so.1 not found)"};
    NvmlDevice dev = nullptr;
    if (!ok_ || by_bus_(bus_id.c_str(), &dev) != 0) return {0, FigureSource::none, "NVML cannot read " + bus_id};
    unsigned links = 0, version = 0;
    for (unsigned l = 0; l < kNvlinkMaxLinks; ++l) {
      int active = 0;
      unsigned v = 0;
      if (link_state_(dev, l, &active) != 0 || active != 1) continue;
      ++links;
      if (link_version_(dev, l, &v) == 0) version = std::max(version, v);
    }
    unsigned gen = 0, width = 0;
    const bool pcie = pcie_gen_(dev, &gen) == 0 && pcie_width_(dev, &width) == 0;
    const std::string pcie_text = pcie ? "PCIe gen " + std::to_string(gen) + " x" + std::to_string(width) : "PCIe ?";
    if (links > 0 && nvlink_gbytes_per_link(version) > 0)
      return {links * nvlink_gbytes_per_link(version), FigureSource::system,
              "NVLink version code " + std::to_string(version) + " x" + std::to_string(links) + " (NVML; " + pcie_text +
                  ")"};
    if (pcie && pcie_gbytes_per_lane(gen) > 0)
      return {width * pcie_gbytes_per_lane(gen), FigureSource::system, pcie_text + " (NVML, no NVLink up)"};
    return {0, FigureSource::none, "NVML gave no NVLink and no PCIe link"};
  }

 private:
  template <class F>
  F sym(const char* name) {
    return reinterpret_cast<F>(dlsym(lib_, name));
  }
  void* lib_;
  bool ok_ = false;
  NvmlReturn (*init_)() = nullptr;
  NvmlReturn (*shutdown_)() = nullptr;
  NvmlReturn (*by_bus_)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*link_state_)(NvmlDevice, unsigned, int*) = nullptr;
  NvmlReturn (*link_version_)(NvmlDevice, unsigned, unsigned*) = nullptr;
  NvmlReturn (*pcie_gen_)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*pcie_width_)(NvmlDevice, unsigned*) = nullptr;
};

// Bytes copied per second by cudaMemcpy device to device of `bytes`, best of `reps` after one.
Rate device_copy(std::size_t bytes, int reps) {
  void *a = nullptr, *b = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  Rate out{0, FigureSource::none, "cudaMemcpy device to device could not run"};
  if (cudaMalloc(&a, bytes) == cudaSuccess && cudaMalloc(&b, bytes) == cudaSuccess &&
      cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess &&
      cudaMemset(a, 1, bytes) == cudaSuccess) {
    const double s = timing::best_seconds(reps + 1, [&] {
      float ms = 0;
      cudaEventRecord(start);
      cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
      cudaEventRecord(stop);
      if (cudaEventSynchronize(stop) != cudaSuccess || cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
        return 0.0;
      return ms / 1e3;
    });
    if (s > 0 && s < 1e30)
      out = {static_cast<double>(bytes) / s / 1e9, FigureSource::measured,
             "cudaMemcpy device to device " + std::to_string(bytes >> 20) + " MiB, best of " + std::to_string(reps)};
  }
  (void)cudaGetLastError();
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  return out;
}

}  // namespace

int visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

void detect_device(NodeModel& node) {
  node.copy = device_copy(std::size_t{256} << 20, 4);
  int dev = 0;
  char bus[32] = {};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    node.intra = {0, FigureSource::none, "no CUDA device"};
    return;
  }
  node.intra = Nvml().link(bus);
}

}  // namespace commscope::machine::detail
