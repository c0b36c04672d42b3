#pragma once
// Where a replayed collective's buffers live and how it runs: host memory through the
// Communicator (--device cpu), or device memory through DeviceCollectives, NCCL's collectives or
// ours (--device cuda, device_backend.cpp). Messages stay on the host (runner.cpp).

#include <memory>
#include <string>

#include "commscope/collectives/communicator.hpp"

namespace commscope::replay {

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  // Called on every member of each group, in the plan's (sorted) label order: collective.
  virtual void add_group(const std::string& label, Communicator& comm) = 0;
  // Runs `args` (its send and recv are the backend's buffers of at least `bytes` each) on the
  // group `label` to completion. algo null: NCCL's own collective (cuda only).
  virtual void run(const std::string& label, Communicator& comm, CollArgs args, std::size_t bytes,
                   const Algorithm* algo) = 0;
};

// Whether `c` replays in place (send = recv): allreduce, as commscope-train and PyTorch's
// all_reduce call it (the profiles do not say; out of place Open MPI first copies the array, 1.5 ms
// more a 4.8 MB call on 2 ranks here); the others out of place, as the trainer's ZeRO and
// PyTorch's all_gather_into_tensor / reduce_scatter_tensor call them.
inline bool in_place(Collective c) {
  return c == Collective::allreduce;
}

std::unique_ptr<CollectiveBackend> make_host_backend();
// Binds this rank to a GPU of its node (one per rank). Throws InvalidArgument when built without
// CUDA or no GPU can be used. Collective over `world`.
std::unique_ptr<CollectiveBackend> make_device_backend(Communicator& world);

}  // namespace commscope::replay
