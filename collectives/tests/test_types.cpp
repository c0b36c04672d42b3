// The names of types, ops, collectives and algorithms; bus-bandwidth factors and sizes.
#include <gtest/gtest.h>

#include <string>

#include "commscope/collectives/collectives.hpp"

using namespace commscope;

TEST(Names, ParseAndPrintRoundTripAndErrorsListValidNames) {
  for (DataType t : kAllDataTypes) EXPECT_EQ(parse_datatype(to_string(t)), t);
  for (ReduceOp o : kAllReduceOps) EXPECT_EQ(parse_reduce_op(to_string(o)), o);
  for (Collective c : kAllCollectives) EXPECT_EQ(parse_collective(to_string(c)), c);
  try {
    parse_datatype("f8");
    FAIL() << "no exception";
  } catch (const UnknownName& e) {
    EXPECT_NE(std::string(e.what()).find("f32, f64, f16, bf16, i32, i64, u8, i8, u32, u64"), std::string::npos)
        << e.what();
  }
  try {
    find_algorithm("butterfly");
    FAIL() << "no exception";
  } catch (const UnknownName& e) {
    EXPECT_NE(std::string(e.what()).find("mpi, ring, tree, rhd, shm"), std::string::npos) << e.what();
  }
  EXPECT_EQ(find_algorithm("rhd").name(), "rhd");
}

TEST(Formulas, BusBandwidthFactorsAndSizes) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::reducescatter, 5), 0.8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::alltoall, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::reduce, 7), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::broadcast, 3), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 1), 0.0);
  EXPECT_EQ(collective_bytes(Collective::allgather, 10, DataType::f64, 3), 240u);
  EXPECT_EQ(collective_bytes(Collective::allreduce, 10, DataType::f16, 3), 20u);
  // nccl-tests: gather, scatter, alltoallv (n-1)/n; sendrecv 1.
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::scatter, 5), 0.8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::sendrecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::alltoallv, 2), 0.5);
  EXPECT_EQ(collective_bytes(Collective::gather, 10, DataType::f32, 3), 120u);   // the root's output
  EXPECT_EQ(collective_bytes(Collective::scatter, 10, DataType::f32, 3), 120u);  // the root's input
  EXPECT_EQ(collective_bytes(Collective::sendrecv, 10, DataType::f32, 3), 40u);
  EXPECT_EQ(collective_bytes(Collective::alltoallv, 10, DataType::f32, 3), 40u);  // count bounds a rank's total
  EXPECT_TRUE(is_rooted(Collective::gather));
  EXPECT_TRUE(is_rooted(Collective::scatter));
  EXPECT_FALSE(is_rooted(Collective::sendrecv));
  EXPECT_FALSE(has_in_place(Collective::alltoallv));
  EXPECT_TRUE(has_in_place(Collective::sendrecv));
}
