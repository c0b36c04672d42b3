// The CUDA trainer's engine (see cuda_engine.hpp): data, tensor and pipeline parallelism on the
// GPU. The plan (shards, buckets, which rank owns what) is the CPU's (sharding.hpp), and so are
// the buffers each mode needs, their memory and the step recipe (parallel/data_parallel_step.hpp);
// the buffers live on the GPU.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/timing.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/collective_activity.hpp"
#include "commscope/trainer/cuda_engine.hpp"
#include "commscope/trainer/operators.hpp"
#include "cuda_stream.hpp"
#include "device_array.hpp"
#include "device_collectives.hpp"
#include "device_op.hpp"
#include "gpu_setup.hpp"
#include "kernels_cuda.hpp"
#include "model_cuda.hpp"
#include "parallel/data_parallel_step.hpp"
#include "parallel/pipeline.hpp"
#include "parallel/process_grid.hpp"
#include "parallel/profiled_group.hpp"
#include "parallel/sharding.hpp"
#include "parallel/tensor_parallel.hpp"

namespace commscope::trainer {

namespace {
cuda::Attention attention_of(const std::string& name) {
  const std::optional<cuda::Attention> a = cuda::parse_attention(name);
  if (!a) throw std::invalid_argument("--attention '" + name + "': auto, cudnn, flash or naive");
  return *a;
}

namespace prof = commscope::profiler;
namespace k = cuda_kernels;
using cuda::DeviceArray;
using parallel::gather_shards;
using parallel::MicroBatchSteps;
using parallel::norm_pieces;
using parallel::NormPiece;
using parallel::pipeline_slots;
using parallel::PipelineLink;
using parallel::ProcessGrid;
using parallel::Shard;
using parallel::ShardPlan;
using std::size_t;

template <class T>
constexpr DataType kType = std::is_same_v<T, float> ? DataType::f32 : DataType::bf16;

// A CUDA event recorded on one stream and waited for by another.
class Event {
 public:
  Event() { COMMSCOPE_CUDA_CHECK(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  // `waiter` waits for what `from` has enqueued so far.
  void order(cudaStream_t from, cudaStream_t waiter) {
    COMMSCOPE_CUDA_CHECK(cudaEventRecord(e_, from));
    COMMSCOPE_CUDA_CHECK(cudaStreamWaitEvent(waiter, e_, 0));
  }
  void record(cudaStream_t s) { COMMSCOPE_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void wait(cudaStream_t s) { COMMSCOPE_CUDA_CHECK(cudaStreamWaitEvent(s, e_, 0)); }

 private:
  cudaEvent_t e_ = nullptr;
};

// The device collectives of one engine, on the communication stream: NCCL's own, or one of our
// algorithms over a device transport (DeviceCollectives of the collectives library), with the
// engine's algorithm and sum for the reducing collectives.
class EngineCollectives {
 public:
  EngineCollectives(Communicator& comm, const std::string& algo, const std::string& transport, cudaStream_t stream)
      : comm_(comm),
        algo_name_(algo),
        algo_(algo == "nccl" ? nullptr : &find_algorithm(algo)),
        device_(comm, stream, transport == "staged") {}

  const std::string& name() const { return algo_name_; }

  // Counts and in-place conventions: CollArgs's (NCCL's). Sum for the reducing ones unless `op`.
  void run(Collective c, const void* send, void* recv, size_t count, DataType type, ReduceOp op = ReduceOp::sum) {
    if (count == 0) return;
    device_.run(CollArgs{c, send, recv, count, type, op, 0}, algo_, comm_.options().algo);
  }

 private:
  Communicator& comm_;
  std::string algo_name_;
  const Algorithm* algo_;  // null: NCCL's collectives
  DeviceCollectives device_;
};

template <class T>
class CudaEngine final : public TrainEngine {
 public:
  // comm: the data-parallel group; options.grid's other groups for tensor and pipeline parallelism.
  CudaEngine(Communicator& comm, const ModelConfig& config, int local_batch, int seq, const ParallelPlan& parallel_plan,
             const AdamWOptions& adamw, const CudaEngineOptions& options)
      : comm_(comm),
        grid_(options.grid),
        parallel_(parallel_plan),
        adamw_(adamw),
        layout_(config, grid_ != nullptr ? grid_->tp_size : 1, options.stage),
        plan_(layout_, comm.size(), comm.rank()),
        buffers_(parallel_plan.dp_mode, plan_, layout_.total(), parallel_plan.micro_batches, sizeof(T),
                 parallel_plan.bucket_bytes, true, !kFloat),
        coll_(comm, parallel_plan.algo, options.transport, comm_stream_),
        model_(config, local_batch / parallel_plan.micro_batches, seq, compute_, layout_.tp(), layout_.stage(),
               pipeline_slots(layout_.stage().index, layout_.stage().count, parallel_plan.micro_batches,
                              parallel_plan.gpipe),
               attention_of(options.attention)),
        names_(parallel_plan.algo),
        dp_group_(comm, "dp", parallel_plan.algo) {
    const Stage& st = layout_.stage();
    if (grid_ != nullptr && (grid_->pp_rank != st.index || grid_->pp_size != st.count))
      throw std::invalid_argument("CudaEngine: pipeline stage " + std::to_string(st.index) + " of " +
                                  std::to_string(st.count) + " is not this rank's (" + std::to_string(grid_->pp_rank) +
                                  " of " + std::to_string(grid_->pp_size) + ")");
    if (!st.whole() && (st.first() || st.last()) && (!grid_->embedding || grid_->embedding->size() != 2))
      throw std::invalid_argument("CudaEngine: the first and last stage need their embedding group");
    if (grid_ != nullptr && grid_->tp_size > 1) {
      // The TP sums run on the model's stream, in the model's order.
      tp_coll_ =
          std::make_unique<EngineCollectives>(grid_->tp, parallel_plan.tp_algorithm(), options.transport, compute_);
      model_.set_tensor_parallel(tensor_parallel_ops());
    }
    if (!st.whole()) {
      pp_ = std::make_unique<DeviceCollectives>(grid_->pp, compute_, true);  // staged: see cuda_engine.hpp
      link_ = std::make_unique<PipelineLink>(pp_->transport(), grid_->pp, kType<T>, sizeof(T), "mpi");
      if (grid_->embedding) {
        emb_coll_ = std::make_unique<EngineCollectives>(*grid_->embedding, parallel_plan.embedding_algorithm(),
                                                        options.transport, comm_stream_);
        // The stop line names the embedding group's algorithm, the profile dp's (as it always has).
        emb_group_ = std::make_unique<parallel::ProfiledGroup>(*grid_->embedding, "embedding", emb_coll_->name(),
                                                               parallel_plan.algo);
      }
      const size_t n = static_cast<size_t>(model_.batch()) * model_.seq() * config.channels;
      if (!st.first()) stage_in_.resize(n);
      if (!st.last()) output_grad_.resize(n);
    }
    const bool sharded = buffers_.sharded();
    m_.resize(buffers_.state);
    v_.resize(buffers_.state);
    master_.resize(buffers_.master);
    grad_shard_.resize(buffers_.grad_shard);
    staging_.resize(buffers_.staging);
    if (parallel_plan.dp_mode == DpMode::kZero2 || parallel_plan.dp_mode == DpMode::kZero3) {
      grad_work0_.resize(buffers_.grad_work0);
      for (auto& w : grad_work_) w.resize(buffers_.grad_work);
      work_of_.assign(plan_.shards.size(), 0);
    }
    if (parallel_plan.dp_mode == DpMode::kZero3) {
      param_shard_.resize(buffers_.param_shard);
      param_work0_.resize(buffers_.param_work0);
      for (auto& w : param_work_) w.resize(buffers_.param_work);
    }
    rs_sum_.resize(buffers_.rs_sum);
    if (grid_ != nullptr) norm_pieces_ = gradient_norm_pieces(sharded);
    norm_.resize(std::max<size_t>(1, norm_pieces_.size()));
    COMMSCOPE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&norm_host_), sizeof(float)));
    sums_ = std::make_unique<parallel::StepSums>(comm_, tp_coll_ ? &grid_->tp : nullptr, pp_ ? &grid_->pp : nullptr);
    install_hooks();
  }

  ~CudaEngine() override {
    cudaStreamSynchronize(compute_);
    cudaStreamSynchronize(comm_stream_);
    cudaFreeHost(norm_host_);
  }

  void load(std::span<const float> params, std::span<const float> m, std::span<const float> v,
            std::int64_t step) override {
    parallel::check_load("CudaEngine", layout_.total(), params, m, v);
    step_ = step;
    sync();
    parallel::load_state(*this, buffers_, plan_, params, m, v);
    COMMSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
  }

  StepResult train_step(const int* inputs, const int* targets) override {
    return parallel::data_parallel_step(*this, buffers_, plan_, adamw_, step_, inputs, targets);
  }

  float eval_loss(const int* inputs, const int* targets) override {
    return global_mean(run_micro_batches(inputs, targets, false));
  }

  std::vector<float> full_params() override {
    sync();
    if (parallel_.dp_mode != DpMode::kDdp) return gather(master_);
    return cuda::download(master(), layout_.total());
  }
  std::vector<float> full_m() override { return full(m_); }
  std::vector<float> full_v() override { return full(v_); }
  std::int64_t step() const noexcept override { return step_; }

  DeviceMemoryTaken device_memory_taken() const noexcept override {
    return measured_first_step_ ? device_taken_ : DeviceMemoryTaken{};
  }
  std::string compute_details() const override {
    const std::string& timed = model_.attention_timing();
    return "attention " + cuda::attention_description(model_.attention()) + (timed.empty() ? "" : "; " + timed);
  }
  // The device's free memory before this engine allocated anything (make_cuda_engine's reading):
  // what its construction took is measured from it now.
  void set_device_free_at_start(size_t bytes) {
    size_t free = 0, total = 0;
    COMMSCOPE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    device_taken_.setup = bytes > free ? bytes - free : 0;
    device_free_after_setup_ = free;
  }

  MemoryReport memory() const override {
    MemoryReport r = buffers_.memory(2, model_.activation_bytes());
    r.libraries = model_.library_bytes();
    return r;
  }

  // --- the device's side of the step recipe (parallel/data_parallel_step.hpp), which also calls
  // the private run_micro_batches, sum_embedding_grads and global_mean
  template <class Device>
  friend StepResult parallel::data_parallel_step(Device&, const parallel::BufferPlan&, const ShardPlan&,
                                                 const AdamWOptions&, std::int64_t&, const int*, const int*);
  void zero_grads() { model_.zero_grads(); }
  void begin_step() { next_work_ = 0; }
  void to_comm() { to_comm_.order(compute_, comm_stream_); }
  void scatter_segment(const Shard& sh) {  // zero1: padded through the staging buffer
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(staging_.data(), model_.grads() + sh.offset, sh.count * sizeof(T),
                                         cudaMemcpyDeviceToDevice, comm_stream_));
    COMMSCOPE_CUDA_CHECK(
        cudaMemsetAsync(staging_.data() + sh.count, 0, (sh.padded - sh.count) * sizeof(T), comm_stream_));
    reduce_scatter(staging_.data(), sh);
  }
  void backward_comm_done() { to_compute_.order(comm_stream_, compute_); }  // before the update
  // The gradient norm, read in the model's type (bf16 widened as it is read; kept for the update).
  float grad_norm(bool sharded) {
    grads_ = sharded ? grad_shard_.data() : model_.grads();
    const size_t n = sharded ? plan_.shard_total : layout_.total();
    return grid_ != nullptr ? norm_mp(grads_, sharded) : norm_dp(grads_, n, sharded);
  }
  // AdamW on the fp32 master weights (this rank's shards under ZeRO), reading the gradients in
  // the model's type, then the model's parameters from them: written by the update itself (bf16
  // ddp; zero3's parameter shards), allgathered (zero1/2) or the masters themselves (fp32 ddp).
  cuda::DeviceOp optimizer_scope() { return cuda::DeviceOp(names_.optimizer); }
  void update_whole(float lr, float scale) {
    k::adamw_update<T>(layout_, 0, master(), grads_, m_.data(), v_.data(), kFloat ? nullptr : model_.params(),
                       layout_.total(), lr, scale, adamw_, step_, compute_);
  }
  void update_shard(const Shard& sh, size_t begin, size_t count, float lr, float scale) {
    T* out = parallel_.dp_mode == DpMode::kZero3 ? param_shard_.data() + sh.storage : nullptr;
    if (count > 0)
      k::adamw_update<T>(layout_, begin, master_.data() + sh.storage, grads_ + sh.storage, m_.data() + sh.storage,
                         v_.data() + sh.storage, out, count, lr, scale, adamw_, step_, compute_);
  }
  // This rank's updated shard (in T) -> every rank's whole segment of the model's parameters.
  void publish_shard(const Shard& sh, size_t count) {
    T* mine = staging_.data() + static_cast<size_t>(plan_.rank) * sh.length;
    zero(mine, sh.length);
    narrow(mine, master_.data() + sh.storage, count, compute_);
    to_comm_.order(compute_, comm_stream_);
    all_gather(mine, staging_.data(), sh);
    to_compute_.order(comm_stream_, compute_);
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(model_.params() + sh.offset, staging_.data(), sh.count * sizeof(T),
                                         cudaMemcpyDeviceToDevice, compute_));
  }
  void updated_shards() {}  // zero3: update_shard wrote the parameter shards
  void end_step() {
    // Waited for, so that a step's time (and its profile window) holds its update.
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(compute_));
    if (!measured_first_step_ && device_free_after_setup_ > 0) {  // what the first step took more
      size_t free = 0, total = 0;
      COMMSCOPE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
      device_taken_.first_step = device_free_after_setup_ > free ? device_free_after_setup_ - free : 0;
      measured_first_step_ = true;
    }
  }
  void put_state(int which, std::span<const float> values) {
    DeviceArray<float>& x = which == 0 ? m_ : v_;
    if (values.empty()) return COMMSCOPE_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
    cuda::upload(x.data(), values);
  }
  void put_params(std::span<const float> full, std::span<const float> shard) {
    if (buffers_.sharded()) {
      cuda::upload(master_.data(), shard);
      if (parallel_.dp_mode == DpMode::kZero3) cuda::upload(param_shard_.data(), shard);
    } else if constexpr (!kFloat) {
      cuda::upload(master_.data(), full);
    }
    if (parallel_.dp_mode != DpMode::kZero3) cuda::upload(model_.params(), full);
  }

 private:
  static constexpr bool kFloat = std::is_same_v<T, float>;

  void zero(T* p, size_t n) { COMMSCOPE_CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(T), compute_)); }
  void sync() {
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(compute_));
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(comm_stream_));
  }
  // fp32 master weights: the model's own parameters in fp32 DDP.
  float* master() {
    if constexpr (kFloat) {
      if (parallel_.dp_mode == DpMode::kDdp) return model_.params();
    }
    return master_.data();
  }
  // fp32 -> T, n elements, on `stream`.
  static void narrow(T* dst, const float* src, size_t n, cudaStream_t stream) {
    if (n == 0) return;
    if constexpr (kFloat) {
      COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
    } else {
      k::convert(dst, src, n, stream);
    }
  }

  // local: this rank's mean loss (a pipeline's last stage's; the other stages' 0).
  float global_mean(double local) {
    prof::OperatorScope scope(names_.loss.id);
    return sums_->mean_loss(local);
  }

  // The gradient norm without model parallelism: one sum of squares (over the DP group when
  // the gradients are sharded).
  float norm_dp(const T* grads, size_t n, bool sharded) {
    k::sum_squares(norm_.data(), grads, n, compute_);
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(norm_host_, norm_.data(), sizeof(float), cudaMemcpyDeviceToHost, compute_));
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(compute_));
    return sums_->norm(static_cast<double>(*norm_host_), sharded);
  }

  // Model parallelism: the model-parallel norm (StepSums) over the pieces of the gradients
  // this rank holds (all of the layout, or its owned part of every shard), their offsets made
  // positions in the gradient buffer.
  std::vector<NormPiece> gradient_norm_pieces(bool sharded) const {
    if (!sharded) return norm_pieces(layout_, 0, layout_.total());
    std::vector<NormPiece> out;
    for (const Shard& sh : plan_.shards)
      for (NormPiece p : norm_pieces(layout_, plan_.owned_begin(sh), plan_.owned_count(sh))) {
        p.offset += sh.storage;
        out.push_back(p);
      }
    return out;
  }
  float norm_mp(const T* grads, bool sharded) {
    for (size_t i = 0; i < norm_pieces_.size(); ++i)
      k::sum_squares(norm_.data() + i, grads + norm_pieces_[i].offset, norm_pieces_[i].count, compute_);
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(compute_));
    const std::vector<float> squares = cuda::download(norm_.data(), norm_pieces_.size());
    double split = 0, replicated = 0;
    for (size_t i = 0; i < norm_pieces_.size(); ++i) (norm_pieces_[i].split ? split : replicated) += squares[i];
    return sums_->norm(split, replicated, sharded);
  }

  // --- tensor parallelism: the model's TP operations, on the compute stream
  void tp_allreduce(void* data, size_t count, DataType type, ReduceOp op) {
    const size_t bytes = count * (type == DataType::f32 ? sizeof(float) : sizeof(T));
    const bool max = op == ReduceOp::max;
    tp_group_->run(max ? parallel::GroupOp::tp_allreduce_max : parallel::GroupOp::tp_allreduce, bytes,
                   [&] { tp_coll_->run(Collective::allreduce, data, data, count, type, op); });
  }
  typename cuda::CudaGpt2<T>::TensorParallel tensor_parallel_ops() {
    tp_group_ = std::make_unique<parallel::ProfiledGroup>(grid_->tp, "tp", tp_coll_->name());
    typename cuda::CudaGpt2<T>::TensorParallel ops;
    ops.rank = grid_->tp_rank;
    ops.sum = [this](T* data, size_t count) { tp_allreduce(data, count, kType<T>, ReduceOp::sum); };
    ops.sum_f32 = [this](float* data, size_t count) { tp_allreduce(data, count, DataType::f32, ReduceOp::sum); };
    ops.max_f32 = [this](float* data, size_t count) { tp_allreduce(data, count, DataType::f32, ReduceOp::max); };
    return ops;
  }

  // Runs the step's micro-batches through this stage (forward only unless `train`), in the
  // schedule's order: returns this stage's mean loss over them (0 before the last stage).
  // Backward scales by 1/(P m).
  double run_micro_batches(const int* inputs, const int* targets, bool train) {
    const Stage& st = layout_.stage();
    const size_t tokens = static_cast<size_t>(model_.batch()) * model_.seq();
    MicroBatchSteps steps;
    steps.select_slot = [this](int slot) { model_.select_slot(slot); };
    steps.forward = [&](int i, const void* input) -> double {
      model_.forward(inputs + i * tokens, targets + i * tokens, static_cast<const T*>(input));
      return st.last() ? model_.loss() : 0.0;
    };
    steps.output = [this] { return static_cast<const void*>(model_.stage_output()); };
    steps.backward = [&](int i, const void* grad) {
      last_micro_ = i == parallel_.micro_batches - 1;
      accumulate_ = i > 0;
      if (!grad_work0_.empty()) {  // segment 0's gradients start from zero in every backward
        work0_free_.wait(compute_);
        zero(grad_work0_.data(), grad_work0_.size());
      }
      model_.backward(1.0f / (static_cast<float>(comm_.size()) * static_cast<float>(parallel_.micro_batches)),
                      static_cast<const T*>(grad));
    };
    steps.input_grad = [this] { return static_cast<const void*>(model_.stage_input_grad()); };
    const double loss = parallel::run_micro_batches(st, parallel_.micro_batches, model_.slots(), parallel_.gpipe, train,
                                                    link_.get(), stage_in_.data(), output_grad_.data(),
                                                    tokens * static_cast<size_t>(layout_.config().channels), steps);
    last_micro_ = true, accumulate_ = false;
    return loss;
  }

  // Pipeline: the first and last stage's segment 0 gradients (the tied wte: the encoder's and
  // the head's) summed between them, on the full gradients (sharded: on this rank's shard).
  void sum_embedding_grads(bool sharded) {
    if (emb_coll_ == nullptr) return;
    const Shard& sh = plan_.shards[0];
    T* g = sharded ? grad_shard_.data() + sh.storage : model_.grads() + sh.offset;
    const size_t n = sharded ? sh.length : sh.count;
    to_comm_.order(compute_, comm_stream_);
    cuda::DeviceOp scope(names_.grad_allreduce);
    emb_group_->run(parallel::GroupOp::embedding_allreduce, n * sizeof(T),
                    [&] { emb_coll_->run(Collective::allreduce, g, g, n, kType<T>); });
  }

  std::vector<float> gather(const DeviceArray<float>& shards) {
    const std::vector<float> mine = cuda::download(shards.data(), shards.size());
    return gather_shards(comm_, plan_, mine);
  }
  std::vector<float> full(const DeviceArray<float>& x) {
    sync();
    return parallel::full_state(buffers_, plan_, comm_, cuda::download(x.data(), x.size()));
  }

  // --- collectives on the communication stream (the caller orders them after the compute)
  void allreduce(T* data, size_t count) {
    cuda::DeviceOp scope(names_.grad_allreduce);
    dp_group_.run(parallel::GroupOp::grad_allreduce, count * sizeof(T),
                  [&] { coll_.run(Collective::allreduce, data, data, count, kType<T>); });
  }
  // add: into the shard (a later micro-batch's gradients) instead of over it.
  void reduce_scatter(const T* send, const Shard& sh, bool add = false) {
    cuda::DeviceOp scope(names_.grad_reducescatter);
    T* out = grad_shard_.data() + sh.storage;
    dp_group_.run(parallel::GroupOp::grad_reducescatter, sh.padded * sizeof(T),
                  [&] { coll_.run(Collective::reducescatter, send, add ? rs_sum_.data() : out, sh.length, kType<T>); });
    if (add && sh.length > 0) k::residual_forward(out, out, rs_sum_.data(), sh.length, comm_stream_);
  }
  void all_gather(const T* mine, T* out, const Shard& sh) {
    cuda::DeviceOp scope(names_.param_allgather);
    dp_group_.run(parallel::GroupOp::param_allgather, sh.padded * sizeof(T),
                  [&] { coll_.run(Collective::allgather, mine, out, sh.length, kType<T>); });
  }

  void install_hooks() { model_.set_hooks(data_parallel_hooks<T>(parallel_.dp_mode, *this)); }

 public:                       // the engine's side of the hook protocol (data_parallel_hooks in engine.hpp)
  void bucket_ready(int s) {   // ddp
    if (!last_micro_) return;  // earlier micro-batches accumulate
    const std::optional<Segment> b = buffers_.bucket(plan_, s);
    if (!b) return;
    to_comm_.order(compute_, comm_stream_);
    allreduce(model_.grads() + b->offset, b->count);
  }
  const T* gather_params(int s) {  // zero3
    // Gathered when needed (no prefetch): the layer waits for its parameters.
    const Shard& sh = plan_.shards[static_cast<size_t>(s)];
    T* out = s == 0 ? param_work0_.data() : param_work_[next_param_ ^= 1].data();
    to_comm_.order(compute_, comm_stream_);  // the buffer's previous readers are done
    all_gather(param_shard_.data() + sh.storage, out, sh);
    to_compute_.order(comm_stream_, compute_);
    return out;
  }
  T* grad_buffer(int s) {                   // zero2, zero3
    if (s == 0) return grad_work0_.data();  // zeroed at the start of the step
    // Each other segment asks once, in backward order: the two buffers take turns, each
    // reused once the reduce-scatter that last read it is done.
    const int i = next_work_;
    next_work_ ^= 1;
    work_free_[i].wait(compute_);
    zero(grad_work_[i].data(), grad_work_[i].size());
    work_of_[static_cast<size_t>(s)] = i;
    return grad_work_[i].data();
  }
  void scatter_grads(int s) {  // zero2, zero3
    const int i = work_of_[static_cast<size_t>(s)];
    to_comm_.order(compute_, comm_stream_);
    reduce_scatter(s == 0 ? grad_work0_.data() : grad_work_[i].data(), plan_.shards[static_cast<size_t>(s)],
                   accumulate_);
    (s == 0 ? work0_free_ : work_free_[i]).record(comm_stream_);
  }

 private:
  Communicator& comm_;
  ProcessGrid* grid_;  // null: data parallel only
  ParallelPlan parallel_;
  AdamWOptions adamw_;
  ParameterLayout layout_;
  ShardPlan plan_;
  parallel::BufferPlan buffers_;
  CudaStream compute_, comm_stream_;
  Event to_comm_, to_compute_;
  std::array<Event, 2> work_free_;  // recorded after the reduce-scatter that read grad_work_[i]
  Event work0_free_;                // ... and grad_work0_
  EngineCollectives coll_;
  cuda::CudaGpt2<T> model_;

  DeviceArray<float> m_, v_, master_, norm_;
  DeviceArray<T> grad_shard_, staging_, grad_work0_, param_shard_, param_work0_;
  DeviceArray<T> rs_sum_, stage_in_, output_grad_;  // micro-batches' reduce-scatter; pipeline messages
  std::array<DeviceArray<T>, 2> grad_work_, param_work_;
  std::vector<int> work_of_;
  int next_work_ = 0, next_param_ = 0;
  bool last_micro_ = true, accumulate_ = false;
  std::unique_ptr<EngineCollectives> tp_coll_, emb_coll_;  // TP group (compute stream); embedding group
  std::unique_ptr<DeviceCollectives> pp_;                  // the pipeline group, staged
  std::unique_ptr<PipelineLink> link_;                     // its messages
  std::vector<NormPiece> norm_pieces_;
  std::unique_ptr<parallel::ProfiledGroup> tp_group_, emb_group_;  // their profiled groups
  float* norm_host_ = nullptr;
  const T* grads_ = nullptr;  // the step's gradients (grad_norm's, the update's)
  std::int64_t step_ = 0;
  size_t device_free_after_setup_ = 0;
  DeviceMemoryTaken device_taken_;
  bool measured_first_step_ = false;

  DataParallelNames names_;
  parallel::ProfiledGroup dp_group_;
  std::unique_ptr<parallel::StepSums> sums_;  // the loss and the gradient norm, over dp, tp and pp
};

// Throws before anything collective when this rank cannot take part, after agreeing with the
// others (so that no rank waits for one that gave up).
void agree(Communicator& comm, const std::string& problem) {
  int bad = !problem.empty(), any = 0;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm.mpi_comm()));
  if (any)
    throw InvalidArgument(problem.empty() ? "another rank could not start on its GPU (see its message)" : problem);
}

// The kernels' stream-ordered scratch (cudaMallocAsync: LayerNorm's and the bias gradients' partial
// sums, the norm's) comes from the device's default pool. With its default release threshold (0)
// the pool hands its free memory back at every synchronisation, three a step (the loss, the
// norm, the step's end), and the next step maps it again; kept, it is mapped once.
void keep_stream_ordered_memory() {
  int device = 0;
  COMMSCOPE_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  COMMSCOPE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t keep = UINT64_MAX;
  COMMSCOPE_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

}  // namespace

std::unique_ptr<TrainEngine> make_cuda_engine(Communicator& comm, const ModelConfig& config, int local_batch, int seq,
                                              const ParallelPlan& parallel_plan, const AdamWOptions& adamw,
                                              const CudaEngineOptions& options) {
  if (options.transport != "nccl" && options.transport != "staged")
    throw InvalidArgument("--transport '" + options.transport + "': nccl or staged");
  for (const std::string* algo : {&parallel_plan.algo, &parallel_plan.tp_algo, &parallel_plan.embedding_algo}) {
    if (*algo == "mpi")
      throw InvalidArgument(
          "--device cuda: --algo mpi would hand device pointers to MPI; use nccl, or ring/tree/rhd (over NCCL "
          "point-to-point, or --transport staged through host memory)");
    if (*algo == "nccl" && options.transport == "staged")
      throw InvalidArgument("--algo nccl needs --transport nccl (--transport staged runs ring, tree or rhd)");
  }
  if (parallel_plan.micro_batches < 1 || local_batch % parallel_plan.micro_batches != 0)
    throw InvalidArgument("--micro-batches " + std::to_string(parallel_plan.micro_batches) + " does not divide the " +
                          std::to_string(local_batch) + " sequences of a rank's batch");
  if (options.grid != nullptr ? options.stage.count != options.grid->pp_size : options.stage.count > 1)
    throw InvalidArgument("make_cuda_engine: the stage is not one of the grid's pipeline stages");
  Communicator& dp_comm = options.grid != nullptr ? options.grid->dp : comm;
  // NCCL (its collectives or its point-to-point) needs a GPU per rank; staged does not.
  bind_local_gpu(comm, options.transport == "nccl", "--device cuda");
  std::string problem;
  std::unique_ptr<TrainEngine> engine;
  size_t free_at_start = 0, total = 0;
  try {
    keep_stream_ordered_memory();
    COMMSCOPE_CUDA_CHECK(cudaMemGetInfo(&free_at_start, &total));
    const auto make = [&](auto element) {
      auto e = std::make_unique<CudaEngine<decltype(element)>>(dp_comm, config, local_batch, seq, parallel_plan, adamw,
                                                               options);
      e->set_device_free_at_start(free_at_start);
      engine = std::move(e);
    };
    if (options.bf16)
      make(__nv_bfloat16{});
    else
      make(float{});
  } catch (const std::invalid_argument& e) {  // an impossible --attention for this model or build
    problem = e.what();
  } catch (const std::runtime_error& e) {
    problem = std::string("--device cuda: rank ") + std::to_string(comm.rank()) + ": " + e.what();
  }
  agree(comm, problem);
  return engine;
}

CudaDeviceInfo cuda_device_info(bool bf16) {
  CudaDeviceInfo info;
  int device = 0;
  COMMSCOPE_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  COMMSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  info.memory_bytes = prop.totalGlobalMem;

  constexpr int n = 4096;
  const size_t elems = static_cast<size_t>(n) * n;
  CudaStream stream;
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS: cublasCreate failed");
  auto measure = [&](auto* tag) {
    using U = std::remove_pointer_t<decltype(tag)>;
    DeviceArray<U> a(elems), b(elems), c(elems);
    cuda::EventTimer timer;
    const double s = timing::best_seconds(4, [&] {  // each GEMM timed by CUDA events
      return timer.seconds(stream, [&] {
        k::matmul_forward(c.data(), a.data(), b.data(), static_cast<const U*>(nullptr), n, n, n, handle, stream);
      });
    });
    return std::isfinite(s) ? 2.0 * n * n * static_cast<double>(n) / s / 1e12 : 0.0;
  };
  try {
    info.gemm_tflops = bf16 ? measure(static_cast<__nv_bfloat16*>(nullptr)) : measure(static_cast<float*>(nullptr));
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
  cublasDestroy(handle);
  return info;
}

}  // namespace commscope::trainer
