// Which of a node's ranks hold the same GPU, from the PCI bus id of each rank's GPU in node rank
// order (CUDA-free, so the CPU build tests it; collectives/cuda's node_gpu and the machine model's
// count of a node's GPUs read the ids). Launchers that give each rank its own GPU (srun
// --gpus-per-task=1, CUDA_VISIBLE_DEVICES set per rank) leave device 0 visible to every rank: the
// bus ids, not the device numbers, tell them apart.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace commscope {

// Every node rank's bus id, in node rank order, from each rank's `mine` ("" for a rank without a
// GPU; ids longer than 31 characters are cut). Collective over `node`, a node's communicator.
std::vector<std::string> node_gpu_buses(MPI_Comm node, const std::string& mine);
// For each rank, the lowest rank whose GPU is its own (itself where none below shares it).
std::vector<int> first_rank_per_gpu(const std::vector<std::string>& buses);
// How many GPUs the ranks hold between them: the distinct ids, "" not counted.
int gpus_among(const std::vector<std::string>& buses);

}  // namespace commscope
