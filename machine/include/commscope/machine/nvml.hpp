// What NVML says of one GPU: its PCIe link (the generation and width, at most and now), its
// maximum clocks and its NVLinks. One reader for the machine model (the link between a node's
// GPUs) and the doctor (a GPU's link to its host and its peaks), so that the two state the same
// figures. NVML is the driver's libnvidia-ml.so.1, opened at run time: the build needs no NVML
// headers, and a machine without it runs and says why the figures are not known.
#pragma once

#include <string>

namespace commscope::machine {

struct NvmlGpu {
  std::string error;  // empty where NVML answered for the device, else why it did not
  // 0 where NVML does not give the figure.
  unsigned pcie_gen_max = 0, pcie_width_max = 0;          // the most the GPU and its slot can
  unsigned pcie_gen_current = 0, pcie_width_current = 0;  // now (an idle GPU drops its generation)
  unsigned sm_clock_max_mhz = 0, mem_clock_max_mhz = 0;
  unsigned nvlinks_up = 0;     // the NVLinks active
  unsigned nvlink_version = 0; // NVML's version code of the newest of them
};

// The GPU at a PCI bus id as CUDA writes it (cudaDeviceGetPCIBusId: "0000:18:00.0"). NVML is
// opened and initialised once per process; thread-safe.
NvmlGpu nvml_gpu(const std::string& bus_id);

}  // namespace commscope::machine
