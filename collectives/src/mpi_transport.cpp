#include "commscope/collectives/mpi_transport.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/reduce.hpp"

namespace commscope {
namespace {

// A transfer goes as messages of at most these many bytes, all posted at once; both ends split
// identically (they agree on sizes and on the hosts) and MPI matches them in order. MPI counts are
// int: at most kMaxMessage. To a peer on another host at most kSegment: Open MPI's TCP transport
// keeps one connection a pair and queues its rendezvous reply to the peer behind the data it has
// queued for that peer, so a pair exchanging one large message each way moves one direction at a
// time for stretches. On 2 emulated hosts x 2 ranks at 1gbit, the exchanges of rhd's 16 MiB
// allreduce alone (no reductions) took 175-187 ms a call as one 4 MiB message a step across the
// link, 144-156 as 1 MiB messages (256 KiB: 145-155; the link allows 134), and the bench's rhd
// read 0.69-0.89 of its expectation before, 0.78-0.92 after (docs/verdicts.md). Within a host
// whole: shared memory's single copy of a 16 MiB message as 1 MiB messages took 1.08-1.15x as
// long (2 ranks, 64 MiB allreduces).
constexpr std::size_t kMaxMessage = std::size_t{1} << 30;
constexpr std::size_t kSegment = std::size_t{1} << 20;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The live transports, for silent_peers (a watchdog thread reads them).
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<const MpiTransport*>& registry() {
  static std::vector<const MpiTransport*> r;
  return r;
}

}  // namespace

void check_mpi(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::ostringstream os;
  os << "MPI error at " << file << ":" << line << ": " << call << ": "
     << std::string(text, static_cast<std::size_t>(len));
  throw TransportError(os.str());
}

MpiTransport::MpiTransport(MPI_Comm comm, double timeout_s) : timeout_s_(timeout_s) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw InvalidArgument("MPI is not initialised: create a commscope::MpiRuntime first");
  COMMSCOPE_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  COMMSCOPE_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  COMMSCOPE_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  COMMSCOPE_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  // Every rank's host, so that a timeout can say where the peer it waits on runs.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  COMMSCOPE_MPI_CHECK(MPI_Get_processor_name(name, &len));
  char mine[kHostChars] = {};
  std::memcpy(mine, name, std::min(static_cast<std::size_t>(std::max(len, 0)), kHostChars - 1));
  hosts_.resize(static_cast<std::size_t>(size_) * kHostChars);
  COMMSCOPE_MPI_CHECK(MPI_Allgather(mine, static_cast<int>(kHostChars), MPI_CHAR, hosts_.data(),
                                    static_cast<int>(kHostChars), MPI_CHAR, comm_));
  for (int i = 0; i < size_; ++i) segment_.push_back(host_of(i) == host_of(rank_) ? kMaxMessage : kSegment);
  // World ranks, so that silent_peers speaks of one numbering whatever the communicator.
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  COMMSCOPE_MPI_CHECK(MPI_Comm_group(comm_, &group));
  COMMSCOPE_MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  std::vector<int> ranks(static_cast<std::size_t>(size_));
  for (int i = 0; i < size_; ++i) ranks[static_cast<std::size_t>(i)] = i;
  world_rank_.resize(ranks.size());
  const int rc = MPI_Group_translate_ranks(group, size_, ranks.data(), world, world_rank_.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  COMMSCOPE_MPI_CHECK(rc);
  heard_ns_ = std::make_unique<std::atomic<std::int64_t>[]>(static_cast<std::size_t>(size_));
  for (int i = 0; i < size_; ++i) heard_ns_[static_cast<std::size_t>(i)].store(0, std::memory_order_relaxed);
  std::lock_guard lock(registry_mutex());
  registry().push_back(this);
}

std::string MpiTransport::silent_peers(double older_than_s, std::size_t limit) {
  struct Peer {
    std::int64_t heard_ns;
    std::string host;
  };
  std::map<int, Peer> last;  // by world rank: the latest any communicator heard it
  {
    std::lock_guard lock(registry_mutex());
    for (const MpiTransport* t : registry())
      for (int i = 0; i < t->size_; ++i) {
        const std::int64_t ns = t->heard_ns_[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
        if (ns == 0) continue;
        auto [it, fresh] =
            last.try_emplace(t->world_rank_[static_cast<std::size_t>(i)], Peer{ns, std::string(t->host_of(i))});
        if (!fresh && ns > it->second.heard_ns) it->second.heard_ns = ns;
      }
  }
  const std::int64_t now = steady_ns();
  std::vector<std::pair<std::int64_t, int>> silent;  // (silence ns, world rank)
  for (const auto& [rank, p] : last)
    if (static_cast<double>(now - p.heard_ns) * 1e-9 > older_than_s) silent.emplace_back(now - p.heard_ns, rank);
  std::sort(silent.rbegin(), silent.rend());
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  for (std::size_t i = 0; i < silent.size() && i < limit; ++i) {
    if (i > 0) os << "; ";
    os << "rank " << silent[i].second << " on " << last[silent[i].second].host << " (last heard "
       << static_cast<double>(silent[i].first) * 1e-9 << " s ago)";
  }
  if (silent.size() > limit) os << "; and " << silent.size() - limit << " more";
  return os.str();
}

std::string_view MpiTransport::host_of(int peer) const {
  if (peer < 0 || peer >= size_) return "?";
  return {hosts_.data() + static_cast<std::size_t>(peer) * kHostChars};
}

MpiTransport::~MpiTransport() {
  {
    std::lock_guard lock(registry_mutex());
    auto& r = registry();
    r.erase(std::remove(r.begin(), r.end(), this), r.end());
  }
  // Sub-transports, windows and node communicators go before the communicator they came from.
  release_algorithm_states();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiTransport::post(bool is_send, void* buf, std::size_t bytes, int peer) {
  auto* p = static_cast<std::byte*>(buf);
  const std::size_t post = pending_.empty() ? 0 : pending_.back().post + 1;
  const std::size_t segment = segment_[static_cast<std::size_t>(peer)];
  for (std::size_t off = 0; off < bytes; off += segment) {
    const int n = static_cast<int>(std::min(segment, bytes - off));
    MPI_Request req;
    if (is_send) {
      COMMSCOPE_MPI_CHECK(MPI_Isend(p + off, n, MPI_BYTE, peer, 0, comm_, &req));
    } else {
      COMMSCOPE_MPI_CHECK(MPI_Irecv(p + off, n, MPI_BYTE, peer, 0, comm_, &req));
    }
    requests_.push_back(req);
    pending_.push_back({peer, is_send, bytes, post});
  }
}

void MpiTransport::post_send(const void* buf, std::size_t bytes, int peer) {
  post(true, const_cast<void*>(buf), bytes, peer);  // MPI_Isend only reads it
}

void MpiTransport::post_recv(void* buf, std::size_t bytes, int peer) {
  post(false, buf, bytes, peer);
}

void MpiTransport::wait() {
  if (requests_.empty()) return;
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const int n = static_cast<int>(requests_.size());
  int done = 0;
  // Poll instead of MPI_Waitall so that a dead or hung peer ends in a TimeoutError that
  // names the operation, rather than a hang. Open MPI's Waitall polls the same progress engine.
  for (unsigned spins = 0;; ++spins) {
    COMMSCOPE_MPI_CHECK(MPI_Testall(n, requests_.data(), &done, MPI_STATUSES_IGNORE));
    if (done) {
      const std::int64_t now = steady_ns();
      for (const Pending& p : pending_)
        if (!p.is_send) heard_ns_[static_cast<std::size_t>(p.peer)].store(now, std::memory_order_relaxed);
      break;
    }
    if (yield_when_idle_ && spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
    if (timeout_s_ > 0 && (spins & 255u) == 0 &&
        std::chrono::duration<double>(clock::now() - start).count() > timeout_s_) {
      std::ostringstream os;
      os << "timeout after " << timeout_s_ << " s on rank " << rank_ << " in " << context().describe()
         << ": still waiting on";
      for (std::size_t i = 0, named = SIZE_MAX; i < requests_.size(); ++i) {
        if (requests_[i] == MPI_REQUEST_NULL) continue;
        if (pending_[i].post != named)  // a transfer once, however many of its messages are pending
          os << (pending_[i].is_send ? " send to " : " recv from ") << pending_[i].peer << " on "
             << host_of(pending_[i].peer) << " (" << pending_[i].bytes << " B)";
        named = pending_[i].post;
        // Abandon the request so that it cannot match a later message of this communicator.
        if (!pending_[i].is_send) MPI_Cancel(&requests_[i]);
        MPI_Request_free(&requests_[i]);
      }
      requests_.clear();
      pending_.clear();
      throw TimeoutError(os.str());
    }
  }
  requests_.clear();
  pending_.clear();
}

void MpiTransport::reduce(void* dst, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op) {
  reduce_host(dst, a, b, count, type, op);
}

void MpiTransport::copy(void* dst, const void* src, std::size_t bytes) {
  if (dst != src && bytes > 0) std::memcpy(dst, src, bytes);
}

void MpiTransport::divide(void* buf, std::size_t count, DataType type, int divisor) {
  divide_host(buf, count, type, divisor);
}

void* MpiTransport::scratch(int slot, std::size_t bytes) {
  if (slot < 0 || slot >= kScratchSlots)
    throw InvalidArgument("scratch slot " + std::to_string(slot) + " out of range");
  Scratch& s = scratch_[static_cast<std::size_t>(slot)];
  if (s.bytes < bytes || !s.data) {
    s.data = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(bytes, 64));
    s.bytes = bytes;
  }
  return s.data.get();
}

}  // namespace commscope
