#include "commscope/trainer/cpu_engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "commscope/collectives/types.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/collective_activity.hpp"
#include "commscope/trainer/operators.hpp"
#include "parallel/data_parallel_step.hpp"
#include "parallel/pipeline.hpp"
#include "parallel/profiled_group.hpp"
#include "parallel/sharding.hpp"
#include "parallel/tensor_parallel.hpp"

namespace commscope::trainer {

namespace prof = commscope::profiler;

struct CpuEngine::Impl {
  Communicator& comm;
  Communicator* tp;       // the tensor-parallel group (null: no tensor parallelism)
  ParallelGroups groups;  // pp and embedding null: one stage
  Gpt2<float>& model;
  ParallelPlan parallel_plan;
  AdamWOptions adamw;
  ParameterLayout layout;
  parallel::ShardPlan plan;
  parallel::BufferPlan buffers;
  int P = 1, rank = 0;

  std::vector<float> m, v;                   // ddp: whole layout; zero: this rank's shards
  std::vector<float> grad_shard;             // zero: this rank's gradient shards
  std::vector<float> param_shard;            // zero3: this rank's parameter shards
  std::vector<float> staging;                // zero1/2: one padded segment (reduce-scatter input, allgather output)
  std::vector<float> grad_work0, grad_work;  // zero2/3: segment 0's and the current segment's gradients
  int grad_work_owner = -1;
  std::vector<float> param_work0, param_work;  // zero3: gathered segment 0 / current segment
  std::int64_t step = 0;
  // Micro-batches: ddp reduces in the last one's backward; zero2/3 add each one's reduce-scatter
  // (through rs_sum) into the shard after the first.
  bool last_micro = true, accumulate = false;
  std::vector<float> rs_sum;
  // Pipeline: receive buffers for a stage input and an output gradient; the messages.
  std::vector<float> stage_in, output_grad;
  std::unique_ptr<parallel::PipelineLink> link;

  DataParallelNames names;
  prof::NameId k_adamw, k_copy;
  parallel::ProfiledGroup dp_group;
  std::unique_ptr<parallel::ProfiledGroup> emb_group;  // pipeline: the first and last stage's
  parallel::StepSums sums;                             // the loss and the gradient norm

  Impl(Communicator& c, Gpt2<float>& mo, const ParallelPlan& pl, AdamWOptions a, ParallelGroups g)
      : comm(c),
        tp(mo.tp() > 1 ? g.tp : nullptr),
        groups(g),
        model(mo),
        parallel_plan(pl),
        adamw(a),
        layout(mo.layout()),
        plan(layout, c.size(), c.rank()),
        buffers(pl.dp_mode, plan, layout.total(), pl.micro_batches, sizeof(float), pl.bucket_bytes),
        P(c.size()),
        rank(c.rank()),
        names(pl.algo),
        dp_group(c, "dp", pl.algo),
        sums(c, tp, mo.stage().whole() ? nullptr : g.pp) {
    k_adamw = prof::name_id("adamw");
    k_copy = prof::name_id("copy");
    const Stage& st = model.stage();
    if (parallel_plan.micro_batches < 1) throw std::invalid_argument("CpuEngine: need at least one micro-batch");
    if (!st.whole()) {
      if (groups.pp == nullptr || groups.pp->size() != st.count || groups.pp->rank() != st.index)
        throw std::invalid_argument("CpuEngine: pipeline stage " + std::to_string(st.index) + " of " +
                                    std::to_string(st.count) + " needs its pipeline group");
      if ((st.first() || st.last()) && (groups.embedding == nullptr || groups.embedding->size() != 2))
        throw std::invalid_argument("CpuEngine: the first and last stage need their embedding group");
      const std::size_t n = model.stage_output().size();  // a micro-batch's [b, s, C] (SP: this rank's rows)
      if (!st.first()) stage_in.assign(n, 0.0f);
      if (!st.last()) output_grad.assign(n, 0.0f);
      if (groups.embedding != nullptr)
        emb_group = std::make_unique<parallel::ProfiledGroup>(*groups.embedding, "embedding", parallel_plan.algo);
      link = std::make_unique<parallel::PipelineLink>(groups.pp->transport(), *groups.pp, DataType::f32, sizeof(float),
                                                      "mpi");
    } else {
      groups.pp = groups.embedding = nullptr;
    }
    const int slots = parallel::pipeline_slots(st.index, st.count, parallel_plan.micro_batches, parallel_plan.gpipe);
    if (model.slots() < slots)
      throw std::invalid_argument("CpuEngine: the model has " + std::to_string(model.slots()) +
                                  " activation slots; the schedule needs " + std::to_string(slots));
    if (model.tp() > 1) {
      if (g.tp == nullptr || g.tp->size() != model.tp())
        throw std::invalid_argument("CpuEngine: a model split over " + std::to_string(model.tp()) +
                                    " tensor-parallel ranks needs their communicator");
      model.set_tensor_parallel(parallel::tensor_parallel_ops<float>(*g.tp, parallel_plan.tp_algorithm()));
    }

    m.assign(buffers.state, 0.0f);
    v.assign(buffers.state, 0.0f);
    grad_shard.assign(buffers.grad_shard, 0.0f);
    staging.assign(buffers.staging, 0.0f);
    grad_work0.assign(buffers.grad_work0, 0.0f);
    grad_work.assign(buffers.grad_work, 0.0f);
    param_shard.assign(buffers.param_shard, 0.0f);
    param_work0.assign(buffers.param_work0, 0.0f);
    param_work.assign(buffers.param_work, 0.0f);
    rs_sum.assign(buffers.rs_sum, 0.0f);
    install_hooks();
  }

  void allreduce_sum(float* data, std::size_t count, prof::NameId op) {
    if (count == 0) return;
    prof::OperatorScope scope(op);
    dp_group.run(parallel::GroupOp::grad_allreduce, count * sizeof(float),
                 [&] { comm.allreduce(data, data, count, DataType::f32, ReduceOp::sum, parallel_plan.algo); });
  }

  // send: one padded segment of gradients -> this rank's shard of its sum.
  // accumulate: added into the shard (a later micro-batch's gradients) instead of written.
  void reduce_scatter(const float* send, const parallel::Shard& sh, bool add = false) {
    if (sh.padded == 0) return;
    prof::OperatorScope scope(names.grad_reducescatter.id);
    float* out = grad_shard.data() + sh.storage;
    dp_group.run(parallel::GroupOp::grad_reducescatter, sh.padded * sizeof(float), [&] {
      comm.reducescatter(send, add ? rs_sum.data() : out, sh.length, DataType::f32, ReduceOp::sum, parallel_plan.algo);
    });
    if (add) {
      prof::KernelScope k(k_copy);
      for (std::size_t i = 0; i < sh.length; ++i) out[i] += rs_sum[i];
    }
  }

  // this rank's shard `mine` -> the whole padded segment in `out` (every rank).
  void all_gather(const float* mine, float* out, const parallel::Shard& sh) {
    if (sh.padded == 0) return;
    prof::OperatorScope scope(names.param_allgather.id);
    dp_group.run(parallel::GroupOp::param_allgather, sh.padded * sizeof(float),
                 [&] { comm.allgather(mine, out, sh.length, DataType::f32, parallel_plan.algo); });
  }

  float* zeroed_grad_work(int s) {
    if (s == 0) return grad_work0.data();  // zeroed at the start of the step: head + encoder add into it
    if (grad_work_owner != s) {
      std::fill(grad_work.begin(), grad_work.end(), 0.0f);
      grad_work_owner = s;
    }
    return grad_work.data();
  }

  // The engine's side of the hook protocol (data_parallel_hooks in engine.hpp).
  void bucket_ready(int s) {  // ddp
    if (!last_micro) return;  // earlier micro-batches accumulate
    if (const std::optional<Segment> b = buffers.bucket(plan, s))
      allreduce_sum(model.grads().data() + b->offset, b->count, names.grad_allreduce.id);
  }
  const float* gather_params(int s) {  // zero3
    const parallel::Shard& sh = plan.shards[static_cast<std::size_t>(s)];
    float* out = s == 0 ? param_work0.data() : param_work.data();
    all_gather(param_shard.data() + sh.storage, out, sh);
    return out;
  }
  float* grad_buffer(int s) { return zeroed_grad_work(s); }  // zero2, zero3
  void scatter_grads(int s) {                                // zero2, zero3
    reduce_scatter(s == 0 ? grad_work0.data() : grad_work.data(), plan.shards[static_cast<std::size_t>(s)], accumulate);
    if (s != 0) grad_work_owner = -1;
  }
  void install_hooks() { model.set_hooks(data_parallel_hooks<float>(parallel_plan.dp_mode, *this)); }

  // local: this rank's mean loss (a pipeline's last stage's; the other stages' 0).
  float global_mean(double local) {
    prof::OperatorScope scope(names.loss.id);
    return sums.mean_loss(local);
  }

  // Runs the step's micro-batches through this stage (forward only unless `train`): returns this
  // stage's mean loss over them (0 before the last stage). Backward scales by 1/(P m).
  double run_micro_batches(const int* inputs, const int* targets, bool train) {
    const int micro = parallel_plan.micro_batches;
    const std::size_t tokens = static_cast<std::size_t>(model.batch()) * model.seq();
    parallel::MicroBatchSteps steps;
    steps.select_slot = [this](int slot) { model.select_slot(slot); };
    steps.forward = [&](int i, const void* input) -> double {
      return model.forward(inputs + i * tokens, targets + i * tokens, static_cast<const float*>(input));
    };
    steps.output = [this] { return static_cast<const void*>(model.stage_output().data()); };
    steps.backward = [&](int i, const void* grad) {
      last_micro = i == micro - 1;
      accumulate = i > 0;
      if (!grad_work0.empty()) std::fill(grad_work0.begin(), grad_work0.end(), 0.0f);
      grad_work_owner = -1;
      model.backward(1.0f / (static_cast<float>(P) * static_cast<float>(micro)), static_cast<const float*>(grad));
    };
    steps.input_grad = [this] { return static_cast<const void*>(model.stage_input_grad().data()); };
    const double loss =
        parallel::run_micro_batches(model.stage(), micro, model.slots(), parallel_plan.gpipe, train, link.get(),
                                    stage_in.data(), output_grad.data(), model.stage_output().size(), steps);
    last_micro = true, accumulate = false;
    return loss;
  }

  // Pipeline: the first and last stage's segment 0 gradients (the tied wte: the encoder's and
  // the head's) summed between them, on the full gradients (sharded: on this rank's shard).
  void sum_embedding_grads(bool sharded) {
    if (groups.embedding == nullptr) return;
    const parallel::Shard& sh = plan.shards[0];
    float* g = sharded ? grad_shard.data() + sh.storage : model.grads().data() + sh.offset;
    const std::size_t n = sharded ? sh.length : sh.count;
    prof::OperatorScope scope(names.grad_allreduce.id);
    emb_group->run(parallel::GroupOp::embedding_allreduce, n * sizeof(float), [&] {
      groups.embedding->allreduce(g, g, n, DataType::f32, ReduceOp::sum, parallel_plan.embedding_algorithm());
    });
  }

  // Sums of squares of g, the layout's elements [begin, begin + g.size()), split into the tensors
  // that tensor parallelism splits and the replicated ones.
  void split_squares(std::size_t begin, std::span<const float> g, double& split, double& replicated) const {
    for (const parallel::NormPiece& piece : parallel::norm_pieces(layout, begin, g.size())) {
      double sum = 0;
      const float* x = g.data() + piece.offset;
      const auto n = static_cast<std::ptrdiff_t>(piece.count);
#pragma omp parallel for reduction(+ : sum) schedule(static)
      for (std::ptrdiff_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
      (piece.split ? split : replicated) += sum;
    }
  }

  // Tensor parallelism: the squares of the replicated tensors count once (they are the same on
  // every TP rank), those of the split tensors are summed over the TP group. Pipeline: each
  // stage's sum (segment 0 counted on the first stage only) summed over the stages.
  float global_norm_mp(bool sharded) {
    double split = 0, replicated = 0;
    if (!sharded) {
      split_squares(0, model.grads(), split, replicated);
    } else {
      for (const parallel::Shard& sh : plan.shards)
        split_squares(plan.owned_begin(sh), {grad_shard.data() + sh.storage, plan.owned_count(sh)}, split, replicated);
    }
    return sums.norm(split, replicated, sharded);
  }

  float global_norm(std::span<const float> g, bool sharded) {
    if (tp != nullptr || groups.pp != nullptr) return global_norm_mp(sharded);
    double local = 0;
#pragma omp parallel for reduction(+ : local) schedule(static)
    for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(g.size()); ++i)
      local += static_cast<double>(g[static_cast<std::size_t>(i)]) * g[static_cast<std::size_t>(i)];
    return sums.norm(local, sharded);
  }

  // The device's side of the step recipe (parallel/data_parallel_step.hpp).
  void zero_grads() {
    model.zero_grads();
  }
  void begin_step() {
    if (!grad_work0.empty()) std::fill(grad_work0.begin(), grad_work0.end(), 0.0f);
    grad_work_owner = -1;
  }
  void to_comm() {}
  void scatter_segment(const parallel::Shard& sh) {  // zero1: padded through the staging buffer
    std::copy_n(model.grads().data() + sh.offset, sh.count, staging.data());
    std::fill(staging.begin() + static_cast<std::ptrdiff_t>(sh.count),
              staging.begin() + static_cast<std::ptrdiff_t>(sh.padded), 0.0f);
    reduce_scatter(staging.data(), sh);
  }
  void backward_comm_done() {}
  float grad_norm(bool sharded) {
    return sharded ? global_norm(grad_shard, true) : global_norm(model.grads(), false);
  }
  prof::OperatorScope optimizer_scope() {
    return prof::OperatorScope(names.optimizer.id);
  }
  void update_whole(float lr, float scale) {
    prof::KernelScope k(k_adamw);
    adamw_update(layout, 0, model.params(), model.grads(), m, v, lr, scale, adamw, step);
  }
  // zero3 updates its parameter shards, zero1/2 the model's parameters in place.
  float* shard_params(const parallel::Shard& sh) {
    return parallel_plan.dp_mode == DpMode::kZero3 ? param_shard.data() + sh.storage
                                                   : model.params().data() + plan.owned_begin(sh);
  }
  void update_shard(const parallel::Shard& sh, std::size_t begin, std::size_t n, float lr, float scale) {
    if (n == 0) return;
    prof::KernelScope k(k_adamw);
    adamw_update(layout, begin, {shard_params(sh), n}, {grad_shard.data() + sh.storage, n}, {m.data() + sh.storage, n},
                 {v.data() + sh.storage, n}, lr, scale, adamw, step);
  }
  void publish_shard(const parallel::Shard& sh, std::size_t n) {  // every rank's updated shard -> the whole segment
    float* mine = staging.data() + static_cast<std::size_t>(rank) * sh.length;
    {
      prof::KernelScope k(k_copy);
      std::fill_n(mine, sh.length, 0.0f);
      std::copy_n(shard_params(sh), n, mine);
    }
    all_gather(mine, staging.data(), sh);
    std::copy_n(staging.data(), sh.count, model.params().data() + sh.offset);
  }
  void updated_shards() {}
  void end_step() {}
  void put_state(int which, std::span<const float> values) {
    std::vector<float>& x = which == 0 ? m : v;
    if (values.empty()) return std::fill(x.begin(), x.end(), 0.0f);
    x.assign(values.begin(), values.end());
  }
  void put_params(std::span<const float> full, std::span<const float> shard) {
    if (parallel_plan.dp_mode == DpMode::kZero3)
      param_shard.assign(shard.begin(), shard.end());
    else
      std::copy(full.begin(), full.end(), model.params().begin());
  }
};

CpuEngine::CpuEngine(Communicator& comm, Gpt2<float>& model, const ParallelPlan& plan, AdamWOptions adamw,
                     ParallelGroups groups)
    : impl_(std::make_unique<Impl>(comm, model, plan, adamw, groups)) {}
CpuEngine::~CpuEngine() = default;

std::int64_t CpuEngine::step() const noexcept {
  return impl_->step;
}

void CpuEngine::load(std::span<const float> params, std::span<const float> m, std::span<const float> v,
                     std::int64_t step) {
  Impl& d = *impl_;
  parallel::check_load("CpuEngine", d.layout.total(), params, m, v);
  d.step = step;
  parallel::load_state(d, d.buffers, d.plan, params, m, v);
}

CpuEngine::StepResult CpuEngine::train_step(const int* inputs, const int* targets) {
  Impl& d = *impl_;
  return parallel::data_parallel_step(d, d.buffers, d.plan, d.adamw, d.step, inputs, targets);
}

float CpuEngine::eval_loss(const int* inputs, const int* targets) {
  return impl_->global_mean(impl_->run_micro_batches(inputs, targets, false));
}

std::vector<float> CpuEngine::full_params() {
  Impl& d = *impl_;
  if (d.parallel_plan.dp_mode == DpMode::kZero3) return parallel::gather_shards(d.comm, d.plan, d.param_shard);
  const auto p = d.model.params();
  return {p.begin(), p.end()};
}
std::vector<float> CpuEngine::full_m() {
  return parallel::full_state(impl_->buffers, impl_->plan, impl_->comm, impl_->m);
}
std::vector<float> CpuEngine::full_v() {
  return parallel::full_state(impl_->buffers, impl_->plan, impl_->comm, impl_->v);
}

MemoryReport CpuEngine::memory() const {
  return impl_->buffers.memory(1, impl_->model.activation_bytes());
}

}  // namespace commscope::trainer
