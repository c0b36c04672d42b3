// Setting a rank up on a GPU: the bench's --device cuda and the trainer's.
#pragma once

#include <string>

namespace commscope {

class Communicator;  // communicator.hpp is C++20; these headers are also read by the C++17 .cu files

// The node's ranks take the visible GPUs in turn: cudaSetDevice(node rank % GPUs); returns the
// device. With `exclusive` (NCCL refuses two ranks on one GPU) the node's ranks compare their
// GPUs' PCI bus ids (launchers that give each rank its own GPU leave one visible GPU per rank,
// so what must differ is the physical GPU), and every rank throws TransportError if any two
// share one, so that none goes on to wait in NCCL. No usable GPU: InvalidArgument. Messages
// start with `who` ("--device cuda"). Collective over comm.
int bind_local_gpu(const Communicator& comm, bool exclusive, const std::string& who);

}  // namespace commscope
