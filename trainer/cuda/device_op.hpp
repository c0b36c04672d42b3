#pragma once
// One operator of the CUDA trainer: a profiler OperatorScope (CUPTI links the kernels launched
// inside it through an external correlation id) and an NVTX range of the same name, so that
// Nsight Systems and other NVTX consumers see the same operators. Nests like the scopes do.
#include <nvtx3/nvToolsExt.h>

#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/operators.hpp"

namespace commscope::trainer::cuda {

class DeviceOp {
 public:
  explicit DeviceOp(const ModelOperators::Op& op) : scope_(op.id) { nvtxRangePushA(op.name.c_str()); }
  ~DeviceOp() { nvtxRangePop(); }
  DeviceOp(const DeviceOp&) = delete;
  DeviceOp& operator=(const DeviceOp&) = delete;

 private:
  profiler::OperatorScope scope_;
};

}  // namespace commscope::trainer::cuda
