// NCCL for the suite: a communicator bootstrapped over MPI, our types and operations in NCCL's
// names, and NCCL's own collectives launched for a CollArgs.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include "commscope/collectives/types.hpp"
#include "cuda_check.hpp"

namespace commscope {

class Communicator;
struct CollArgs;

// An NCCL communicator over comm's ranks (rank 0's unique id broadcast over MPI). Collective.
// cta_policy >= 0 sets ncclConfig_t::CTAPolicy (NCCL 2.27 on; InvalidArgument before).
ncclComm_t init_nccl(const Communicator& comm, int cta_policy = -1);
// NCCL's names for our types and operations (InvalidArgument where NCCL has none).
ncclDataType_t nccl_type(DataType t);
ncclRedOp_t nccl_op(ReduceOp op);
// Enqueues NCCL's own collective for `args` (CollArgs's counts and in-place conventions, which
// are NCCL's) on `stream`. alltoall, gather and scatter are NCCL's calls from 2.28 on, grouped
// ncclSend/ncclRecv before; sendrecv (the ring shift) and alltoallv are grouped
// ncclSend/ncclRecv, as nccl-tests runs them. alltoall and sendrecv are out of place only (NCCL
// has no in-place form: InvalidArgument). Does not wait.
void launch_nccl(const CollArgs& args, ncclComm_t comm, cudaStream_t stream);

}  // namespace commscope
