// --device cuda: the replay's collectives on device buffers, one DeviceCollectives (an NCCL
// communicator and our algorithms' device transport) per group, on one stream, each call
// synchronized so that its recorded time is the collective's.
#include <cuda_runtime.h>

#include <map>
#include <memory>

#include "backend.hpp"
#include "cuda_check.hpp"
#include "device_collectives.hpp"
#include "gpu_setup.hpp"

namespace commscope::replay {
namespace {

class DeviceBackend final : public CollectiveBackend {
 public:
  explicit DeviceBackend(Communicator& world) {
    (void)bind_local_gpu(world, true, "--device cuda");
    COMMSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~DeviceBackend() override {
    groups_.clear();  // the communicators before the stream and buffers they use
    release();
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  DeviceBackend(const DeviceBackend&) = delete;
  DeviceBackend& operator=(const DeviceBackend&) = delete;

  void add_group(const std::string& label, Communicator& comm) override {
    groups_[label] = std::make_unique<DeviceCollectives>(comm, stream_, false);
  }
  void run(const std::string& label, Communicator& comm, CollArgs args, std::size_t bytes,
           const Algorithm* algo) override {
    if (bytes > bytes_) grow(bytes);
    args.recv = recv_;
    args.send = in_place(args.coll) ? args.recv : send_;
    groups_.at(label)->run(args, algo, comm.options().algo);
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  void grow(std::size_t bytes) {
    COMMSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    release();
    COMMSCOPE_CUDA_CHECK(cudaMalloc(&send_, bytes));
    COMMSCOPE_CUDA_CHECK(cudaMalloc(&recv_, bytes));
    COMMSCOPE_CUDA_CHECK(cudaMemset(send_, 0, bytes));  // zeros: every reduction of them is exact
    bytes_ = bytes;
  }
  void release() noexcept {
    if (send_ != nullptr) cudaFree(send_);
    if (recv_ != nullptr) cudaFree(recv_);
    send_ = recv_ = nullptr;
    bytes_ = 0;
  }

  cudaStream_t stream_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::size_t bytes_ = 0;
  std::map<std::string, std::unique_ptr<DeviceCollectives>> groups_;
};

}  // namespace

std::unique_ptr<CollectiveBackend> make_device_backend(Communicator& world) {
  return std::make_unique<DeviceBackend>(world);
}

}  // namespace commscope::replay
