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

}  // namespace commscope::trainer
