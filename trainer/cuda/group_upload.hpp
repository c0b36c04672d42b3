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

// Grouped into pinned memory, so that the upload is asynchronous and the host runs on ahead, and
// the event of the last upload, waited for before the buffer is written again (one per activation
// slot: a slot's next backward comes after its next forward, long after its last upload).
class GroupUpload {
 public:
  // For micro-batches of `positions` tokens.
  explicit GroupUpload(int positions) : positions_(positions) {
    COMMSCOPE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_), bytes()));
    if (const cudaError_t e = cudaEventCreateWithFlags(&event_, cudaEventDisableTiming); e != cudaSuccess) {
      cudaFreeHost(host_);
      COMMSCOPE_CUDA_CHECK(e);
    }
  }
  ~GroupUpload() {
    static_cast<void>(cudaEventSynchronize(event_));  // the last upload has read the buffer
    static_cast<void>(cudaEventDestroy(event_));
    static_cast<void>(cudaFreeHost(host_));
  }
  GroupUpload(const GroupUpload&) = delete;
  GroupUpload& operator=(const GroupUpload&) = delete;

  // Groups the micro-batch's tokens that lie in [v0, v0 + rows) and copies the groups to `device`
  // (token_groups_ints(positions) ints) on `stream`; returns the number of groups.
  int upload(const int* tokens, int v0, int rows, int* device, cudaStream_t stream) {
    COMMSCOPE_CUDA_CHECK(cudaEventSynchronize(event_));  // the last upload has read the buffer
    const int groups = group_tokens(tokens, positions_, v0, rows, host_, keys_);
    COMMSCOPE_CUDA_CHECK(cudaMemcpyAsync(device, host_, bytes(), cudaMemcpyHostToDevice, stream));
    COMMSCOPE_CUDA_CHECK(cudaEventRecord(event_, stream));
    return groups;
  }

 private:
  std::size_t bytes() const { return token_groups_ints(static_cast<std::size_t>(positions_)) * sizeof(int); }
  int positions_;
  int* host_ = nullptr;
  cudaEvent_t event_ = nullptr;
  std::vector<std::uint64_t> keys_;
};

}  // namespace commscope::trainer::cuda
