#include "gpu_setup.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/gpu_owners.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "cuda_check.hpp"

namespace commscope {

NodeGpu node_gpu(const Communicator& node, const std::string& who) {
  int ngpu = 0;
  const cudaError_t e = cudaGetDeviceCount(&ngpu);
  if (e != cudaSuccess || ngpu == 0)
    throw InvalidArgument(who + ": no usable GPU (" + (e != cudaSuccess ? cudaGetErrorString(e) : "no devices") + ")");
  NodeGpu g;
  g.visible = ngpu;
  g.device = node.rank() % ngpu;
  char bus[32] = {};
  COMMSCOPE_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, g.device));
  g.bus = bus;
  const std::vector<std::string> buses = node_gpu_buses(node.mpi_comm(), g.bus);
  g.first = first_rank_per_gpu(buses)[static_cast<std::size_t>(node.rank())];
  g.gpus = gpus_among(buses);
  return g;
}

int bind_local_gpu(const Communicator& comm, bool exclusive, const std::string& who) {
  const Communicator node = comm.split_by_node();
  const NodeGpu g = node_gpu(node, who);
  COMMSCOPE_CUDA_CHECK(cudaSetDevice(g.device));
  if (!exclusive) return g.device;
  std::string shared;
  if (g.first != node.rank())
    shared = who + ": ranks " + std::to_string(g.first) + " and " + std::to_string(node.rank()) + " of this node (" +
             std::to_string(node.size()) + " ranks, " + std::to_string(g.visible) +
             " visible GPUs each) share the GPU at " + g.bus +
             "; NCCL needs one GPU per rank (--transport staged runs ring/tree/rhd on a shared GPU)";
  int conflict = !shared.empty(), any_conflict = 0;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(&conflict, &any_conflict, 1, MPI_INT, MPI_MAX, comm.mpi_comm()));
  if (any_conflict) throw TransportError(shared.empty() ? who + ": ranks share a GPU (see their messages)" : shared);
  return g.device;
}

}  // namespace commscope
