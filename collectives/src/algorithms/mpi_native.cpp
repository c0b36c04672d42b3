// The MPI library's own collectives (whatever algorithm the library selects). f16 and bf16
// have no MPI datatype: they travel as 2-byte contiguous types with user-defined reduction
// ops that call our kernels; avg is MPI_SUM followed by a local division.
#include <mpi.h>

#include <climits>
#include <mutex>
#include <span>
#include <vector>

#include "common.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/collectives/reduce.hpp"

namespace commscope {
namespace {

using detail::Buf;

// MPI user op: inout[i] = in[i] op inout[i], for our 16-bit types.
template <DataType T, ReduceOp Op>
void half_op(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce_host(inout, in, inout, static_cast<std::size_t>(*len), T, Op);
}

// Process-wide MPI handles for the 16-bit types; created on first use, released by MPI_Finalize.
struct HalfHandles {
  MPI_Datatype f16 = MPI_DATATYPE_NULL, bf16 = MPI_DATATYPE_NULL;
  MPI_Op ops[2][4] = {};  // [f16, bf16][sum, prod, min, max]
};

const HalfHandles& half_handles() {
  static HalfHandles h;
  static std::once_flag once;
  std::call_once(once, [] {
    COMMSCOPE_MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &h.f16));
    COMMSCOPE_MPI_CHECK(MPI_Type_commit(&h.f16));
    COMMSCOPE_MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &h.bf16));
    COMMSCOPE_MPI_CHECK(MPI_Type_commit(&h.bf16));
    MPI_User_function* fns[2][4] = {{half_op<DataType::f16, ReduceOp::sum>, half_op<DataType::f16, ReduceOp::prod>,
                                     half_op<DataType::f16, ReduceOp::min>, half_op<DataType::f16, ReduceOp::max>},
                                    {half_op<DataType::bf16, ReduceOp::sum>, half_op<DataType::bf16, ReduceOp::prod>,
                                     half_op<DataType::bf16, ReduceOp::min>, half_op<DataType::bf16, ReduceOp::max>}};
    for (int t = 0; t < 2; ++t)
      for (int o = 0; o < 4; ++o) COMMSCOPE_MPI_CHECK(MPI_Op_create(fns[t][o], 1, &h.ops[t][o]));
  });
  return h;
}

MPI_Datatype mpi_type(DataType t) {
  switch (t) {
    case DataType::f32:
      return MPI_FLOAT;
    case DataType::f64:
      return MPI_DOUBLE;
    case DataType::f16:
      return half_handles().f16;
    case DataType::bf16:
      return half_handles().bf16;
    case DataType::i32:
      return MPI_INT32_T;
    case DataType::i64:
      return MPI_INT64_T;
    case DataType::u8:
      return MPI_UINT8_T;
    case DataType::i8:
      return MPI_INT8_T;
    case DataType::u32:
      return MPI_UINT32_T;
    case DataType::u64:
      return MPI_UINT64_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(DataType t, ReduceOp op) {
  const int idx = op == ReduceOp::prod ? 1 : op == ReduceOp::min ? 2 : op == ReduceOp::max ? 3 : 0;
  if (t == DataType::f16 || t == DataType::bf16) return half_handles().ops[t == DataType::bf16][idx];
  constexpr MPI_Op builtin[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
  return builtin[idx];
}

// MPI counts are int. Element-wise collectives are cut into calls of at most this many
// elements; the others cannot be cut without changing the data layout, so they refuse.
constexpr std::size_t kMaxCount = std::size_t{1} << 30;

int checked_int(std::size_t n, Collective c) {
  if (n > static_cast<std::size_t>(INT_MAX)) {
    throw InvalidArgument("algorithm 'mpi': " + std::string(to_string(c)) + " of " + std::to_string(n) +
                          " elements exceeds the MPI library's int count limit; use ring, tree or rhd");
  }
  return static_cast<int>(n);
}

const void* send_or_in_place(const void* send, const void* recv) {
  return send == recv ? MPI_IN_PLACE : send;
}

void run_mpi(MpiTransport& t, const CollArgs& a) {
  MPI_Comm comm = t.comm();
  const MPI_Datatype dt = mpi_type(a.type);
  const MPI_Op op = mpi_op(a.type, a.op);
  const std::size_t es = type_size(a.type);
  const int p = t.size(), me = t.rank();
  Buf in = detail::cbuf(a.send, es), out{a.recv, es};
  switch (a.coll) {
    case Collective::allreduce:
      for (std::size_t off = 0; off < a.count; off += kMaxCount) {
        const int n = static_cast<int>(std::min(kMaxCount, a.count - off));
        COMMSCOPE_MPI_CHECK(MPI_Allreduce(send_or_in_place(in.at(off), out.at(off)), out.at(off), n, dt, op, comm));
      }
      if (a.op == ReduceOp::avg) t.divide(out.base, a.count, a.type, p);
      return;
    case Collective::reduce:
      for (std::size_t off = 0; off < a.count; off += kMaxCount) {
        const int n = static_cast<int>(std::min(kMaxCount, a.count - off));
        const bool root = me == a.root;
        const void* s = root ? send_or_in_place(in.at(off), out.at(off)) : in.at(off);
        COMMSCOPE_MPI_CHECK(MPI_Reduce(s, root ? out.at(off) : nullptr, n, dt, op, a.root, comm));
      }
      if (me == a.root && a.op == ReduceOp::avg) t.divide(out.base, a.count, a.type, p);
      return;
    case Collective::broadcast:
      if (me == a.root) t.copy(out.base, in.base, out.bytes(a.count));
      for (std::size_t off = 0; off < a.count; off += kMaxCount) {
        const int n = static_cast<int>(std::min(kMaxCount, a.count - off));
        COMMSCOPE_MPI_CHECK(MPI_Bcast(out.at(off), n, dt, a.root, comm));
      }
      return;
    case Collective::allgather: {
      const int n = checked_int(a.count * static_cast<std::size_t>(p), a.coll) / std::max(p, 1);
      const bool in_place = in.base == out.at(a.count * static_cast<std::size_t>(me));
      COMMSCOPE_MPI_CHECK(MPI_Allgather(in_place ? MPI_IN_PLACE : in.base, n, dt, out.base, n, dt, comm));
      return;
    }
    case Collective::reducescatter: {
      const int n = checked_int(a.count * static_cast<std::size_t>(p), a.coll) / std::max(p, 1);
      // MPI's in-place form reads the input from recvbuf; ours has recv inside send, so the
      // in-place case reduces into scratch and copies our block back.
      const bool in_place = out.base == in.at(a.count * static_cast<std::size_t>(me));
      void* dst = in_place ? t.scratch(0, out.bytes(a.count)) : out.base;
      COMMSCOPE_MPI_CHECK(MPI_Reduce_scatter_block(in.base, dst, n, dt, op, comm));
      if (in_place) t.copy(out.base, dst, out.bytes(a.count));
      if (a.op == ReduceOp::avg) t.divide(out.base, a.count, a.type, p);
      return;
    }
    case Collective::alltoall: {
      const int n = checked_int(a.count * static_cast<std::size_t>(p), a.coll) / std::max(p, 1);
      const bool in_place = in.base == out.base;
      COMMSCOPE_MPI_CHECK(MPI_Alltoall(in_place ? MPI_IN_PLACE : in.base, n, dt, out.base, n, dt, comm));
      return;
    }
    case Collective::gather: {
      const int n = checked_int(a.count * static_cast<std::size_t>(p), a.coll) / std::max(p, 1);
      const bool root = me == a.root;
      // MPI's in-place gather leaves the root's block where it is, as ours does.
      const bool in_place = root && in.base == out.at(a.count * static_cast<std::size_t>(me));
      COMMSCOPE_MPI_CHECK(
          MPI_Gather(in_place ? MPI_IN_PLACE : in.base, n, dt, root ? out.base : nullptr, n, dt, a.root, comm));
      return;
    }
    case Collective::scatter: {
      const int n = checked_int(a.count * static_cast<std::size_t>(p), a.coll) / std::max(p, 1);
      const bool root = me == a.root;
      const bool in_place = root && out.base == in.at(a.count * static_cast<std::size_t>(me));
      COMMSCOPE_MPI_CHECK(
          MPI_Scatter(root ? in.base : nullptr, n, dt, in_place ? MPI_IN_PLACE : out.base, n, dt, a.root, comm));
      return;
    }
    case Collective::sendrecv: {
      const int right = (me + 1) % p, left = (me - 1 + p) % p;
      for (std::size_t off = 0; off < a.count; off += kMaxCount) {
        const int n = static_cast<int>(std::min(kMaxCount, a.count - off));
        if (in.base == out.base) {
          COMMSCOPE_MPI_CHECK(MPI_Sendrecv_replace(out.at(off), n, dt, right, 0, left, 0, comm, MPI_STATUS_IGNORE));
        } else {
          COMMSCOPE_MPI_CHECK(
              MPI_Sendrecv(in.at(off), n, dt, right, 0, out.at(off), n, dt, left, 0, comm, MPI_STATUS_IGNORE));
        }
      }
      return;
    }
    case Collective::alltoallv: {
      // MPI counts and displacements are int (elements): refuse what does not fit.
      std::vector<int> v(4 * static_cast<std::size_t>(p));
      const std::span<const std::size_t> from[4] = {a.send_counts, a.send_displs, a.recv_counts, a.recv_displs};
      for (std::size_t k = 0; k < 4; ++k)
        for (std::size_t j = 0; j < from[k].size(); ++j) v[k * from[k].size() + j] = checked_int(from[k][j], a.coll);
      const int* sc = v.data();
      const int* rc = sc + 2 * p;
      COMMSCOPE_MPI_CHECK(MPI_Alltoallv(in.base, sc, sc + p, dt, out.base, rc, rc + p, dt, comm));
      return;
    }
  }
}

class MpiAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "mpi"; }
  std::string_view description() const override { return "the MPI library's own collective calls"; }
  bool supports(Collective) const override { return true; }
  void run(Transport& t, const CollArgs& a, const AlgoOptions&) const override {
    MpiTransport* mt = t.as_mpi();
    if (!mt) throw UnsupportedCollective("algorithm 'mpi' needs the MPI transport (host buffers over MPI)");
    run_mpi(*mt, a);
  }
  std::optional<Cost> cost(Collective, int, double, const AlgoOptions&) const override { return std::nullopt; }
};

}  // namespace

const Algorithm& mpi_algorithm() {
  static const MpiAlgorithm instance;
  return instance;
}

}  // namespace commscope
