// The GPU part of the machine model: the device-to-device copy rate (CUDA events) and the link
// between a node's GPUs from NVML (nvml.hpp, the doctor's reader too).
#include <cuda_runtime_api.h>

#include <string>

#include "commscope/common/timing.hpp"
#include "commscope/machine/gpu_links.hpp"
#include "commscope/machine/machine_detect.hpp"
#include "commscope/machine/nvml.hpp"
#include "machine_detect_cuda.hpp"

namespace commscope::machine::detail {
namespace {

// The intra-node link of a GPU from what NVML says of it: NVLink where links are up, else PCIe by
// trained_link (the generation's maximum at the width now), as the doctor states a GPU's host link.
Rate intra_link(const NvmlGpu& g) {
  if (!g.error.empty()) return {0, FigureSource::none, g.error};
  const PcieLink pcie = trained_link(g.pcie_gen_max, g.pcie_gen_current, g.pcie_width_max, g.pcie_width_current,
                                     "NVML: max gen, width now");
  const std::string pcie_text =
      pcie.gbytes > 0 ? "PCIe gen " + std::to_string(pcie.gen) + " x" + std::to_string(pcie.width) : "PCIe ?";
  if (g.nvlinks_up > 0 && nvlink_gbytes_per_link(g.nvlink_version) > 0)
    return {g.nvlinks_up * nvlink_gbytes_per_link(g.nvlink_version), FigureSource::system,
            "NVLink version code " + std::to_string(g.nvlink_version) + " x" + std::to_string(g.nvlinks_up) +
                " (NVML; " + pcie_text + ")"};
  if (pcie.gbytes > 0) return {pcie.gbytes, FigureSource::system, pcie.detail + ", no NVLink up"};
  return {0, FigureSource::none, "NVML gave no NVLink and no PCIe link"};
}

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

std::string gpu_bus_id(int device) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return bus;
}

void detect_device(NodeModel& node) {
  node.copy = device_copy(std::size_t{256} << 20, 4);
  int dev = 0;
  const bool current = cudaGetDevice(&dev) == cudaSuccess;
  if (!current) (void)cudaGetLastError();
  const std::string bus = current ? gpu_bus_id(dev) : "";
  if (bus.empty()) {
    node.intra = {0, FigureSource::none, "no CUDA device"};
    return;
  }
  node.intra = intra_link(nvml_gpu(bus));
}

}  // namespace commscope::machine::detail
