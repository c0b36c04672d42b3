// Which of a node's ranks hold the same GPU, from the PCI bus id of each rank's GPU in node rank
// order (gpu_setup.hpp's node_gpu gathers them; CUDA-free, so the CPU build tests it). Launchers
// that give each rank its own GPU (srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES set per rank)
// leave device 0 visible to every rank: the bus ids, not the device numbers, tell them apart.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace commscope {

// For each rank, the lowest rank whose GPU is its own (itself where none below shares it).
inline std::vector<int> first_rank_per_gpu(const std::vector<std::string>& buses) {
  std::vector<int> first(buses.size());
  for (std::size_t r = 0; r < buses.size(); ++r) {
    std::size_t f = 0;
    while (buses[f] != buses[r]) ++f;
    first[r] = static_cast<int>(f);
  }
  return first;
}

}  // namespace commscope
