// Setting a rank up on a GPU: the bench's --device cuda, the trainer's and the doctor's.
#pragma once

#include <string>

namespace commscope {

class Communicator;  // communicator.hpp is C++20; these headers are also read by the C++17 .cu files

// The GPU this rank of a node takes: its node rank % the GPUs it sees (`visible`). `first` is the
// lowest node rank on the same physical GPU (this rank's own where none below shares it; by PCI
// bus id, first_rank_per_gpu in gpu_owners.hpp: launchers that give each rank its own GPU leave
// device 0 visible to every rank), `gpus` how many GPUs the node's ranks hold between them. No
// usable GPU: InvalidArgument starting with `who`. Collective over `node`, a node's communicator
// (Communicator::split_by_node); sets no device.
struct NodeGpu {
  int device = 0, first = 0, gpus = 0, visible = 0;
  std::string bus;
};
NodeGpu node_gpu(const Communicator& node, const std::string& who);

// The node's ranks take the visible GPUs in turn: cudaSetDevice(node rank % GPUs); returns the
// device. With `exclusive` (NCCL refuses two ranks on one GPU) the node's ranks compare their
// GPUs' PCI bus ids (launchers that give each rank its own GPU leave one visible GPU per rank,
// so what must differ is the physical GPU), and every rank throws TransportError if any two
// share one, so that none goes on to wait in NCCL. No usable GPU: InvalidArgument. Messages
// start with `who` ("--device cuda"). Collective over comm.
int bind_local_gpu(const Communicator& comm, bool exclusive, const std::string& who);

}  // namespace commscope
