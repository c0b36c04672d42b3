#include "commscope/collectives/gpu_owners.hpp"

#include <cstddef>
#include <cstdio>

#include "commscope/collectives/mpi_transport.hpp"

namespace commscope {

std::vector<std::string> node_gpu_buses(MPI_Comm node, const std::string& mine) {
  int ranks = 1;
  COMMSCOPE_MPI_CHECK(MPI_Comm_size(node, &ranks));
  char bus[32] = {};
  std::snprintf(bus, sizeof bus, "%s", mine.c_str());
  std::vector<char> all(sizeof bus * static_cast<std::size_t>(ranks));
  COMMSCOPE_MPI_CHECK(MPI_Allgather(bus, sizeof bus, MPI_CHAR, all.data(), sizeof bus, MPI_CHAR, node));
  std::vector<std::string> buses;
  for (int r = 0; r < ranks; ++r) buses.emplace_back(all.data() + sizeof bus * static_cast<std::size_t>(r));
  return buses;
}

std::vector<int> first_rank_per_gpu(const std::vector<std::string>& buses) {
  std::vector<int> first(buses.size());
  for (std::size_t r = 0; r < buses.size(); ++r) {
    std::size_t f = 0;
    while (buses[f] != buses[r]) ++f;
    first[r] = static_cast<int>(f);
  }
  return first;
}

int gpus_among(const std::vector<std::string>& buses) {
  const std::vector<int> first = first_rank_per_gpu(buses);
  int gpus = 0;
  for (std::size_t r = 0; r < buses.size(); ++r) gpus += !buses[r].empty() && first[r] == static_cast<int>(r);
  return gpus;
}

}  // namespace commscope
