// Correctness data for collectives: deterministic inputs from (seed, rank, index) whose
// reduced result is exactly representable in every datatype and every summation order, and a
// checker that counts wrong output elements in O(1) work per element (alltoallv: plus O(n^2)
// per check for its layout). Used by the tests and by commscope-bench's #wrong column.
//
// Reductions use small integers: element g of rank q is base(g), shared by all ranks, plus a
// value of q's own (1..16) when q is in g's window of up to 8 ranks (sum, avg, min, max); for
// prod a shared sign(g) times a factor of q's own (-1 or 2; unsigned 2 or 3) in the window.
// Windows tile the ranks, so in each run of ceil(n / 8) elements every rank has a value of
// its own: a missing, doubled or substituted rank shows at any rank count. Magnitudes shrink
// with the rank count so that every partial result stays exact (f16 below 2048, bf16 below
// 256) and no integer result overflows (u8 below 256, i8 within +-127: libraries disagree on
// 8-bit overflow); base goes to 0 where the type has no room for it (bf16 above 128 ranks), the
// window never does. The only inexact step is avg's final division, hence the per-type
// tolerance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/types.hpp"

namespace commscope::check {

struct Spec {
  Collective coll = Collective::allreduce;
  DataType type = DataType::f32;
  ReduceOp op = ReduceOp::sum;
  std::size_t count = 0;  // as in CollArgs
  int root = 0;
  int nranks = 1;
  std::uint64_t seed = 0;
};

// Elements of rank-local send and recv buffers (CollArgs conventions; alltoallv: `count`,
// the total of its count pattern below).
std::size_t send_elements(const Spec& s);
std::size_t recv_elements(const Spec& s);

// alltoallv's count pattern, nccl-tests' default (distance-weighted): every rank sends and
// receives `total` elements in all, and what rank i sends rank j grows with the ring distance
// d = (j - i) mod n, as d / (n(n-1)/2) of the total (nothing to itself). Shares are cut from
// cumulative weights, floor(total C(d) / C(n-1)) - floor(total C(d-1) / C(n-1)) with
// C(d) = d(d+1)/2, so that they add up to `total` exactly. One rank: all of it to itself.
std::size_t alltoallv_share(std::size_t total, int nranks, int distance);

// One rank's counts and displacements of that pattern (blocks packed in rank order), which a
// CollArgs points at: args.send_counts = layout.send_counts, and so on.
struct AlltoallvLayout {
  std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;
  void apply(CollArgs& args) const;
};
AlltoallvLayout alltoallv_layout(std::size_t total, int nranks, int rank);
// The layout of `s` for rank `rank`: alltoallv_layout(s.count, ...) for alltoallv, empty otherwise.
AlltoallvLayout peer_layout(const Spec& s, int rank);

// Fill `send` (send_elements(s) elements) with rank `rank`'s input.
void fill_send(const Spec& s, int rank, void* send);

// Relative tolerance for floating types: |got - ref| <= tol * max(1, |ref|), ref computed in
// f64. One unit in the last place of the type (f32 2^-23, f64 2^-52, f16 2^-10, bf16 2^-7);
// 0 (exact) for integers.
double tolerance(DataType t);

struct Result {
  std::size_t wrong = 0;               // elements outside tolerance
  std::size_t first_wrong = SIZE_MAX;  // index of the first one
  double expected = 0, got = 0;        // at first_wrong
};

// Check rank `rank`'s output. Ranks without output (reduce, non-root) have nothing wrong.
Result check_recv(const Spec& s, int rank, const void* recv);

// Count elements of `send` that differ from rank `rank`'s input (a send buffer must not change).
std::size_t check_send_unchanged(const Spec& s, int rank, const void* send);

}  // namespace commscope::check
