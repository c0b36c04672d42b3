// The correctness-data checker itself, each collective simulated in memory without MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "commscope/collectives/check_data.hpp"
#include "commscope/collectives/collectives.hpp"

using namespace commscope;

// The checker, exercised without MPI: simulate each collective on 5 "ranks" in memory.
TEST(CheckData, SimulatedReductionsPassAndCorruptionIsCaught) {
  const int n = 5;
  for (DataType t : kAllDataTypes) {
    for (ReduceOp op : kAllReduceOps) {
      const check::Spec s{Collective::allreduce, t, op, 999, 0, n, 77};
      const std::size_t es = type_size(t);
      std::vector<std::byte> acc(999 * es), in(999 * es);
      check::fill_send(s, 3, acc.data());  // any order of ranks must give the same result
      for (int r : {0, 4, 1, 2}) {
        check::fill_send(s, r, in.data());
        reduce_host(acc.data(), acc.data(), in.data(), 999, t, op);
      }
      if (op == ReduceOp::avg) divide_host(acc.data(), 999, t, n);
      const check::Result ok = check::check_recv(s, 2, acc.data());
      EXPECT_EQ(ok.wrong, 0u) << to_string(t) << " " << to_string(op) << " first " << ok.first_wrong << " want "
                              << ok.expected << " got " << ok.got;
      // A high bit of the element's top byte: a large change for any value, 0 included.
      acc[500 * es + es - 1] = static_cast<std::byte>(static_cast<unsigned>(acc[500 * es + es - 1]) ^ 0x40u);
      EXPECT_EQ(check::check_recv(s, 2, acc.data()).wrong, 1u) << to_string(t) << " " << to_string(op);
    }
  }
}

TEST(CheckData, AlltoallvPatternSumsToTheTotalInSharesOfTheDistance) {
  for (int n = 1; n <= 9; ++n) {
    for (std::size_t total : {0u, 1u, 7u, 1000u, 1000003u}) {
      std::size_t sum = 0;
      for (int d = 0; d < n; ++d) {
        const std::size_t share = check::alltoallv_share(total, n, d);
        sum += share;
        if (n > 1) {  // within one element of d / (n(n-1)/2) of the total
          const double exact = static_cast<double>(total) * d / (n * (n - 1) / 2.0);
          EXPECT_LT(std::fabs(static_cast<double>(share) - exact), 1.0) << n << " ranks, " << total << ", d " << d;
        }
      }
      EXPECT_EQ(sum, total) << n << " ranks";
      if (n > 1) {
        EXPECT_EQ(check::alltoallv_share(total, n, 0), 0u);
      }
      for (int r = 0; r < n; ++r) {  // what r receives from q is what q sends r
        const check::AlltoallvLayout l = check::alltoallv_layout(total, n, r);
        EXPECT_EQ(l.recv_displs.back() + l.recv_counts.back(), total);
        for (int q = 0; q < n; ++q)
          EXPECT_EQ(l.recv_counts[static_cast<std::size_t>(q)],
                    check::alltoallv_layout(total, n, q).send_counts[static_cast<std::size_t>(r)]);
      }
    }
  }
  // 4 ranks, 60 elements: distances 1, 2, 3 get 10, 20, 30 (nccl-tests' d / (n(n-1)/2)).
  EXPECT_EQ(check::alltoallv_layout(60, 4, 1).send_counts, (std::vector<std::size_t>{30, 0, 10, 20}));
  EXPECT_EQ(check::alltoallv_share(std::size_t{1} << 62, 3, 2), (std::size_t{1} << 62) / 3 * 2 + 1);
  EXPECT_THROW(check::alltoallv_share(10, 3, 3), InvalidArgument);
}

// Each new collective simulated in memory on 4 "ranks": the right data passes, a misplaced block does not.
TEST(CheckData, GatherScatterSendrecvAlltoallvLayouts) {
  const int n = 4;
  const std::size_t count = 6;
  auto spec = [&](Collective c) { return check::Spec{c, DataType::i32, ReduceOp::sum, count, 2, n, 9}; };
  auto input = [&](const check::Spec& s, int r) {
    std::vector<std::int32_t> v(check::send_elements(s));
    check::fill_send(s, r, v.data());
    return v;
  };
  const check::Spec g = spec(Collective::gather);
  std::vector<std::int32_t> out;
  for (int r = 0; r < n; ++r) {
    const std::vector<std::int32_t> block = input(g, r);
    out.insert(out.end(), block.begin(), block.end());
  }
  EXPECT_EQ(check::check_recv(g, 2, out.data()).wrong, 0u);
  EXPECT_EQ(check::check_recv(g, 1, nullptr).wrong, 0u);  // no output off the root
  std::swap(out[0], out[count]);
  EXPECT_GE(check::check_recv(g, 2, out.data()).wrong, 1u);

  const check::Spec sc = spec(Collective::scatter);
  const std::vector<std::int32_t> all = input(sc, 2);
  EXPECT_EQ(check::check_recv(sc, 3, all.data() + 3 * count).wrong, 0u);
  EXPECT_GE(check::check_recv(sc, 3, all.data() + 2 * count).wrong, 1u);

  const check::Spec sr = spec(Collective::sendrecv);
  EXPECT_EQ(check::check_recv(sr, 0, input(sr, 3).data()).wrong, 0u);  // from the left, wrapping
  EXPECT_GE(check::check_recv(sr, 0, input(sr, 1).data()).wrong, 1u);

  const check::Spec v = spec(Collective::alltoallv);
  const int me = 1;
  const check::AlltoallvLayout mine = check::alltoallv_layout(count, n, me);
  std::vector<std::int32_t> got(count);
  for (int q = 0; q < n; ++q) {
    const check::AlltoallvLayout theirs = check::alltoallv_layout(count, n, q);
    const auto qi = static_cast<std::size_t>(q), mi = static_cast<std::size_t>(me);
    const std::vector<std::int32_t> in = input(v, q);
    std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(theirs.send_displs[mi]), mine.recv_counts[qi],
                got.begin() + static_cast<std::ptrdiff_t>(mine.recv_displs[qi]));
  }
  EXPECT_EQ(check::check_recv(v, me, got.data()).wrong, 0u);
  std::reverse(got.begin(), got.end());
  EXPECT_GE(check::check_recv(v, me, got.data()).wrong, 1u);
}

TEST(CheckData, GatherLayoutsAreChecked) {
  const int n = 3;
  const check::Spec s{Collective::allgather, DataType::bf16, ReduceOp::sum, 10, 0, n, 5};
  std::vector<std::uint16_t> out(30);
  for (int r = 0; r < n; ++r) check::fill_send(s, r, out.data() + 10 * r);
  EXPECT_EQ(check::check_recv(s, 1, out.data()).wrong, 0u);
  std::swap_ranges(out.begin(), out.begin() + 10, out.begin() + 10);  // blocks of ranks 0 and 1 mixed up
  EXPECT_GE(check::check_recv(s, 1, out.data()).wrong, 5u);
}

// Rank counts far beyond what the tests launch, simulated in memory. For every type and op the
// reduction stays exact whatever the combining order (rank order, reverse order, pairs of
// pairs); for sum and prod a result that misses any one rank, or holds one rank twice in place
// of its neighbour, is caught. 1024 elements hold every rank's window at 1024 ranks (128
// elements would). The old data (base(g) + (q mod 17)) failed here: at 512 ranks its bf16 and
// u8 inputs were all 0, so a missing rank passed.
TEST(CheckData, LargeRankCountsStayExactAndSeeEveryRank) {
  const std::size_t count = 1024;
  for (int n : {1, 2, 3, 7, 9, 17, 34, 100, 128, 129, 256, 257, 1000, 1024}) {
    const auto un = static_cast<std::size_t>(n);
    for (DataType t : kAllDataTypes) {
      const std::size_t es = type_size(t), bytes = count * es;
      std::vector<std::byte> in(un * bytes), prefix((un + 1) * bytes), suffix((un + 1) * bytes), out(bytes);
      auto at = [&](std::vector<std::byte>& v, std::size_t r) { return v.data() + r * bytes; };
      auto combine = [&](std::byte* dst, const std::byte* a, const std::byte* b, ReduceOp op) {
        reduce_host(dst, a, b, count, t, op);
      };
      for (ReduceOp op : kAllReduceOps) {
        const check::Spec s{Collective::allreduce, t, op, count, 0, n, 1234567};
        const std::string what =
            std::string(to_string(t)) + " " + std::string(to_string(op)) + " on " + std::to_string(n) + " ranks";
        for (int r = 0; r < n; ++r) check::fill_send(s, r, at(in, static_cast<std::size_t>(r)));
        // prefix[r]: ranks 0..r-1 combined in order (r >= 1); suffix[r]: ranks r..n-1, from the end.
        std::memcpy(at(prefix, 1), at(in, 0), bytes);
        for (std::size_t r = 1; r < un; ++r) combine(at(prefix, r + 1), at(prefix, r), at(in, r), op);
        std::memcpy(at(suffix, un - 1), at(in, un - 1), bytes);
        for (std::size_t r = un - 1; r-- > 0;) combine(at(suffix, r), at(in, r), at(suffix, r + 1), op);
        std::vector<std::byte> tree(in);
        for (std::size_t step = 1; step < un; step *= 2)
          for (std::size_t r = 0; r + step < un; r += 2 * step)
            combine(at(tree, r), at(tree, r), at(tree, r + step), op);
        auto wrong = [&](const std::byte* result) {
          std::memcpy(out.data(), result, bytes);
          if (op == ReduceOp::avg) divide_host(out.data(), count, t, n);
          return check::check_recv(s, 0, out.data());
        };
        for (const std::byte* result : {at(prefix, un), at(suffix, 0), at(tree, 0)}) {
          const check::Result r = wrong(result);
          ASSERT_EQ(r.wrong, 0u) << what << ": element " << r.first_wrong << " want " << r.expected << " got " << r.got;
        }
        if (n == 1 || (op != ReduceOp::sum && op != ReduceOp::prod)) continue;
        std::vector<std::byte> without(bytes), twice(bytes);
        auto drop = [&](std::size_t q) {  // all ranks but q
          if (q == 0) return std::memcpy(without.data(), at(suffix, 1), bytes), void();
          if (q == un - 1) return std::memcpy(without.data(), at(prefix, un - 1), bytes), void();
          combine(without.data(), at(prefix, q), at(suffix, q + 1), op);
        };
        for (std::size_t q = 0; q < un; ++q) {
          drop(q);
          ASSERT_GT(wrong(without.data()).wrong, 0u) << what << ": rank " << q << " missing passed";
          drop((q + 1) % un);  // rank q in place of its neighbour
          combine(twice.data(), without.data(), at(in, q), op);
          ASSERT_GT(wrong(twice.data()).wrong, 0u) << what << ": rank " << q << " twice passed";
        }
      }
    }
  }
}
