// Counts past MPI's int (mpi_calls.hpp), at small forced limits so that the splits run on small
// buffers: a message past max_count goes as one element of a byte type of its size (blocks and
// the rest) and arrives whole, a smaller one arrives in it as a prefix; a posted element-wise
// collective past max_elements is cut into calls that cover the array, the others take their
// count as bytes; a reduce-scatter past max_count is refused. One rank (MPI as a singleton), on
// MPI_COMM_SELF. The real size (2 GiB + 4 B) runs in replay.mpiprof.big_message.np2.
#include <mpi.h>

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "mpi_calls.hpp"

namespace rp = commscope::replay;
using commscope::Collective;
using commscope::DataType;

namespace {

const rp::CountLimits kSmall{8, 4, 4};  // int counts up to 8, blocks of 4 B, 4 elements a call

std::vector<unsigned char> bytes_from(int n, int first) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n));
  std::iota(out.begin(), out.end(), static_cast<unsigned char>(first));
  return out;
}

// Sends `sent` bytes to this rank and receives them as a receive of `room` bytes would.
std::vector<unsigned char> through_self(int sent, int room) {
  const std::vector<unsigned char> data = bytes_from(sent, 1);
  std::vector<unsigned char> got(static_cast<std::size_t>(room), 0);
  const rp::ByteCount out = rp::byte_count(sent, kSmall), in = rp::byte_count(room, kSmall);
  MPI_Request r[2];
  rp::check(MPI_Irecv(got.data(), in.count, in.type, 0, 0, MPI_COMM_SELF, &r[0]), "MPI_Irecv");
  rp::check(MPI_Isend(data.data(), out.count, out.type, 0, 0, MPI_COMM_SELF, &r[1]), "MPI_Isend");
  rp::check(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
  return got;
}

}  // namespace

TEST(ReplayBigCounts, MessagesPastTheIntCountGoAsOneBigElement) {
  const rp::ByteCount small = rp::byte_count(8, kSmall), big = rp::byte_count(11, kSmall);
  EXPECT_EQ(small.count, 8);
  EXPECT_EQ(small.type, MPI_BYTE);
  EXPECT_EQ(big.count, 1);
  int size = 0;
  MPI_Type_size(big.type, &size);
  EXPECT_EQ(size, 11);  // 2 blocks of 4 B and 3 B
  EXPECT_EQ(through_self(11, 11), bytes_from(11, 1));
  std::vector<unsigned char> prefix = bytes_from(6, 1);
  prefix.resize(11, 0);
  EXPECT_EQ(through_self(6, 11), prefix);  // a smaller message into the big type
  // The real limits: up to INT_MAX bytes as bytes.
  EXPECT_EQ(rp::byte_count(2147483647).count, 2147483647);
  EXPECT_EQ(rp::byte_count(2147483648).count, 1);
}

TEST(ReplayBigCounts, PostedCollectivesAreCutOrTakenAsBytes) {
  std::vector<float> in(10), out(10, -1.0f);
  std::iota(in.begin(), in.end(), 1.0f);
  for (const Collective c : {Collective::allreduce, Collective::broadcast, Collective::allgather}) {
    std::fill(out.begin(), out.end(), -1.0f);
    if (c == Collective::broadcast) out = in;  // the root's data is in its receive buffer
    std::vector<MPI_Request> requests;
    rp::post_collective(MPI_COMM_SELF, c, in.size(), DataType::f32, in.data(), out.data(), requests, kSmall);
    // 10 elements, 4 a call: 3 calls; an allgather's 40 B past the count of 8: one call, as bytes.
    EXPECT_EQ(requests.size(), c == Collective::allgather ? 1u : 3u) << commscope::to_string(c);
    rp::check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    EXPECT_EQ(out, in) << commscope::to_string(c);  // one rank: every element comes back as it was
  }
  std::vector<MPI_Request> requests;
  EXPECT_THROW(rp::post_collective(MPI_COMM_SELF, Collective::reducescatter, in.size(), DataType::f32, in.data(),
                                   out.data(), requests, kSmall),
               std::runtime_error);
}

int main(int argc, char** argv) {
  commscope::MpiRuntime mpi(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
