#include "osu/osu_pt2pt.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <vector>

#include "cases.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "osu/osu_device.hpp"
#include "watchdog.hpp"

// The MPI return code checked without a call on the fast path (the loops time single calls).
#define OSU_MPI(call)                                                                                   \
  do {                                                                                                  \
    if (const int osu_rc = (call); osu_rc != MPI_SUCCESS) check_mpi(osu_rc, #call, __FILE__, __LINE__); \
  } while (0)

namespace commscope::bench {

namespace {

constexpr int kData = 100, kReply = 101, kBack = 10;  // tags, as OSU's

void* host_alloc(std::size_t bytes) {
  const std::size_t page = 4096, rounded = (std::max<std::size_t>(bytes, 1) + page - 1) / page * page;
  void* p = std::aligned_alloc(page, rounded);
  if (!p) throw std::bad_alloc();
  return p;
}

// The single iterations' times (seconds) of one size.
struct Times {
  double sum = 0, shortest = std::numeric_limits<double>::infinity(), longest = 0;
  void add(double dt) {
    sum += dt;
    shortest = std::min(shortest, dt);
    longest = std::max(longest, dt);
  }
};

struct Loop {
  const OsuBuffers& b;
  int count;  // elements per message
  MPI_Datatype type;
  int iters, skip, window;
  MPI_Comm comm;
  Watchdog& dog;
  // -c: the pattern's type, the untimed repeats before each checked exchange; the elements this
  // rank received wrong.
  bool validate;
  OsuType otype;
  int repeats;
  bool corrupt;
  long long* errors;

  // -c: this iteration's pattern in the send buffer (on the ranks that send), then a barrier of
  // all ranks, as OSU sets the buffers before each checked iteration.
  void start_checked(int i, bool sends) const {
    if (!validate) return;
    if (sends) osu_fill_pattern(b.send(), otype, static_cast<std::size_t>(count), i);
    OSU_MPI(MPI_Barrier(comm));
  }
  void check_received(int i, bool receives) const {
    if (!validate || !receives || count == 0) return;
    if (corrupt) static_cast<unsigned char*>(b.recv())[0] ^= 0x40;
    *errors += static_cast<long long>(osu_count_wrong(b.recv(), otype, static_cast<std::size_t>(count), i));
  }
};

Times latency_loop(const Loop& l, int rank) {
  Times t;
  OSU_MPI(MPI_Barrier(l.comm));
  for (int i = 0; i < l.iters + l.skip; ++i) {
    l.start_checked(i, rank <= 1);
    for (int rep = 0; rep <= l.repeats; ++rep) {
      if (rank == 0) {
        const bool timed = i >= l.skip && rep == l.repeats;
        const double start = timed ? MPI_Wtime() : 0;
        OSU_MPI(MPI_Send(l.b.send(), l.count, l.type, 1, 1, l.comm));
        OSU_MPI(MPI_Recv(l.b.recv(), l.count, l.type, 1, 1, l.comm, MPI_STATUS_IGNORE));
        if (timed) t.add(MPI_Wtime() - start);
      } else if (rank == 1) {
        OSU_MPI(MPI_Recv(l.b.recv(), l.count, l.type, 0, 1, l.comm, MPI_STATUS_IGNORE));
        OSU_MPI(MPI_Send(l.b.send(), l.count, l.type, 0, 1, l.comm));
      }
    }
    l.check_received(i, rank <= 1);
    l.dog.progress(i);
  }
  return t;
}

// One window from the sender to its receiver (bw, mbw_mr): its time when `timed` (the clock is
// read only then, on the sender, as OSU reads it).
double window_once(const Loop& l, bool sender, bool timed, int peer, std::vector<MPI_Request>& req) {
  const double start = timed ? MPI_Wtime() : 0;
  for (int j = 0; j < l.window; ++j) {
    if (sender)
      OSU_MPI(MPI_Isend(l.b.send(), l.count, l.type, peer, kData, l.comm, &req[j]));
    else
      OSU_MPI(MPI_Irecv(l.b.recv(), l.count, l.type, peer, kData, l.comm, &req[j]));
  }
  OSU_MPI(MPI_Waitall(l.window, req.data(), MPI_STATUSES_IGNORE));
  if (sender)
    OSU_MPI(MPI_Recv(l.b.recv(), 1, MPI_CHAR, peer, kReply, l.comm, MPI_STATUS_IGNORE));
  else
    OSU_MPI(MPI_Send(l.b.send(), 1, MPI_CHAR, peer, kReply, l.comm));
  return timed ? MPI_Wtime() - start : 0;
}

// bw (pairs 1) and mbw_mr: ranks 0..pairs-1 send to rank + pairs.
Times window_loop(const Loop& l, int rank, int pairs, bool barrier_each) {
  Times t;
  std::vector<MPI_Request> req(static_cast<std::size_t>(l.window));
  const bool sender = rank < pairs, receiver = !sender && rank < 2 * pairs;
  const int peer = sender ? rank + pairs : rank - pairs;
  OSU_MPI(MPI_Barrier(l.comm));
  for (int i = 0; i < l.iters + l.skip; ++i) {
    if (barrier_each) {
      OSU_MPI(MPI_Barrier(l.comm));
      OSU_MPI(MPI_Barrier(l.comm));
    }
    l.start_checked(i, sender);
    if (sender || receiver) {
      for (int rep = 0; rep <= l.repeats; ++rep) {
        const bool timed = sender && i >= l.skip && rep == l.repeats;
        const double dt = window_once(l, sender, timed, peer, req);
        if (timed) t.add(dt);
      }
    }
    l.check_received(i, receiver);
    l.dog.progress(i);
  }
  return t;
}

Times bidirectional_loop(const Loop& l, int rank) {
  Times t;
  std::vector<MPI_Request> sends(static_cast<std::size_t>(l.window)), recvs(sends.size());
  const int peer = 1 - rank;
  OSU_MPI(MPI_Barrier(l.comm));
  for (int i = 0; i < l.iters + l.skip; ++i) {
    l.start_checked(i, rank <= 1);
    for (int rep = 0; rank <= 1 && rep <= l.repeats; ++rep) {
      // Each side receives on the tag the other sends with.
      const int in = rank == 0 ? kBack : kData, out = rank == 0 ? kData : kBack;
      const bool timed = rank == 0 && i >= l.skip && rep == l.repeats;
      const double start = timed ? MPI_Wtime() : 0;
      for (int j = 0; j < l.window; ++j) OSU_MPI(MPI_Irecv(l.b.recv(), l.count, l.type, peer, in, l.comm, &recvs[j]));
      for (int j = 0; j < l.window; ++j) OSU_MPI(MPI_Isend(l.b.send(), l.count, l.type, peer, out, l.comm, &sends[j]));
      OSU_MPI(MPI_Waitall(l.window, (rank == 0 ? sends : recvs).data(), MPI_STATUSES_IGNORE));
      OSU_MPI(MPI_Waitall(l.window, (rank == 0 ? recvs : sends).data(), MPI_STATUSES_IGNORE));
      if (timed) t.add(MPI_Wtime() - start);
    }
    l.check_received(i, rank <= 1);
    l.dog.progress(i);
  }
  return t;
}

// The pattern's element k of iteration i: exact in each type (float: integers below 2^16).
template <class T>
T pattern(std::size_t k, int i) {
  if constexpr (std::is_same_v<T, signed char>)
    return static_cast<signed char>((k + 3 * static_cast<std::size_t>(i)) % 100 + 1);
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(k * 7 + static_cast<std::size_t>(i)) & 0x7fffffffu);
  else
    return static_cast<float>((k + static_cast<std::size_t>(i)) % 65536);
}

template <class T>
void fill_as(void* buf, std::size_t count, int i) {
  T* p = static_cast<T*>(buf);
  for (std::size_t k = 0; k < count; ++k) p[k] = pattern<T>(k, i);
}

template <class T>
std::size_t wrong_as(const void* buf, std::size_t count, int i) {
  const T* p = static_cast<const T*>(buf);
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < count; ++k) wrong += p[k] != pattern<T>(k, i);
  return wrong;
}

}  // namespace

OsuBuffers::OsuBuffers(std::size_t bytes, bool device) : device_(device) {
  if (device) {
    send_ = osu_device_alloc(bytes);
    recv_ = osu_device_alloc(bytes);
  } else {
    send_ = host_alloc(bytes);
    recv_ = host_alloc(bytes);
  }
}

OsuBuffers::~OsuBuffers() {
  if (device_) {
    osu_device_free(send_);
    osu_device_free(recv_);
  } else {
    std::free(send_);
    std::free(recv_);
  }
}

void OsuBuffers::fill(std::size_t bytes) {
  if (device_) {
    osu_device_fill(send_, 'a', bytes);
    osu_device_fill(recv_, 'b', bytes);
  } else {
    std::memset(send_, 'a', bytes);
    std::memset(recv_, 'b', bytes);
  }
}

MPI_Datatype mpi_type(OsuType t) {
  switch (t) {
    case OsuType::mpi_int:
      return MPI_INT;
    case OsuType::mpi_float:
      return MPI_FLOAT;
    default:
      return MPI_CHAR;
  }
}

void osu_fill_pattern(void* buf, OsuType t, std::size_t count, int iteration) {
  switch (t) {
    case OsuType::mpi_char:
      return fill_as<signed char>(buf, count, iteration);
    case OsuType::mpi_int:
      return fill_as<std::int32_t>(buf, count, iteration);
    case OsuType::mpi_float:
      return fill_as<float>(buf, count, iteration);
  }
}

std::size_t osu_count_wrong(const void* buf, OsuType t, std::size_t count, int iteration) {
  switch (t) {
    case OsuType::mpi_char:
      return wrong_as<signed char>(buf, count, iteration);
    case OsuType::mpi_int:
      return wrong_as<std::int32_t>(buf, count, iteration);
    case OsuType::mpi_float:
      return wrong_as<float>(buf, count, iteration);
  }
  return count;
}

OsuLine osu_measure(const OsuOptions& o, OsuType type, int pairs, std::size_t bytes, OsuBuffers& buffers, MPI_Comm comm,
                    Watchdog& dog) {
  int rank = 0;
  OSU_MPI(MPI_Comm_rank(comm, &rank));
  buffers.fill(bytes);
  long long errors = 0;
  const Loop l{buffers,
               static_cast<int>(bytes / type_size(type)),
               mpi_type(type),
               o.iterations(bytes),
               o.warmup(bytes),
               o.window,
               comm,
               dog,
               o.validate,
               type,
               o.validation_warmup,
               o.corrupt,
               &errors};
  Case what;  // for the watchdog's message
  what.coll = Collective::sendrecv;
  what.algo = std::string(to_string(o.test));
  what.type = library_type(type);
  what.bytes = what.requested_bytes = bytes;
  WatchScope watch(dog, &what, what.algo.c_str());
  Times t;
  switch (o.test) {
    case OsuTest::latency:
      t = latency_loop(l, rank);
      break;
    case OsuTest::bw:
      t = window_loop(l, rank, 1, false);
      break;
    case OsuTest::bibw:
      t = bidirectional_loop(l, rank);
      break;
    case OsuTest::mbw_mr:
      t = window_loop(l, rank, pairs, true);
      break;
    default:  // the collectives: osu_coll.cpp
      throw InvalidArgument(std::string(to_string(o.test)) + " is not a point-to-point test");
  }
  OsuLine line;
  line.bytes = bytes;
  line.iterations = l.iters;
  if (o.validate) OSU_MPI(MPI_Allreduce(&errors, &line.errors, 1, MPI_LONG_LONG, MPI_SUM, comm));
  // mbw_mr: the senders' mean time (OSU sums over the senders and divides by the pairs).
  double sum = t.sum;
  if (o.test == OsuTest::mbw_mr) OSU_MPI(MPI_Reduce(&t.sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm));
  if (rank != 0) return line;
  if (o.test == OsuTest::latency) {
    line.value = sum * 1e6 / (2.0 * l.iters);
    line.min = t.shortest * 1e6 / 2;
    line.max = t.longest * 1e6 / 2;
    return line;
  }
  // MB moved per iteration: one window each way (bibw: both), of every pair (mbw_mr).
  const double mb = static_cast<double>(bytes) / 1e6 * l.window * (o.test == OsuTest::bibw ? 2 : pairs);
  const double mean = o.test == OsuTest::mbw_mr ? sum / pairs : sum;
  line.value = mb * l.iters / mean;
  line.min = mb / t.longest;
  line.max = mb / t.shortest;
  if (bytes > 0) line.messages_per_s = 1e6 * line.value / static_cast<double>(bytes);
  return line;
}

}  // namespace commscope::bench
