// The CUDA part of capture_environment: plain C++ over the CUDA runtime API and NCCL. Only
// compiled when the build has CUDA; must work (and not crash) without a GPU or a driver.
#include "environment_cuda.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace commscope::bench::detail {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor: 13000 -> "13.0".
std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string none_because(cudaError_t err) {
  // Without any NVIDIA driver the runtime says "CUDA driver version is insufficient for CUDA
  // runtime version": say what is missing instead (a driver older than the runtime keeps the
  // runtime's words).
  int driver = 0;
  if (err == cudaErrorInsufficientDriver && (cudaDriverGetVersion(&driver) != cudaSuccess || driver <= 0))
    return "none (no NVIDIA driver on this machine: no GPU can be used)";
  if (err == cudaErrorNoDevice) return "none (no CUDA devices)";
  const char* reason = cudaGetErrorString(err);
  return std::string("none (") + (reason != nullptr ? reason : "unknown error") + ")";
}

// NCCL_VERSION_CODE: 1000 * major + 100 * minor + patch up to 2.8, 10000 * major + 100 * minor
// + patch from 2.9 on.
std::string nccl_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess || code <= 0) return "unknown";
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? (code % 10000) / 100 : (code % 1000) / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

std::string gpus() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // reset the last-error state so later CUDA calls do not report it
    return none_because(err);
  }
  if (count <= 0) return "none (no CUDA devices)";
  std::string s;
  for (int d = 0; d < count; ++d) {
    if (!s.empty()) s += "; ";
    cudaDeviceProp prop{};
    const cudaError_t perr = cudaGetDeviceProperties(&prop, d);
    if (perr == cudaSuccess) {
      prop.name[sizeof(prop.name) - 1] = '\0';
      s += std::to_string(d) + ": " + prop.name;
    } else {
      (void)cudaGetLastError();
      const char* reason = cudaGetErrorString(perr);
      s += std::to_string(d) + ": unknown (" + (reason != nullptr ? reason : "unknown error") + ")";
    }
  }
  return s;
}

}  // namespace

void add_cuda_fields(std::vector<std::pair<std::string, std::string>>& fields) {
  int runtime = 0;
  fields.emplace_back("cuda_runtime", cudaRuntimeGetVersion(&runtime) == cudaSuccess && runtime > 0
                                          ? cuda_version(runtime)
                                          : std::string("unknown"));
  int driver = 0;
  const cudaError_t derr = cudaDriverGetVersion(&driver);
  fields.emplace_back("cuda_driver", derr != cudaSuccess ? none_because(derr)
                                     : driver <= 0       ? std::string("none")
                                                         : cuda_version(driver));
  fields.emplace_back("nccl_version", nccl_version());
  fields.emplace_back("gpus", gpus());
}

}  // namespace commscope::bench::detail
