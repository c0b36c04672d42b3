#pragma once
// The host's side of the CUDA encoder backward's token groups (token_groups.hpp, the layout): the
// groups made from a micro-batch's tokens on the host and uploaded on the model's stream.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_check.hpp"
#include "token_groups.hpp"

namespace commscope::trainer::cuda {

// Grouped into pinned memory, so that the upload is asynchronous and the host runs on ahead, and the event of the last
// upload, waited for before the buffer is written again (one per activation slot: a slot's next
// backward comes after its next forward, long after its last upload).
class GroupUpload {
 public:
  GroupUpload() = default;
  ~GroupUpload() { release(); }
  GroupUpload(const GroupUpload&) = delete;
  GroupUpload& operator=(const GroupUpload&) = delete;

  // Groups the tokens [0, n) that lie in [v0, v0 + rows) and copies the groups to `device`
  // (token_groups_ints(n) ints) on `stream`; returns the number of groups.
  int upload(const int* tokens, int n, int v0, int rows, int* device, cudaStream_t stream) {
    const std::size_t ints = token_groups_ints(static_cast<std::size_t>(n));
    if (event_ == nullptr) COMMSCOPE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    COMMSCOPE_CUDA_CHECK(cudaEventSynchronize(event_));  // the last upload has read the buffer
    if (ints > capacity_) {
      if (host_ != nullptr) COMMSCOPE_CUDA_CHECK(cudaFreeHost(host_));
      host_ = nullptr;
      COMMSCOPE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_), ints * sizeof(int)));
      capacity_ = ints;
    }
    const int groups = group_tokens(tokens, n, v0, rows, host_, keys_);
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(device, host_, ints * sizeof(int), cudaMemcpyHostToDevice, stream));
    COMMSCOPE_CUDA_CHECK(cudaEventRecord(event_, stream));
    return groups;
  }

 private:
  void release() noexcept {
    if (event_ != nullptr) {
      static_cast<void>(cudaEventSynchronize(event_));
      static_cast<void>(cudaEventDestroy(event_));
    }
    if (host_ != nullptr) static_cast<void>(cudaFreeHost(host_));
  }
  int* host_ = nullptr;
  std::size_t capacity_ = 0;
  cudaEvent_t event_ = nullptr;
  std::vector<std::uint64_t> keys_;
};

}  // namespace commscope::trainer::cuda
