#include "staged_mpi_transport.hpp"

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

namespace commscope {

StagedMpiTransport::StagedMpiTransport(MPI_Comm comm, cudaStream_t stream, double timeout_s)
    : DeviceTransport(stream), mpi_(comm, timeout_s) {}

StagedMpiTransport::~StagedMpiTransport() {
  // After a failed wait MPI may still own some staging buffers (abandoned requests): those
  // were released (leaked) on purpose; the rest are free to go.
  for (Pinned& p : stages_)
    if (p.data) cudaFreeHost(p.data);
}

void* StagedMpiTransport::stage(std::size_t bytes) {
  if (stages_used_ == stages_.size()) stages_.emplace_back();
  Pinned& p = stages_[stages_used_++];
  if (!p.data || p.bytes < bytes) {
    // Not in use: buffers are handed out again only after a wait completed their transfers.
    if (p.data) COMMSCOPE_CUDA_CHECK(cudaFreeHost(p.data));
    p = Pinned{};
    const std::size_t size = std::max<std::size_t>(bytes, 4096);
    COMMSCOPE_CUDA_CHECK(cudaMallocHost(&p.data, size));
    p.bytes = size;
  }
  return p.data;
}

void StagedMpiTransport::release_stages() noexcept {
  // MPI may still read or write the buffers of requests it abandoned on an error: forget
  // them rather than free memory that could be touched later.
  for (std::size_t i = 0; i < stages_used_; ++i) stages_[i] = Pinned{};
  stages_used_ = 0;
  landings_.clear();
}

void StagedMpiTransport::post_send(const void* buf, std::size_t bytes, int peer) {
  if (bytes == 0) return;
  void* host = stage(bytes);
  // The synchronisation also orders the copy after the kernels that produced `buf`.
  COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(host, buf, bytes, cudaMemcpyDeviceToHost, stream()));
  COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream()));
  mpi_.post_send(host, bytes, peer);
}

void StagedMpiTransport::post_recv(void* buf, std::size_t bytes, int peer) {
  if (bytes == 0) return;
  void* host = stage(bytes);
  mpi_.post_recv(host, bytes, peer);
  landings_.push_back({buf, host, bytes});
}

void StagedMpiTransport::wait() {
  if (stages_used_ == 0) return;  // nothing posted since the last wait
  try {
    mpi_.wait();  // deadline, TimeoutError naming the context and the pending peers
    for (const Landing& l : landings_)
      COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(l.device, l.staged, l.bytes, cudaMemcpyHostToDevice, stream()));
    // The staging buffers are reused by the next posts, so the copies must have read them.
    if (!landings_.empty()) COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream()));
  } catch (...) {
    release_stages();
    throw;
  }
  landings_.clear();
  stages_used_ = 0;
}

}  // namespace commscope
