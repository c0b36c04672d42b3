// Correctness data for collectives: deterministic inputs from (seed, rank, index) whose
// reduced result is exactly representable in every datatype and every summation order, and a
// checker that counts wrong output elements in O(1) work per element. Used by the tests and
// by commscope-bench's #wrong column.
//
// Reductions use small integers: element g of rank q is base(g) + delta(q) for sum, avg, min
// and max, and sign(g) * m(q) for prod (m in {1, 2, -1}); magnitudes shrink with the rank
// count so that every partial result stays exact (f16 below 2048, bf16 below 256) and no
// integer result overflows (u8 below 256, i8 within +-127: libraries disagree on 8-bit overflow). The only
// inexact step is avg's final division, hence the per-type tolerance.
#pragma once

#include <cstddef>
#include <cstdint>

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

// Elements of rank-local send and recv buffers (CollArgs conventions).
std::size_t send_elements(const Spec& s);
std::size_t recv_elements(const Spec& s);

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
