#pragma once
// A process group of the trainer as a stopped rank's line and the profiler see it, for both
// engines: each collective the trainer runs is marked as in progress (CollectiveActivity), timed
// as a communication of the group (profiler::CommScope, numbered per communicator by
// profile_group) and then run, in one place, with the operation names spelled once here.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "commscope/collectives/communicator.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/collective_activity.hpp"

namespace commscope::trainer::parallel {

// The trainer's collectives.
enum class GroupOp : int {
  grad_allreduce,       // DDP's gradient buckets (dp)
  grad_reducescatter,   // ZeRO's gradients (dp)
  param_allgather,      // ZeRO's parameters (dp)
  embedding_allreduce,  // the tied wte's gradients between the pipeline's ends (embedding)
  tp_allreduce,         // tensor parallelism's sums of activations (tp)
  tp_allreduce_max,     // the vocabulary-parallel cross-entropy's row maxima (tp)
  tp_reducescatter,     // sequence parallelism's (tp)
  tp_allgather,
};
inline constexpr int kGroupOpCount = 8;

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

  // Runs call(), the collective `op` of `bytes` on this group, marked and profiled.
  template <class Call>
  void run(GroupOp op, std::size_t bytes, Call&& call) const {
    const GroupOpName& n = group_op_name(op);
    CollectiveActivity activity(n.collective, algo_, bytes, n.what);
    profiler::CommScope c(names_[static_cast<std::size_t>(op)], algo_id_, static_cast<std::int64_t>(bytes), *group_);
    call();
  }
  const std::string& algo() const noexcept { return algo_; }

 private:
  std::string algo_;
  profiler::NameId algo_id_;
  std::array<profiler::NameId, kGroupOpCount> names_{};
  profiler::CommGroup* group_;
};

}  // namespace commscope::trainer::parallel
