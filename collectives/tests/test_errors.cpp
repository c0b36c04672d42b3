// Error behaviour on a live communicator (run under mpirun with 1 and 2 ranks): typed
// exceptions with messages, on every rank alike, and a wait that times out instead of hanging.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../src/shm_segment.hpp"
#include "commscope/collectives/check_data.hpp"
#include "commscope/collectives/collectives.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "mpi_gtest_main.hpp"

using namespace commscope;

namespace {
template <typename Ex, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Ex& e) {
    return e.what();
  }
  return "no exception";
}
}  // namespace

TEST(Errors, UnsupportedCollectiveNamesTheAlgorithmsThatHaveIt) {
  Communicator comm;
  float x[4] = {};
  const std::string m = message_of<UnsupportedCollective>([&] { comm.alltoall(x, x, 1, DataType::f32, "tree"); });
  EXPECT_NE(m.find("algorithm 'tree' has no alltoall"), std::string::npos) << m;
  EXPECT_NE(m.find("algorithms with alltoall: mpi, ring"), std::string::npos) << m;
}

// gather, scatter, sendrecv and alltoallv through Communicator's calls: the algorithms without
// them say which have them, a bad alltoallv layout is refused on every rank alike, and a small
// call of each arrives where it should.
TEST(Errors, NewCollectivesThroughTheCommunicatorCalls) {
  Communicator comm;
  const int p = comm.size(), r = comm.rank();
  const float mine = static_cast<float>(r);
  float got = -1;
  const std::string m =
      message_of<UnsupportedCollective>([&] { comm.sendrecv(&mine, &got, 1, DataType::f32, "tree"); });
  EXPECT_NE(m.find("algorithms with sendrecv: mpi, ring"), std::string::npos) << m;
  comm.sendrecv(&mine, &got, 1, DataType::f32, "ring");
  EXPECT_EQ(got, static_cast<float>((r - 1 + p) % p));

  std::vector<float> all(static_cast<std::size_t>(p), -1);
  comm.gather(&mine, all.data(), 1, DataType::f32, p - 1, "tree");
  for (int q = 0; r == p - 1 && q < p; ++q) EXPECT_EQ(all[static_cast<std::size_t>(q)], static_cast<float>(q));
  float back = -1;
  comm.scatter(all.data(), &back, 1, DataType::f32, p - 1, "ring");
  EXPECT_EQ(back, mine);

  // One element to every rank; count bounds every rank's total (here p).
  std::vector<std::size_t> ones(static_cast<std::size_t>(p), 1), displs(static_cast<std::size_t>(p));
  for (std::size_t q = 0; q < displs.size(); ++q) displs[q] = q;
  std::vector<float> in(static_cast<std::size_t>(p), mine), out(static_cast<std::size_t>(p), -1);
  EXPECT_THROW(comm.alltoallv(in.data(), ones, displs, out.data(), ones, displs, displs.size() - 1, DataType::f32),
               InvalidArgument);
  comm.alltoallv(in.data(), ones, displs, out.data(), ones, displs, displs.size(), DataType::f32, "ring");
  for (int q = 0; q < p; ++q) EXPECT_EQ(out[static_cast<std::size_t>(q)], static_cast<float>(q));
}

TEST(Errors, UnknownAlgorithmAndBadArgumentsThrowTypedErrors) {
  Communicator comm;
  std::vector<float> x(16);
  EXPECT_THROW(comm.allreduce(x.data(), x.data(), 4, DataType::f32, ReduceOp::sum, "nope"), UnknownName);
  EXPECT_THROW(comm.allreduce(nullptr, x.data(), 4, DataType::f32, ReduceOp::sum, "ring"), InvalidArgument);
  EXPECT_THROW(comm.reduce(x.data(), x.data(), 4, DataType::f32, ReduceOp::sum, comm.size(), "tree"), InvalidArgument);
  EXPECT_THROW(comm.broadcast(x.data(), x.data(), 4, DataType::f32, -1, "rhd"), InvalidArgument);
  EXPECT_THROW(comm.allgather(x.data(), x.data(), std::size_t{1} << 62, DataType::f64, "ring"), InvalidArgument);
  EXPECT_THROW(Communicator(MPI_COMM_WORLD, CommOptions{AlgoOptions{0}, 1}), InvalidArgument);
  // The communicator still works after rejected calls.
  for (auto& v : x) v = 1;
  comm.allreduce(x.data(), x.data(), 16, DataType::f32, ReduceOp::sum, "ring");
  EXPECT_EQ(x[15], static_cast<float>(comm.size()));
}

TEST(Errors, ARepeatedCallIsCheckedOnceAndEveryChangedOneAgain) {
  // Communicator::run skips validation when a call repeats the last valid one exactly; any
  // change of any argument must be checked again.
  Communicator comm;
  std::vector<float> x(16, 1.0f), y(16, 0.0f);
  const Algorithm& ring = find_algorithm("ring");
  CollArgs a{Collective::allreduce, x.data(), y.data(), 16, DataType::f32, ReduceOp::sum, 0};
  comm.run(a, ring);
  comm.run(a, ring);
  EXPECT_EQ(y[15], static_cast<float>(comm.size()));
  CollArgs bad = a;
  bad.send = nullptr;
  EXPECT_THROW(comm.run(bad, ring), InvalidArgument);
  bad = a;
  bad.recv = x.data() + 1;  // overlaps the input without being in place
  EXPECT_THROW(comm.run(bad, ring), InvalidArgument);
  bad = a;
  bad.coll = Collective::reduce;
  bad.root = comm.size();
  EXPECT_THROW(comm.run(bad, ring), InvalidArgument);
  // The same arguments with another algorithm are checked against that algorithm.
  std::vector<float> big(16 * static_cast<std::size_t>(comm.size()), 1.0f), out(big.size());
  const CollArgs a2a{Collective::alltoall, big.data(), out.data(), 16, DataType::f32, ReduceOp::sum, 0};
  comm.run(a2a, ring);
  EXPECT_THROW(comm.run(a2a, find_algorithm("tree")), UnsupportedCollective);
  comm.run(a, ring);
  EXPECT_EQ(y[0], static_cast<float>(comm.size()));
}

TEST(Errors, AWaitWithNoMatchingSendTimesOutNamingTheOperation) {
  MpiTransport t(MPI_COMM_WORLD, 0.3);
  t.set_context(CallContext{Collective::allreduce, "ring", DataType::f32, ReduceOp::sum, 0, 16, 1});
  float x[16];
  t.post_recv(x, sizeof x, t.rank());  // nobody sends this
  const auto t0 = std::chrono::steady_clock::now();
  const std::string m = message_of<TimeoutError>([&] { t.wait(); });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(m.find("timeout after 0.3 s"), std::string::npos) << m;
  EXPECT_NE(m.find("allreduce ring f32 sum 64 B"), std::string::npos) << m;
  EXPECT_NE(m.find("recv from " + std::to_string(t.rank())), std::string::npos) << m;
  EXPECT_LT(secs, 10.0);
  // The abandoned receive was cancelled: a later exchange on the same transport is unaffected.
  float y = 5, z = 0;
  t.sendrecv(&y, sizeof y, t.rank(), &z, sizeof z, t.rank());
  EXPECT_EQ(z, 5.0f);
  // That receive is remembered: the rank heard from itself just now, and silent since.
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  EXPECT_EQ(MpiTransport::silent_peers(5.0), "");  // not silent for 5 s
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string silent = MpiTransport::silent_peers(0.01);
  EXPECT_NE(silent.find("rank " + std::to_string(world) + " on " + std::string(host, static_cast<std::size_t>(len)) +
                        " (last heard "),
            std::string::npos)
      << silent;
}

// shm: a peer that never arrives is a TimeoutError naming the collective, the size and that
// peer, not a hang; the segment then refuses further calls instead of mixing steps.
TEST(Errors, ShmAllreduceWithAStalledPeerTimesOutNamingThePeer) {
  CommOptions o;
  o.timeout_s = 0.3;
  Communicator comm(MPI_COMM_WORLD, o);  // its own segment: the test breaks it
  const int p = comm.size(), r = comm.rank();
  std::vector<float> x(16, 1.0f);
  // The first call makes the segment on every rank (collective) and works.
  comm.allreduce(x.data(), x.data(), x.size(), DataType::f32, ReduceOp::sum, "shm");
  EXPECT_EQ(x[15], static_cast<float>(p));
  if (p == 1) GTEST_SKIP() << "needs a peer to stall";
  if (r == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string m = message_of<TimeoutError>(
        [&] { comm.allreduce(x.data(), x.data(), x.size(), DataType::f32, ReduceOp::sum, "shm"); });
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_NE(m.find("timeout after 0.3 s on rank 0"), std::string::npos) << m;
    EXPECT_NE(m.find("allreduce shm f32 sum 64 B"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 1's shm ready flag"), std::string::npos) << m;
    EXPECT_LT(secs, 10.0);
    EXPECT_THROW(comm.allreduce(x.data(), x.data(), x.size(), DataType::f32, ReduceOp::sum, "shm"), TransportError);
  }
  // Rank 0 timed out alone; the communicator (and its window) is freed by all ranks together.
  MPI_Barrier(MPI_COMM_WORLD);
}

// Mutation check of the shm flag protocol: rank 1 claims its slots ready before it has filled
// them and enters the call late, so its peers reduce whatever its slot held before. The data
// checker must count those elements wrong (a protocol broken this way would fail the suite).
TEST(Errors, ShmForgedReadyFlagIsCaughtByTheChecker) {
  Communicator comm(MPI_COMM_WORLD);  // its own segment: the test breaks its protocol
  const int p = comm.size(), r = comm.rank();
  if (p == 1) GTEST_SKIP() << "needs a peer to forge a flag";
  check::Spec spec{Collective::allreduce, DataType::f32, ReduceOp::sum, 4096, 0, p, 7};
  std::vector<float> send(check::send_elements(spec)), recv(check::recv_elements(spec));
  auto call = [&] {
    check::fill_send(spec, r, send.data());
    comm.allreduce(send.data(), recv.data(), spec.count, spec.type, spec.op, "shm");
    return check::check_recv(spec, r, recv.data()).wrong;
  };
  EXPECT_EQ(call(), 0u);  // the protocol as written: right
  spec.seed = 8;          // new inputs, so that last call's slots are stale
  if (r == 1) {
    auto* mpi = comm.transport().as_mpi();
    ASSERT_NE(mpi, nullptr);
    auto* seg = dynamic_cast<detail::ShmSegment*>(mpi->find_algorithm_state("shm"));
    ASSERT_NE(seg, nullptr) << "the shm call kept no segment on the transport";
    seg->flags(1).ready.store(std::uint64_t{1} << 40, std::memory_order_release);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::size_t wrong = call();
  if (r != 1) {
    EXPECT_GT(wrong, spec.count / 2) << "rank " << r << ": the checker missed a stale slot";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The generic state slot (Transport::algorithm_state): made once per transport, found again by
// the algorithm's name, destroyed with the transport, the last made first and all of them while
// the transport's communicator is still live (shm's window and hier's communicators are made
// from it and must go first).
TEST(Transport, AlgorithmStatesAreMadeOnceAndFreedLastMadeFirstBeforeTheCommunicator) {
  struct Recorded final : AlgorithmState {
    Recorded(std::string n, const MpiTransport& owner, std::vector<std::string>& freed)
        : name(std::move(n)), t(owner), log(freed) {}
    ~Recorded() override { log.push_back(name + (t.comm() != MPI_COMM_NULL ? " (communicator live)" : " (freed)")); }
    std::string name;
    const MpiTransport& t;
    std::vector<std::string>& log;
  };
  std::vector<std::string> log;
  int made = 0;
  {
    MpiTransport t(MPI_COMM_WORLD, 10);
    EXPECT_EQ(t.find_algorithm_state("first"), nullptr);
    auto make = [&](const char* n) {
      return [&, n] {
        ++made;
        return std::make_unique<Recorded>(n, t, log);
      };
    };
    Recorded& first = t.algorithm_state<Recorded>("first", make("first"));
    Recorded& second = t.algorithm_state<Recorded>("second", make("second"));
    EXPECT_EQ(&t.algorithm_state<Recorded>("first", make("first again")), &first);
    EXPECT_EQ(t.find_algorithm_state("second"), &second);
    EXPECT_EQ(made, 2);
    // A failed make keeps nothing: the next call makes it.
    EXPECT_THROW(
        t.algorithm_state<Recorded>("third", []() -> std::unique_ptr<Recorded> { throw TransportError("no"); }),
        TransportError);
    EXPECT_EQ(t.find_algorithm_state("third"), nullptr);
    EXPECT_TRUE(log.empty());
  }
  EXPECT_EQ(log, (std::vector<std::string>{"second (communicator live)", "first (communicator live)"}));
}

// shm and hier keep their state on the communicator's transport, by their names; the transport
// itself knows neither.
TEST(Transport, ShmAndHierKeepTheirStateOnTheTransport) {
  Communicator comm(MPI_COMM_WORLD);
  MpiTransport* mpi = comm.transport().as_mpi();
  ASSERT_NE(mpi, nullptr);
  EXPECT_EQ(mpi->find_algorithm_state("shm"), nullptr);
  EXPECT_EQ(mpi->find_algorithm_state("hier"), nullptr);
  std::vector<float> x(64, 1.0f);
  comm.allreduce(x.data(), x.data(), x.size(), DataType::f32, ReduceOp::sum, "shm");
  EXPECT_NE(dynamic_cast<detail::ShmSegment*>(mpi->find_algorithm_state("shm")), nullptr);
  EXPECT_EQ(mpi->find_algorithm_state("hier"), nullptr);
  comm.allreduce(x.data(), x.data(), x.size(), DataType::f32, ReduceOp::sum, "hier");
  EXPECT_NE(mpi->find_algorithm_state("hier"), nullptr);
  EXPECT_EQ(x[0], static_cast<float>(comm.size() * comm.size()));
}

// Unbound ranks, or ranks bound to a core each (mpirun's default for 2 ranks): the node is
// oversubscribed only with more ranks than CPUs. (The check once compared the node's ranks with
// one rank's own affinity, so two ranks bound to two cores counted as oversubscribed and every
// wait slept: ctest runs this also under --bind-to core.)
TEST(Communicator, OversubscribedCountsTheNodesCpusNotOneRanks) {
  if (const char* y = std::getenv("OMPI_MCA_mpi_yield_when_idle"); y != nullptr && std::string(y) == "1")
    GTEST_SKIP() << "the MPI library yields (OversubscribedWhenTheMpiLibraryYields)";
  Communicator comm(MPI_COMM_WORLD);
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (cpus < comm.local_size()) {
    EXPECT_TRUE(comm.oversubscribed());
  } else {
    EXPECT_FALSE(comm.oversubscribed()) << comm.local_size() << " ranks, " << cpus << " CPUs";
  }
}

// Where the launcher tells Open MPI to yield when idle (it does so itself for more ranks than
// slots; here the variable, with 2 ranks bound to 2 cores), the node counts as oversubscribed:
// its ranks then sleep in their waits rather than spin. (Read from libmpi's flag; the tool
// interface's read took 0.2 s a process.)
TEST(Communicator, OversubscribedWhenTheMpiLibraryYields) {
  const char* y = std::getenv("OMPI_MCA_mpi_yield_when_idle");
  if (y == nullptr || std::string(y) != "1") GTEST_SKIP() << "OMPI_MCA_mpi_yield_when_idle=1 not set";
  Communicator comm(MPI_COMM_WORLD);
  EXPECT_TRUE(comm.oversubscribed()) << comm.local_size() << " ranks";
}

int main(int argc, char** argv) { return commscope::testing::run_tests_on_every_rank(argc, argv); }
