#include "shm_segment.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/shm_options.hpp"

namespace commscope::detail {

// Flags first, slots from the next page on: the slots start page-aligned and the flags of
// one rank never share a page with another rank's data.
constexpr std::size_t kHeaderBytes = 4096;
namespace {
static_assert(sizeof(ShmFlags) <= kHeaderBytes);
// MPI aligns regions to pages in practice but promises nothing: kAlign spare bytes let every
// rank round its region's start up to the flags' alignment. Mappings are page-aligned, so the
// rounding is the same in every process's view of a region.
constexpr std::size_t kAlign = alignof(ShmFlags);
constexpr std::size_t kRegionBytes = kAlign + kHeaderBytes + kShmSlotsPerRank * kShmSlotBytes;

std::byte* aligned(void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return static_cast<std::byte*>(p) + ((kAlign - a % kAlign) % kAlign);
}

}  // namespace

ShmSegment::ShmSegment(MPI_Comm comm) {
  int rank = 0, size = 1;
  COMMSCOPE_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMSCOPE_MPI_CHECK(MPI_Comm_size(comm, &size));
  // Key = rank: on one node, node ranks equal the communicator's ranks.
  COMMSCOPE_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_));
  COMMSCOPE_MPI_CHECK(MPI_Comm_size(node_, &node_size_));
  // Every rank sees the same answer (if one node lacks a rank, every node does), so all
  // return here together or none does.
  if (node_size_ != size) {
    MPI_Comm_free(&node_);
    return;
  }
  // Non-contiguous: each rank's region may start on its own pages, which its owner touches
  // first, so the region lands in the owner's NUMA domain.
  MPI_Info info = MPI_INFO_NULL;
  COMMSCOPE_MPI_CHECK(MPI_Info_create(&info));
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* base = nullptr;
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(kRegionBytes), 1, info, node_, &base, &win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    win_ = MPI_WIN_NULL;
    MPI_Comm_free(&node_);
    COMMSCOPE_MPI_CHECK(rc);
  }
  COMMSCOPE_MPI_CHECK(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN));
  std::byte* own = aligned(base);
  new (own) ShmFlags{};
  std::memset(own + kHeaderBytes, 0, kShmSlotsPerRank * kShmSlotBytes);  // first touch by the owner
  flags_.resize(static_cast<std::size_t>(size));
  slots_.resize(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q) {
    MPI_Aint bytes = 0;
    int disp = 0;
    void* p = nullptr;
    COMMSCOPE_MPI_CHECK(MPI_Win_shared_query(win_, q, &bytes, &disp, &p));
    std::byte* b = aligned(p);
    flags_[static_cast<std::size_t>(q)] = std::launder(reinterpret_cast<ShmFlags*>(b));
    slots_[static_cast<std::size_t>(q)] = b + kHeaderBytes;
  }
  // No rank may poll a peer's flags before the peer has constructed them.
  COMMSCOPE_MPI_CHECK(MPI_Barrier(node_));
  // Direct steps need the kernel to let each rank read its peers' memory (same user, and no
  // ptrace restriction such as Yama's or a container's seccomp policy in the way): each rank
  // reads its right neighbour's pid from the neighbour's own address of it, and all agree.
  flags(rank).direct.pid = static_cast<std::uint64_t>(getpid());
  flags(rank).direct.send = reinterpret_cast<std::uintptr_t>(&flags(rank).direct.pid);
  COMMSCOPE_MPI_CHECK(MPI_Barrier(node_));
  const ShmDirect& right = flags((rank + 1) % size).direct;
  std::uint64_t seen = 0;
  int ok = size > 1 && read_process(right.pid, right.send, &seen, sizeof seen) && seen == right.pid;
  COMMSCOPE_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node_));
  direct_ = ok != 0;
}

bool read_process(std::uint64_t pid, std::uint64_t remote, void* local, std::size_t bytes) {
  auto* dst = static_cast<std::byte*>(local);
  while (bytes > 0) {
    iovec to{dst, bytes}, from{reinterpret_cast<void*>(static_cast<std::uintptr_t>(remote)), bytes};
    const ssize_t n = process_vm_readv(static_cast<pid_t>(pid), &to, 1, &from, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EFAULT;
      return false;
    }
    dst += n, remote += static_cast<std::uint64_t>(n), bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

bool shm_choose_direct(const ShmPathTimes& mine, std::uint64_t slowest_slot_ns, std::uint64_t slowest_direct_ns) {
  if (mine.direct_calls < kShmExploreCalls || mine.slot_calls < kShmExploreCalls)
    return mine.direct_calls <= mine.slot_calls;
  const bool direct_wins = slowest_direct_ns < slowest_slot_ns;
  const std::uint64_t calls = std::uint64_t{mine.slot_calls} + mine.direct_calls;
  return calls % kShmReexploreCalls == 0 ? !direct_wins : direct_wins;
}

void shm_record_call(ShmPathTimes& t, bool direct, std::uint64_t ns) {
  std::uint64_t& est = direct ? t.direct_ns : t.slot_ns;
  std::uint32_t& calls = direct ? t.direct_calls : t.slot_calls;
  // The second call replaces the first: a path's first calls pay for first touches (pages mapped
  // for the kernel's copy, lines not yet shared) that later calls do not. Then a faster call is
  // taken at once and a slower one a quarter: the estimate is what the path can do now, so that
  // a path whose early calls were slow is not kept from winning for 32 calls.
  est = calls < 2 ? ns : std::min(ns, (3 * est + ns) / 4);
  ++calls;
}

ShmSegment::~ShmSegment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);  // collective: communicators are destroyed together
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

}  // namespace commscope::detail

namespace commscope {
ShmSegmentShape shm_segment_shape() {
  return {detail::kShmSlotBytes, detail::kShmSlotsPerRank, detail::kHeaderBytes};
}

std::size_t shm_two_shot_switch(const ShmOptions& options, int node_ranks, bool oversubscribed) {
  if (options.two_shot_bytes) return *options.two_shot_bytes;
  if (node_ranks <= 2 || oversubscribed) return std::size_t{64} << 10;
  return node_ranks == 3 ? std::size_t{4} << 10 : std::size_t{2} << 10;
}
}  // namespace commscope
