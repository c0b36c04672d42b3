#pragma once
// The profiler's operators of a GPT-2 step, one per layer step, shared by the CPU and the CUDA
// models (which also emit each as an NVTX range): "embed.fwd", "block3.attn.fwd",
// "block3.mlp.fwd", "head.fwd", then "head.bwd", "block3.mlp.bwd", "block3.attn.bwd", "embed.bwd";
// and data parallelism's: "grad.allreduce", "grad.reducescatter", "param.allgather",
// "optimizer.step", "loss.allreduce".

#include <string>
#include <vector>

#include "commscope/profiler/recorder.hpp"

namespace commscope::trainer {

struct ModelOperators {
  struct Op {
    profiler::NameId id = 0;
    std::string name;
  };
  explicit ModelOperators(int layers);

  Op embed_fwd, embed_bwd, head_fwd, head_bwd;
  std::vector<Op> attn_fwd, mlp_fwd, attn_bwd, mlp_bwd;  // per layer
};

// The data parallelism's operators and communication names, shared by the CPU and CUDA engines.
struct DataParallelNames {
  explicit DataParallelNames(const std::string& algo);

  ModelOperators::Op grad_allreduce, grad_reducescatter, param_allgather, optimizer, loss;
  profiler::NameId allreduce, allgather, reducescatter, algo;
};

}  // namespace commscope::trainer
