#include "gpu_setup.hpp"

#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <sstream>

#include <string>
#include <thread>
#include <vector>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "cuda_check.hpp"

namespace commscope {

int bind_local_gpu(const Communicator& comm, bool exclusive, const std::string& who) {
  int ngpu = 0;
  const cudaError_t e = cudaGetDeviceCount(&ngpu);
  if (e != cudaSuccess || ngpu == 0)
    throw InvalidArgument(who + ": no usable GPU (" + (e != cudaSuccess ? cudaGetErrorString(e) : "no devices") + ")");
  const Communicator node = comm.split_by_node();
  const int device = node.rank() % ngpu;
  COMMSCOPE_CUDA_CHECK(cudaSetDevice(device));
  if (!exclusive) return device;
  char bus[32] = {};
  COMMSCOPE_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  std::vector<char> buses(sizeof bus * static_cast<std::size_t>(node.size()));
  COMMSCOPE_MPI_CHECK(MPI_Allgather(bus, sizeof bus, MPI_CHAR, buses.data(), sizeof bus, MPI_CHAR, node.mpi_comm()));
  std::string shared;
  for (int r = 0; r < node.size() && shared.empty(); ++r) {
    if (r != node.rank() &&
        std::strncmp(bus, buses.data() + sizeof bus * static_cast<std::size_t>(r), sizeof bus) == 0) {
      shared = who;
      shared += ": ranks " + std::to_string(std::min(r, node.rank())) + " and " +
                std::to_string(std::max(r, node.rank())) + " of this node (" + std::to_string(node.size()) +
                " ranks, " + std::to_string(ngpu) + " visible GPUs each) share the GPU at " + bus +
                "; NCCL needs one GPU per rank (--transport staged runs ring/tree/rhd on a shared GPU)";
    }
  }
  int conflict = !shared.empty(), any_conflict = 0;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&conflict, &any_conflict, 1, MPI_INT, MPI_MAX, comm.mpi_comm()));
  if (any_conflict) throw TransportError(shared.empty() ? who + ": ranks share a GPU (see their messages)" : shared);
  return device;
}

}  // namespace commscope
