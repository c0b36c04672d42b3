// The arguments every collective call is checked against, alltoallv's counts too.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "commscope/collectives/collectives.hpp"

using namespace commscope;

TEST(Validate, RejectsBadArgumentsWithAMessage) {
  float buf[64] = {};
  auto msg = [](const CollArgs& a, int rank, int n) -> std::string {
    try {
      validate(a, rank, n);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(
      msg({Collective::allreduce, nullptr, buf, 4, DataType::f32, ReduceOp::sum, 0}, 0, 2).find("send buffer is null"),
      std::string::npos);
  EXPECT_NE(
      msg({Collective::allreduce, buf, nullptr, 4, DataType::f32, ReduceOp::sum, 0}, 0, 2).find("recv buffer is null"),
      std::string::npos);
  EXPECT_EQ(msg({Collective::allreduce, nullptr, nullptr, 0, DataType::f32, ReduceOp::sum, 0}, 0, 2), "");
  EXPECT_NE(
      msg({Collective::reduce, buf, buf + 8, 4, DataType::f32, ReduceOp::sum, 2}, 0, 2).find("root 2 out of range"),
      std::string::npos);
  EXPECT_NE(msg({Collective::broadcast, buf, buf, 4, DataType::f32, ReduceOp::sum, -1}, 0, 2).find("root -1"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::reduce, buf, nullptr, 4, DataType::f32, ReduceOp::sum, 1}, 0, 2), "");     // non-root recv
  EXPECT_EQ(msg({Collective::broadcast, nullptr, buf, 4, DataType::f32, ReduceOp::sum, 1}, 0, 2), "");  // non-root send
  EXPECT_NE(msg({Collective::allgather, buf, buf, std::size_t{1} << 62, DataType::f64, ReduceOp::sum, 0}, 0, 4)
                .find("count overflow"),
            std::string::npos);
  EXPECT_NE(msg({Collective::allreduce, buf, buf + 1, 8, DataType::f32, ReduceOp::sum, 0}, 0, 2).find("overlap"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::allgather, buf + 8, buf, 8, DataType::f32, ReduceOp::sum, 0}, 1, 4), "");  // in place
  EXPECT_NE(msg({Collective::allgather, buf, buf, 8, DataType::f32, ReduceOp::sum, 0}, 1, 4).find("overlap"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::reducescatter, buf, buf + 16, 8, DataType::f32, ReduceOp::sum, 0}, 2, 4), "");  // in place
  EXPECT_NE(msg({Collective::allreduce, buf, buf + 8, 4, static_cast<DataType>(42), ReduceOp::sum, 0}, 0, 2)
                .find("invalid datatype"),
            std::string::npos);
  EXPECT_NE(msg({Collective::allreduce, buf, buf + 8, 4, DataType::f32, static_cast<ReduceOp>(9), 0}, 0, 2)
                .find("invalid reduction op"),
            std::string::npos);
  // gather/scatter: the root's big side, in place at the root's block; the other side only at the root.
  EXPECT_EQ(msg({Collective::gather, buf + 16, buf, 8, DataType::f32, ReduceOp::sum, 2}, 2, 4), "");  // in place
  EXPECT_NE(msg({Collective::gather, buf + 8, buf, 8, DataType::f32, ReduceOp::sum, 2}, 2, 4).find("overlap"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::gather, buf, nullptr, 8, DataType::f32, ReduceOp::sum, 2}, 1, 4), "");  // non-root recv
  EXPECT_NE(msg({Collective::gather, buf, nullptr, 8, DataType::f32, ReduceOp::sum, 1}, 1, 4).find("recv buffer"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::scatter, buf, buf + 8, 8, DataType::f32, ReduceOp::sum, 1}, 1, 4), "");  // in place
  EXPECT_EQ(msg({Collective::scatter, nullptr, buf, 8, DataType::f32, ReduceOp::sum, 1}, 0, 4), "");  // non-root send
  EXPECT_NE(msg({Collective::scatter, buf, buf, 8, DataType::f32, ReduceOp::sum, 99}, 0, 4).find("root 99"),
            std::string::npos);
  EXPECT_EQ(msg({Collective::sendrecv, buf, buf, 8, DataType::f32, ReduceOp::sum, 0}, 0, 4), "");  // in place
  EXPECT_NE(msg({Collective::sendrecv, buf, buf + 4, 8, DataType::f32, ReduceOp::sum, 0}, 0, 4).find("overlap"),
            std::string::npos);
}

TEST(Validate, AlltoallvCountsAndDisplacements) {
  float buf[64] = {};
  auto msg = [&](std::size_t count, std::vector<std::size_t> sc, std::vector<std::size_t> sd,
                 std::vector<std::size_t> rc, std::vector<std::size_t> rd, const float* send = nullptr,
                 float* recv = nullptr) -> std::string {
    CollArgs a{
        Collective::alltoallv, send ? send : buf, recv ? recv : buf + 32, count, DataType::f32, ReduceOp::sum, 0};
    a.send_counts = sc, a.send_displs = sd, a.recv_counts = rc, a.recv_displs = rd;
    try {
      validate(a, 1, 3);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(msg(6, {1, 2, 3}, {0, 1, 3}, {3, 2, 1}, {0, 3, 5}), "");
  EXPECT_EQ(msg(0, {}, {}, {}, {}), "");  // nothing to move
  EXPECT_NE(msg(6, {1, 2}, {0, 1}, {3, 2, 1}, {0, 3, 5}).find("send counts and displacements need 3 entries"),
            std::string::npos);
  EXPECT_NE(msg(5, {1, 2, 3}, {0, 1, 3}, {3, 2, 0}, {0, 3, 5}).find("more than count 5"), std::string::npos);
  EXPECT_NE(msg(0, {1, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}).find("more than count 0"), std::string::npos);
  EXPECT_NE(msg(6, {1, 1, 3}, {0, 1, 3}, {3, 2, 1}, {0, 3, 5}).find("sends itself 1 elements but receives 2"),
            std::string::npos);
  EXPECT_NE(msg(6, {1, 2, 3}, {0, 1, SIZE_MAX - 1}, {3, 2, 1}, {0, 3, 5}).find("address space"), std::string::npos);
  EXPECT_NE(msg(6, {1, 2, 3}, {0, 1, 3}, {3, 2, 1}, {0, 3, 5}, buf, buf + 4).find("overlap"), std::string::npos);
  EXPECT_EQ(msg(6, {1, 2, 3}, {0, 1, 3}, {3, 2, 1}, {0, 3, 5}, buf, buf + 6), "");  // adjacent, not overlapping
}
