#include <cstdlib>
#include <memory>
#include <new>

#include "backend.hpp"
#include "commscope/collectives/error.hpp"

namespace commscope::replay {
namespace {

// Zeros from calloc: every reduction of them is exact, and the pages of a large one stay the
// kernel's zero page until the collective writes them (a 2 GiB sendrecv's send side costs no memory).
struct FreeDeleter {
  void operator()(unsigned char* p) const noexcept { std::free(p); }
};
using Zeros = std::unique_ptr<unsigned char[], FreeDeleter>;

Zeros zeros(std::size_t bytes) {
  auto* p = static_cast<unsigned char*>(std::calloc(bytes, 1));
  if (p == nullptr) throw std::bad_alloc();
  return Zeros(p);
}

class HostBackend final : public CollectiveBackend {
 public:
  void add_group(const std::string&, Communicator&) override {}
  void run(const std::string&, Communicator& comm, CollArgs args, std::size_t bytes, const Algorithm* algo) override {
    if (bytes > size_) send_ = zeros(bytes), recv_ = zeros(bytes), size_ = bytes;
    args.recv = recv_.get();
    args.send = in_place(args.coll) ? args.recv : send_.get();
    comm.run(args, *algo);
  }

 private:
  Zeros send_, recv_;
  std::size_t size_ = 0;
};

}  // namespace

std::unique_ptr<CollectiveBackend> make_host_backend() {
  return std::make_unique<HostBackend>();
}

#if !COMMSCOPE_WITH_CUDA
std::unique_ptr<CollectiveBackend> make_device_backend(Communicator&) {
  throw InvalidArgument("--device cuda: this build has no CUDA (configure with COMMSCOPE_CUDA=ON)");
}
#endif

}  // namespace commscope::replay
