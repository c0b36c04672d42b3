#include "commscope/trainer/operators.hpp"

namespace commscope::trainer {

namespace {
ModelOperators::Op op(std::string name) {
  return {profiler::name_id(name), std::move(name)};
}
}  // namespace

ModelOperators::ModelOperators(int layers)
    : embed_fwd(op("embed.fwd")), embed_bwd(op("embed.bwd")), head_fwd(op("head.fwd")), head_bwd(op("head.bwd")) {
  for (int l = 0; l < layers; ++l) {
    const std::string block = "block" + std::to_string(l);
    attn_fwd.push_back(op(block + ".attn.fwd"));
    mlp_fwd.push_back(op(block + ".mlp.fwd"));
    attn_bwd.push_back(op(block + ".attn.bwd"));
    mlp_bwd.push_back(op(block + ".mlp.bwd"));
  }
}

DataParallelNames::DataParallelNames(const std::string& algo_name)
    : grad_allreduce(op("grad.allreduce")),
      grad_reducescatter(op("grad.reducescatter")),
      param_allgather(op("param.allgather")),
      optimizer(op("optimizer.step")),
      loss(op("loss.allreduce")),
      allreduce(profiler::name_id("allreduce")),
      allgather(profiler::name_id("allgather")),
      reducescatter(profiler::name_id("reducescatter")),
      algo(profiler::name_id(algo_name)) {}

}  // namespace commscope::trainer
