// NVML opened at run time (dlopen of libnvidia-ml.so.1); its few calls declared here as nvml.h
// declares them (a stable C ABI): nvmlReturn_t is an int (NVML_SUCCESS = 0), nvmlDevice_t a
// pointer, nvmlClockType_t an int enum (NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2).
#include "commscope/machine/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>

namespace commscope::machine {
namespace {

using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlReturn = int;
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr int kClockSm = 1, kClockMem = 2;

class Nvml {
 public:
  Nvml() : lib_(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    if (!lib_) return;
    init_ = sym<NvmlReturn (*)()>("nvmlInit_v2");
    shutdown_ = sym<NvmlReturn (*)()>("nvmlShutdown");
    by_bus_ = sym<NvmlReturn (*)(const char*, NvmlDevice*)>("nvmlDeviceGetHandleByPciBusId_v2");
    link_state_ = sym<NvmlReturn (*)(NvmlDevice, unsigned, int*)>("nvmlDeviceGetNvLinkState");
    link_version_ = sym<NvmlReturn (*)(NvmlDevice, unsigned, unsigned*)>("nvmlDeviceGetNvLinkVersion");
    gen_max_ = sym<Figure>("nvmlDeviceGetMaxPcieLinkGeneration");
    width_max_ = sym<Figure>("nvmlDeviceGetMaxPcieLinkWidth");
    gen_now_ = sym<Figure>("nvmlDeviceGetCurrPcieLinkGeneration");
    width_now_ = sym<Figure>("nvmlDeviceGetCurrPcieLinkWidth");
    clock_max_ = sym<NvmlReturn (*)(NvmlDevice, int, unsigned*)>("nvmlDeviceGetMaxClockInfo");
    ok_ = init_ && shutdown_ && by_bus_ && init_() == 0;
  }
  ~Nvml() {
    if (ok_) shutdown_();
    if (lib_) dlclose(lib_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  NvmlGpu gpu(const std::string& bus_id) const {
    NvmlGpu g;
    NvmlDevice dev = nullptr;
    if (!lib_) {
      g.error = "no NVML (libnvidia-ml.so.1 not found)";
    } else if (!ok_) {
      g.error = "NVML did not start";
    } else if (by_bus_(bus_id.c_str(), &dev) != 0) {
      g.error = "NVML cannot read " + bus_id;
    }
    if (!g.error.empty()) return g;
    const auto read = [dev](Figure f, unsigned& into) {
      if (f == nullptr || f(dev, &into) != 0) into = 0;
    };
    read(gen_max_, g.pcie_gen_max);
    read(width_max_, g.pcie_width_max);
    read(gen_now_, g.pcie_gen_current);
    read(width_now_, g.pcie_width_current);
    if (clock_max_ != nullptr) {
      if (clock_max_(dev, kClockSm, &g.sm_clock_max_mhz) != 0) g.sm_clock_max_mhz = 0;
      if (clock_max_(dev, kClockMem, &g.mem_clock_max_mhz) != 0) g.mem_clock_max_mhz = 0;
    }
    if (link_state_ != nullptr && link_version_ != nullptr)
      for (unsigned l = 0; l < kNvlinkMaxLinks; ++l) {
        int active = 0;
        unsigned v = 0;
        if (link_state_(dev, l, &active) != 0 || active != 1) continue;
        ++g.nvlinks_up;
        if (link_version_(dev, l, &v) == 0) g.nvlink_version = std::max(g.nvlink_version, v);
      }
    return g;
  }

 private:
  using Figure = NvmlReturn (*)(NvmlDevice, unsigned*);
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
  Figure gen_max_ = nullptr, width_max_ = nullptr, gen_now_ = nullptr, width_now_ = nullptr;
  NvmlReturn (*clock_max_)(NvmlDevice, int, unsigned*) = nullptr;
};

}  // namespace

NvmlGpu nvml_gpu(const std::string& bus_id) {
  static const Nvml nvml;
  return nvml.gpu(bus_id);
}

}  // namespace commscope::machine
