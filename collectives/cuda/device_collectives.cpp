#include "device_collectives.hpp"

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "nccl.hpp"
#include "nccl_p2p_transport.hpp"
#include "staged_mpi_transport.hpp"

namespace commscope {

DeviceCollectives::DeviceCollectives(Communicator& comm, cudaStream_t stream, bool staged, int cta_policy)
    : staged_(staged), stream_(stream) {
  const double timeout = comm.options().timeout_s;
  if (staged) {
    auto t = std::make_unique<StagedMpiTransport>(comm.mpi_comm(), stream, timeout);
    // Ranks sharing a GPU often share the node's cores too: do not let a waiting rank spin.
    t->set_yield_when_idle(comm.options().yield_when_oversubscribed && comm.oversubscribed());
    transport_ = std::move(t);
    return;
  }
  nccl_ = init_nccl(comm, cta_policy);
  transport_ = std::make_unique<NcclP2pTransport>(nccl_, stream, comm.rank(), comm.size(), timeout);
}

DeviceCollectives::~DeviceCollectives() {
  transport_.reset();  // its scratch memory first, while the stream still exists
  if (nccl_ != nullptr) ncclCommDestroy(nccl_);
}

void DeviceCollectives::run(const CollArgs& args, const Algorithm* algo, const AlgoOptions& options) {
  if (!staged_ && nccl_ == nullptr) throw TransportError("the NCCL communicator was aborted after an earlier error");
  if (algo == nullptr) return launch_nccl(args, nccl_, stream_);
  try {
    algo->run(*transport_, args, options);
  } catch (...) {
    // NCCL kernels of the failed step may be stuck on the stream: abort before anything waits
    // on it, after closing any group the failure left open.
    transport_->abandon();
    abort();
    throw;
  }
}

void DeviceCollectives::abort() noexcept {
  if (nccl_ == nullptr) return;
  if (before_abort_) before_abort_();
  ncclCommAbort(nccl_);
  nccl_ = nullptr;
}

}  // namespace commscope
