// The node segment of the `shm` algorithm (internal header): one MPI shared-memory window per
// communicator whose ranks all share a node, with a region per rank holding three sequence-number
// flags and two chunk slots. The shm algorithm makes it on its first call and keeps it on the
// MpiTransport as its AlgorithmState (freed with the transport, before the transport's
// communicator); docs/collectives.md describes the layout and the flag protocol.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "commscope/collectives/transport.hpp"

namespace commscope::detail {

// One slot: the most of a rank's data that is in the segment at once. Arrays larger than a
// slot go through in chunks of at most this size, kShmSlotsPerRank slots per rank in turn, so
// that a fast rank fills the next slots while slower ones still read the last. The segment is
// kShmRegionBytes per rank whatever the array (printed by the bench, in docs/collectives.md).
inline constexpr std::size_t kShmSlotBytes = std::size_t{512} << 10;
inline constexpr int kShmSlotsPerRank = 4;

// A rank's flags: the last step (a count of chunks, continued across calls) for which it has
//   ready:   copied its chunk into its slot;
//   reduced: published its reduced slice of the chunk in its slot (two-shot only);
//   done:    finished reading every peer's slot, which may then be overwritten.
// Only the owner stores (release); peers load (acquire). Each flag has its own 128-byte line
// (two lines: adjacent-line prefetch) so that one rank's stores do not bounce a line others poll.
//   inline_slots[s mod kShmInlineSlots]: steps that put at most kShmInlineBytes per rank carry
//            them here, beside a copy of `ready` in the same line, so a peer fetches flag and
//            data in one transfer between cores instead of two (the slot stays unused). There
//            are more of them than slots: a rank may run that many small steps ahead.
inline constexpr std::size_t kShmInlineBytes = 120;
inline constexpr int kShmInlineSlots = 16;
struct ShmInline {
  alignas(128) std::atomic<std::uint64_t> ready{0};
  std::byte data[kShmInlineBytes];
};
// Direct steps (large arrays, where the kernel can copy between address spaces): the owner
// writes its process id and the address of the call's input here before storing `ready`,
// and peers read the buffers themselves (process_vm_readv) after loading it. Calls that choose
// between the slots and the direct path (ShmOptions::adapt_bytes) also publish the owner's
// estimates of both paths' call times (ns, 0 = none yet) for the call's size class; rank 0
// decides from them and stores `decided` = 2 x step + (1 for direct, 0 for the slots).
struct ShmDirect {
  alignas(128) std::uint64_t pid = 0;
  std::uint64_t send = 0;
  std::uint64_t recv = 0;  // the call's output (allreduce's direct form reads the reduced slices there)
  std::uint64_t slot_ns = 0;
  std::uint64_t direct_ns = 0;
  alignas(128) std::atomic<std::uint64_t> decided{0};
};

// One rank's record of the two paths for one collective and size class (adaptive calls).
struct ShmPathTimes {
  std::uint64_t slot_ns = 0, direct_ns = 0;  // running estimates (ns): see shm_record_call
  std::uint32_t slot_calls = 0, direct_calls = 0;
};
// Every kShmReexploreCalls-th call of a size class takes the path that lost, so an estimate
// never goes stale while the machine changes (this costs at most 1/32 of the calls).
inline constexpr std::uint64_t kShmReexploreCalls = 32;
// Each path's calls before the first choice (alternating, direct first).
inline constexpr std::uint32_t kShmExploreCalls = 3;
// The path of the next call (rank 0's record; `slowest_*`: the maxima over the ranks' published
// estimates): each path kShmExploreCalls times first (alternating, direct first), then the one
// whose slowest rank's estimate is lower, except the re-exploring calls.
bool shm_choose_direct(const ShmPathTimes& mine, std::uint64_t slowest_slot_ns, std::uint64_t slowest_direct_ns);
// Adds a call's time to the estimate of the path it took: the second call replaces the first,
// then a faster call is taken whole and a slower one by a quarter (min(new, 3/4 old + 1/4 new)).
void shm_record_call(ShmPathTimes& t, bool direct, std::uint64_t ns);
struct ShmFlags {
  alignas(128) std::atomic<std::uint64_t> ready{0};
  alignas(128) std::atomic<std::uint64_t> reduced{0};
  alignas(128) std::atomic<std::uint64_t> done{0};
  ShmInline inline_slots[kShmInlineSlots];
  ShmDirect direct;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shm flags must be lock-free to work across processes");

class ShmSegment final : public AlgorithmState {
 public:
  // Collective over `comm` (every rank must call it): splits off the ranks sharing this node
  // and, when that is all of `comm`, allocates the window. Otherwise no window is made and
  // single_node() is false on every rank.
  explicit ShmSegment(MPI_Comm comm);
  ~ShmSegment() override;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  bool single_node() const { return win_ != MPI_WIN_NULL; }
  // Whether every rank of the node may read every other's memory with process_vm_readv
  // (Linux cross-memory attach; tried once at set-up, the same answer on every rank).
  bool direct() const { return direct_; }
  int node_size() const { return node_size_; }  // ranks of `comm` on this rank's node

  ShmFlags& flags(int rank) const { return *flags_[static_cast<std::size_t>(rank)]; }
  // Slot `which` (any step number: taken modulo the slot count) of a rank's region.
  std::byte* slot(int rank, std::uint64_t which) const {
    return slots_[static_cast<std::size_t>(rank)] + static_cast<std::size_t>(which % kShmSlotsPerRank) * kShmSlotBytes;
  }
  // The step number of the next chunk; every rank runs the same steps in the same order.
  std::uint64_t next_step() { return ++step_; }
  // The lowest `done` step of the peers when this rank last read them (they only grow).
  std::uint64_t peers_done() const { return peers_done_; }
  void set_peers_done(std::uint64_t s) { peers_done_ = s; }

  // Adaptive calls: this rank's record per collective and size class, and the step of the last
  // call that published estimates (a rank overwrites them only once every peer is done with it).
  ShmPathTimes& path_times(std::uint32_t key) { return path_times_[key]; }
  std::uint64_t last_announce() const { return last_announce_; }
  void set_last_announce(std::uint64_t s) { last_announce_ = s; }

  // After a timeout the ranks are at different steps and cannot agree again without
  // communication: the segment refuses further use (a new Communicator makes a new one).
  void mark_broken() { broken_ = true; }
  bool broken() const { return broken_; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int node_size_ = 1;
  std::vector<ShmFlags*> flags_;
  std::vector<std::byte*> slots_;
  std::uint64_t step_ = 0;
  std::uint64_t peers_done_ = 0;
  std::uint64_t last_announce_ = 0;
  std::unordered_map<std::uint32_t, ShmPathTimes> path_times_;
  bool broken_ = false;
  bool direct_ = false;
};

// Copies `bytes` from address `remote` of process `pid` to `local` (process_vm_readv, in as many
// calls as it takes); false with errno set when the kernel refuses.
bool read_process(std::uint64_t pid, std::uint64_t remote, void* local, std::size_t bytes);

}  // namespace commscope::detail
