#pragma once
// The CPU engine: the TrainEngine of engine.hpp (which describes the data-parallel modes) on the
// CPU's model over the collectives library, in data, tensor, sequence and pipeline parallelism;
// its step is the recipe of src/parallel/data_parallel_step.hpp.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/trainer/engine.hpp"
#include "commscope/trainer/model.hpp"
#include "commscope/trainer/optimizer.hpp"

namespace commscope::trainer {

class CpuEngine final : public TrainEngine {
 public:
  // comm: the data-parallel group; plan: the layout (the model was built for it: model.tp() ==
  // plan.tp, model.stage() one of plan.pp stages, model.slots() >= pipeline_slots) and the groups'
  // algorithms; groups: the other groups the plan needs. A tensor-parallel model (model.tp() > 1)
  // needs its TP group (of model.tp() ranks): the engine routes the model's TP operations through
  // it with plan.tp_algorithm(), and the gradient norm adds the split tensors' squares over it.
  // Everything else is as without TP, on the rank's shard: load() takes and full_params() /
  // full_m() / full_v() return buffers of the shard's layout (src/parallel/tensor_parallel.hpp converts). A
  // stage of several needs the pipeline group, and the first and last stage their embedding group.
  CpuEngine(Communicator& comm, Gpt2<float>& model, const ParallelPlan& plan, AdamWOptions adamw,
            ParallelGroups groups = {});
  ~CpuEngine() override;
  CpuEngine(const CpuEngine&) = delete;
  CpuEngine& operator=(const CpuEngine&) = delete;

  using TrainEngine::load;
  void load(std::span<const float> params, std::span<const float> m, std::span<const float> v,
            std::int64_t step) override;
  StepResult train_step(const int* inputs, const int* targets) override;
  float eval_loss(const int* inputs, const int* targets) override;
  std::vector<float> full_params() override;
  std::vector<float> full_m() override;
  std::vector<float> full_v() override;
  std::int64_t step() const noexcept override;
  MemoryReport memory() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace commscope::trainer
