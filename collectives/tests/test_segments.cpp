// The MPI transport's messages (run under mpirun with 2 ranks): a transfer to a peer on another
// host goes as messages of at most 1 MiB, one within a host whole, and a timeout names a transfer
// once however many of its messages are pending. This executable stands between the transport
// and MPI (MPI_Isend counts the messages; MPI_Get_processor_name names every rank's host apart
// when told to), so that one machine's ranks can be on hosts of their own.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "commscope/collectives/collectives.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "mpi_gtest_main.hpp"

using namespace commscope;

namespace {
bool hosts_apart = false;  // MPI_Get_processor_name says "hostR" for rank R
std::vector<int> sent;     // the sizes of the messages MPI_Isend was given
constexpr std::size_t kMiB = std::size_t{1} << 20;
}  // namespace

extern "C" int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  int size = 0;
  PMPI_Type_size(type, &size);
  sent.push_back(count * size);
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

extern "C" int MPI_Get_processor_name(char* name, int* len) {
  if (!hosts_apart) return PMPI_Get_processor_name(name, len);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string n = "host" + std::to_string(rank);
  std::memcpy(name, n.c_str(), n.size() + 1);
  *len = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

namespace {
// The messages of one exchange of `bytes` with the other rank, on hosts apart or not; every byte
// arrives.
std::vector<int> exchange(bool apart, std::size_t bytes) {
  hosts_apart = apart;
  MpiTransport t(MPI_COMM_WORLD, 60);
  hosts_apart = false;
  const int peer = 1 - t.rank();
  // Byte i of rank r's array: every offset and both senders tell apart.
  const auto byte_of = [](std::size_t i, int r) { return static_cast<unsigned char>((i * 7 + std::size_t(r)) % 251); };
  std::vector<unsigned char> out(bytes), in(bytes, 0);
  for (std::size_t i = 0; i < bytes; ++i) out[i] = byte_of(i, t.rank());
  sent.clear();
  t.sendrecv(out.data(), bytes, peer, in.data(), bytes, peer);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < bytes; ++i) wrong += in[i] != byte_of(i, peer);
  EXPECT_EQ(wrong, 0u) << "bytes received wrong of " << bytes;
  return sent;
}

int ranks() {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}
}  // namespace

TEST(Segments, ToAPeerOnAnotherHostAsMessagesOfOneMiB) {
  if (ranks() != 2) GTEST_SKIP() << "needs 2 ranks";
  const std::vector<int> m = exchange(true, 4 * kMiB + 100);
  ASSERT_EQ(m.size(), 5u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(m[i], static_cast<int>(kMiB));
  EXPECT_EQ(m[4], 100);
}

TEST(Segments, ToAPeerOnTheSameHostWhole) {
  if (ranks() != 2) GTEST_SKIP() << "needs 2 ranks";
  const std::vector<int> m = exchange(false, 4 * kMiB + 100);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0], static_cast<int>(4 * kMiB + 100));
}

TEST(Segments, ATimeoutNamesATransferOnce) {
  if (ranks() != 2) GTEST_SKIP() << "needs 2 ranks";
  hosts_apart = true;
  MpiTransport t(MPI_COMM_WORLD, 0.3);
  hosts_apart = false;
  std::vector<char> in(3 * kMiB);
  t.post_recv(in.data(), in.size(), 1 - t.rank());  // nobody sends it: 3 messages pending
  std::string m;
  try {
    t.wait();
  } catch (const TimeoutError& e) {
    m = e.what();
  }
  const std::string once =
      "recv from " + std::to_string(1 - t.rank()) + " on host" + std::to_string(1 - t.rank()) + " (3145728 B)";
  const std::size_t at = m.find(once);
  EXPECT_NE(at, std::string::npos) << m;
  EXPECT_EQ(m.find(once, at + 1), std::string::npos) << m;
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  return commscope::testing::run_tests_on_every_rank(argc, argv);
}
