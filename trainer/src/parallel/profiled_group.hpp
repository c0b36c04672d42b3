#pragma once
// A process group of the trainer as a stopped rank's line and the profiler see it, for both
// engines: each collective the trainer runs is marked as in progress (CollectiveActivity), timed
// as a communication of the group (profiler::CommScope, numbered per communicator by
// profile_group) and then run, in one place, with the operation names spelled once here; the
// pipeline's messages too (PipelineLink, pipeline.hpp), numbered by their pair of stages.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "commscope/collectives/communicator.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/collective_activity.hpp"

namespace commscope::trainer::parallel {

// The trainer's communication: its groups' collectives, then the pipeline's messages.
enum class GroupOp : int {
  grad_allreduce,       // DDP's gradient buckets (dp)
  grad_reducescatter,   // ZeRO's gradients (dp)
  param_allgather,      // ZeRO's parameters (dp)
  embedding_allreduce,  // the tied wte's gradients between the pipeline's ends (embedding)
  tp_allreduce,         // tensor parallelism's sums of activations (tp)
  tp_allreduce_max,     // the vocabulary-parallel cross-entropy's row maxima (tp)
  tp_reducescatter,     // sequence parallelism's (tp)
  tp_allgather,
  loss_allreduce,  // the step's sums of one double on the host over MPI (StepSums): the loss,
  norm_allreduce,  // the squared gradient norm (dp, tp, pp)
  // The pipeline's point-to-point messages, sent and received by PipelineLink (pipeline.hpp),
  // the point-to-point sibling of ProfiledGroup: each pair of stages numbers its own messages.
  pp_send,
  pp_recv_activations,  // from the previous stage
  pp_recv_gradients,    // from the next stage
};
inline constexpr int kGroupOpCount = 10;  // the collectives' (ProfiledGroup::run's)
inline constexpr int kOpCount = 13;       // and the pipeline's messages (ProfiledGroup::message's)

// What an operation is called: its collective and what it carries (the stop line's
// "allreduce (ring, 4 MiB, gradients)"), and its communication name in the profile.
struct GroupOpName {
  const char* collective;
  const char* profile;
  const char* what;
};
const GroupOpName& group_op_name(GroupOp op);

class ProfiledGroup {
 public:
  // kind: the group's kind for profile_group ("dp", "tp", "embedding"); algo: the algorithm the
  // stop line names; profiled_algo: the one the profile records ("": algo).
  ProfiledGroup(const Communicator& comm, std::string_view kind, std::string algo, std::string_view profiled_algo = {});

  // Runs call(), the collective `op` of `bytes` on this group, marked and profiled (op: one of
  // the first kGroupOpCount, a collective; the pipeline's messages go through message()).
  template <class Call>
  void run(GroupOp op, std::size_t bytes, Call&& call) const {
    const GroupOpName& n = group_op_name(op);
    CollectiveActivity activity(n.collective, algo_, bytes, n.what);
    profiler::CommScope c(names_[static_cast<std::size_t>(op)], algo_id_, static_cast<std::int64_t>(bytes), *group_);
    call();
  }
  // Runs call(), the pipeline's message `op` of `bytes` (one of the last three: PipelineLink's),
  // profiled as `instance`, its pair of stages' numbering rather than the group's; a receive is
  // marked as in progress too (a send is only posted, and completing it is PipelineLink's wait).
  template <class Call>
  void message(GroupOp op, std::size_t bytes, profiler::CommInstance instance, Call&& call) const {
    const GroupOpName& n = group_op_name(op);
    std::optional<CollectiveActivity> activity;
    if (op != GroupOp::pp_send) activity.emplace(n.collective, algo_, bytes, n.what);
    profiler::CommScope c(names_[static_cast<std::size_t>(op)], algo_id_, static_cast<std::int64_t>(bytes), instance);
    call();
  }
  const std::string& algo() const noexcept { return algo_; }
  profiler::NameId label() const noexcept { return group_->label(); }  // the communicator's, as profiled

 private:
  std::string algo_;
  profiler::NameId algo_id_;
  std::array<profiler::NameId, kOpCount> names_{};
  profiler::CommGroup* group_;
};

// The step's sums of one double over a group's ranks on the host, over MPI whatever the groups'
// algorithms (the loss, the squared gradient norm), one rule for both engines, each sum through
// its group's ProfiledGroup ("allreduce (mpi, ..., loss)", profiled as the group's allreduce).
class StepSums {
 public:
  // dp: the data-parallel group; tp, pp: the TP and the pipeline group (null: none).
  StepSums(Communicator& dp, Communicator* tp, Communicator* pp);

  // The global mean loss from this rank's mean (a pipeline's last stage's; the other stages'
  // 0): summed over the stages, then over dp, divided by dp's ranks. Collective.
  float mean_loss(double local) const;
  // The gradient norm without model parallelism, from this rank's sum of squares (summed over dp
  // where the gradients are sharded over it). Collective.
  float norm(double squares, bool sharded) const;
  // The model-parallel gradient norm (norm_pieces in tensor_parallel.hpp), from this rank's sums
  // of squares over the split and the replicated tensors: both summed over dp where the gradients
  // are sharded, the split ones over tp, the total over pp. Collective.
  float norm(double split, double replicated, bool sharded) const;

 private:
  struct Group {
    Group(Communicator& c, std::string_view kind) : comm(&c), profiled(c, kind, "mpi") {}
    Communicator* comm;
    ProfiledGroup profiled;
  };
  static double sum(const Group& group, GroupOp op, double local);

  Group dp_;
  std::unique_ptr<Group> tp_, pp_;
};

}  // namespace commscope::trainer::parallel
