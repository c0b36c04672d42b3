// Internal: the GPU part of detect_machine. Built from machine_detect_cuda.cpp when the build
// defines COMMSCOPE_WITH_CUDA (machine/CMakeLists.txt); otherwise no GPUs and nothing to detect.
#pragma once

#include <string>

#include "commscope/model/machine_model.hpp"

namespace commscope::machine::detail {

#ifdef COMMSCOPE_WITH_CUDA
// Visible CUDA devices; 0 without a driver or device.
int visible_gpus();
// The PCI bus id of CUDA device `device`, "" where it cannot be read.
std::string gpu_bus_id(int device);
// The current device's copy rate (cudaMemcpy device to device, timed with events) and the link
// between the node's GPUs (NVLink generation, links and rate, else PCIe generation and width, from
// NVML when libnvidia-ml is there). What cannot be learned stays unknown with the reason.
void detect_device(NodeModel& node);
#else
inline int visible_gpus() {
  return 0;
}
inline std::string gpu_bus_id(int) {
  return "";
}
inline void detect_device(NodeModel& node) {
  node.copy.detail = node.intra.detail = "not a CUDA build";
}
#endif

}  // namespace commscope::machine::detail
