#include "backend.hpp"
#include "commscope/collectives/error.hpp"
#include "zeros.hpp"

namespace commscope::replay {
namespace {

class HostBackend final : public CollectiveBackend {
 public:
  void add_group(const std::string&, Communicator&) override {}
  void run(const std::string&, Communicator& comm, CollArgs args, std::size_t bytes, const Algorithm* algo) override {
    if (bytes > size_) send_ = Zeros(bytes), recv_ = Zeros(bytes), size_ = bytes;
    args.recv = recv_.data();
    args.send = in_place(args.coll) ? args.recv : send_.data();
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
