#pragma once
// The trainer's host-side collective helpers, shared by the CPU and CUDA engines: the marker a
// signal handler reads to say which collective a stopped rank was in, and the sum of one
// double over ranks (the loss, the squared gradient norm).

#include <cstddef>
#include <string_view>

#include "commscope/collectives/communicator.hpp"
#include "commscope/common/stop_line.hpp"
#include "commscope/trainer/operators.hpp"

namespace commscope::trainer {

// Marks a collective as in progress for its lifetime: "allreduce (ring, 4 MiB, gradients)" is
// commscope::current_activity() (commscope/common/stop_line.hpp) meanwhile.
class CollectiveActivity : public ActivityMarker {
 public:
  CollectiveActivity(const char* collective, std::string_view algo, std::size_t bytes, const char* what) noexcept;
};

// The sum over all ranks of one double, over MPI on the host (the loss, the squared gradient
// norm): marked as the collective in progress ("allreduce (mpi, ..., <what>)") and recorded as
// an allreduce communication. Collective.
double sum_over_ranks(Communicator& comm, const DataParallelNames& names, double local, const char* what);

}  // namespace commscope::trainer
