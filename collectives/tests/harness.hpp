// Shared by the MPI correctness tests: run one collective case with check data, in or out of
// place, and count wrong elements over all ranks.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>

#include "commscope/collectives/check_data.hpp"
#include "commscope/collectives/communicator.hpp"

namespace commscope::testing {

struct Case {
  Collective coll = Collective::allreduce;
  const Algorithm* algo = nullptr;
  DataType type = DataType::f32;
  ReduceOp op = ReduceOp::sum;
  std::size_t count = 0;
  int root = 0;
  bool in_place = false;

  std::string describe() const {
    std::ostringstream os;
    os << to_string(coll) << " " << algo->name() << " " << to_string(type);
    if (is_reducing(coll)) os << " " << to_string(op);
    if (is_rooted(coll)) os << " root " << root;
    os << " count " << count << (in_place ? " in-place" : " out-of-place");
    return os.str();
  }
};

// Growable uninitialised buffers, reused across cases.
class Buffer {
 public:
  std::byte* get(std::size_t bytes) {
    if (bytes > size_ || !data_) {
      data_ = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(bytes, 64));
      size_ = bytes;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
};

struct Outcome {
  std::size_t wrong = 0;      // summed over ranks
  std::string first_failure;  // this rank's first problem, empty if none
};

// One rank's input for a case, generated once and shared by every algorithm that runs the
// same case; and, once one algorithm's output has passed the full check, that output: exact
// check data makes every algorithm's result bit-identical, so later ones compare with memcmp.
// `send_holds_input`: the send buffer at that address was last found equal to the input by an
// out-of-place case's unchanged-send check, and nothing has written it since, so the next
// out-of-place case of the same input need not copy the input in again.
struct SharedCase {
  check::Spec spec;
  bool valid = false;
  bool have_expected = false;
  Buffer input, expected;
  const std::byte* send_holds_input = nullptr;
};

inline bool same_spec(const check::Spec& a, const check::Spec& b) {
  return a.coll == b.coll && a.type == b.type && a.op == b.op && a.count == b.count && a.root == b.root &&
         a.nranks == b.nranks && a.seed == b.seed;
}

// Run `c` on `comm` with check data from `seed`; every rank returns the same `wrong`.
// Out of place, the send buffer must come back unchanged.
inline Outcome run_case(Communicator& comm, const Case& c, std::uint64_t seed, Buffer& send_buf, Buffer& recv_buf,
                        SharedCase& shared) {
  const int p = comm.size(), r = comm.rank();
  const check::Spec spec{c.coll, c.type, c.op, c.count, c.root, p, seed};
  const std::size_t es = type_size(c.type);
  const std::size_t send_bytes = check::send_elements(spec) * es, recv_bytes = check::recv_elements(spec) * es;
  const bool has_input = !((c.coll == Collective::broadcast || c.coll == Collective::scatter) && r != c.root);
  const bool has_output = !((c.coll == Collective::reduce || c.coll == Collective::gather) && r != c.root);
  if (!shared.valid || !same_spec(shared.spec, spec)) {
    shared.spec = spec;
    shared.valid = true;
    shared.have_expected = false;
    shared.send_holds_input = nullptr;
    if (has_input) check::fill_send(spec, r, shared.input.get(send_bytes));
  }
  std::byte* recv = recv_buf.get(recv_bytes);
  std::memset(recv, 0xA5, recv_bytes);  // sentinel: an element never written cannot pass
  std::byte* send = nullptr;
  if (c.in_place) {
    switch (c.coll) {
      case Collective::allgather:
      case Collective::gather:
        send = recv + c.count * es * static_cast<std::size_t>(r);
        break;
      case Collective::reducescatter:
      case Collective::scatter:
        send = send_buf.get(send_bytes);
        recv = send + c.count * es * static_cast<std::size_t>(r);
        break;
      default:
        send = recv;
    }
  } else {
    send = send_buf.get(send_bytes);
  }
  const bool copy_input = has_input && (c.in_place || send != shared.send_holds_input);
  shared.send_holds_input = nullptr;  // until this case's unchanged-send check passes
  if (copy_input) std::memcpy(send, shared.input.get(send_bytes), send_bytes);
  CollArgs args{c.coll, send, recv, c.count, c.type, c.op, c.root};
  const check::AlltoallvLayout vlayout = check::peer_layout(spec, r);
  vlayout.apply(args);
  // Out of place, ranks without input or output pass null, which the library must accept.
  if (!c.in_place && !has_input) args.send = nullptr;
  if (!c.in_place && !has_output) args.recv = nullptr;

  Outcome out;
  std::size_t wrong = 0;
  try {
    comm.run(args, *c.algo);
    const std::size_t out_bytes = has_output ? check::recv_elements(spec) * es : 0;
    const bool known_good = shared.have_expected && std::memcmp(recv, shared.expected.get(out_bytes), out_bytes) == 0;
    if (!known_good) {
      const check::Result res = check::check_recv(spec, r, recv);
      wrong = res.wrong;
      if (res.wrong) {
        std::ostringstream os;
        os << "rank " << r << ": " << res.wrong << " wrong, first at " << res.first_wrong << " expected "
           << res.expected << " got " << res.got;
        out.first_failure = os.str();
      } else if (!shared.have_expected) {
        std::memcpy(shared.expected.get(out_bytes), recv, out_bytes);
        shared.have_expected = true;
      }
    }
    if (!c.in_place && has_input) {
      if (std::memcmp(shared.input.get(send_bytes), send, send_bytes) != 0) {
        wrong += 1;
        out.first_failure += " rank " + std::to_string(r) + ": send buffer modified";
      } else {
        shared.send_holds_input = send;
      }
    }
  } catch (const std::exception& e) {
    wrong = 1;
    out.first_failure = "rank " + std::to_string(r) + ": exception: " + e.what();
  }
  unsigned long long local = wrong, total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm.mpi_comm());
  out.wrong = total;
  return out;
}

// Rank 0 prints `line`; every rank's own failure detail is printed by that rank.
inline void report(const Communicator& comm, const Case& c, const Outcome& o, const std::string& prefix = "") {
  if (!o.first_failure.empty())
    std::fprintf(stderr, "FAIL %s%s: %s\n", prefix.c_str(), c.describe().c_str(), o.first_failure.c_str());
  if (comm.rank() == 0 && o.wrong)
    std::fprintf(stderr, "FAIL %s%s: %zu wrong over all ranks\n", prefix.c_str(), c.describe().c_str(), o.wrong);
}

}  // namespace commscope::testing
