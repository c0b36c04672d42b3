// The entry point of the collectives library: a communicator over an MPI communicator that
// runs any collective with any algorithm, chosen by name at run time.
//
//   commscope::MpiRuntime mpi(argc, argv);             // MPI_Init / MPI_Finalize (RAII)
//   commscope::Communicator world;                      // dup of MPI_COMM_WORLD
//   world.allreduce(send, recv, n, DataType::f32, ReduceOp::sum, "ring");
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/types.hpp"

namespace commscope {

class MpiTransport;

// Initialises MPI (unless already initialised) and finalises it at scope exit if it did.
//
// Thread level: MPI_THREAD_SINGLE unless COMMSCOPE_MPI_THREAD_LEVEL says `funneled`,
// `serialized` or `multiple`. Only the main thread calls MPI in every commscope tool (the
// watchdog, NCCL's and the BLAS's threads never do), and Open MPI 4.1 slows every call above
// SINGLE: a 2-rank shared-memory allreduce takes +25% at 8 B and +30% at 2 KiB with FUNNELED,
// which IMB-MPI1 and OSU (MPI_Init: SINGLE) do not pay. The level provided is in the bench's
// environment record (mpi_thread_level).
class MpiRuntime {
 public:
  MpiRuntime(int& argc, char**& argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

 private:
  bool owns_ = false;
};

// Whether the MPI library's idle ranks yield the CPU rather than spin (Open MPI's
// mpi_yield_when_idle, set from its control variable or where the launcher says the ranks
// outnumber the slots; false in other MPI libraries). A yielding rank stays ready to run while it
// waits, so the scheduler's run delay of its threads counts its waits for messages too.
bool mpi_yields_when_idle();

struct CommOptions {
  AlgoOptions algo;
  // Deadline of every point-to-point wait, seconds; <= 0 waits forever. The `mpi` algorithm
  // calls blocking MPI collectives, which have no deadline (tools add a watchdog).
  double timeout_s = 300;
  // When more ranks share a node than it has cores available to them, waiting ranks sleep
  // between polls instead of spinning (spinning would starve the ranks they wait for).
  bool yield_when_oversubscribed = true;
};

// Sees every call a Communicator makes (the flight recorder, commscope/profiler/flight_watch.hpp):
// `posted` before the algorithm runs (args: nullptr for a barrier), `completed` after it
// returned; a call that throws (a timeout, an MPI error) stays posted and not completed, which is
// where the rank was.
class CallWatch {
 public:
  virtual ~CallWatch() = default;
  virtual std::uint64_t posted(const CollArgs* args) noexcept = 0;
  virtual void completed(std::uint64_t token) noexcept = 0;
};

class Communicator {
 public:
  // Duplicates `comm`. MPI must be initialised.
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD, CommOptions options = {});
  ~Communicator();
  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;

  // Ranks that share a node (MPI_COMM_TYPE_SHARED), same options.
  Communicator split_by_node() const;

  int rank() const;
  int size() const;
  MPI_Comm mpi_comm() const;
  const CommOptions& options() const { return options_; }
  Transport& transport();
  // Ranks on this node, and whether they outnumber the CPUs they may run on together (the
  // union of the node's ranks' affinity masks: a rank bound to one core sees one CPU, and two
  // ranks bound to two cores are not oversubscribed).
  int local_size() const { return local_size_; }
  // Also true where the MPI library yields when idle (Open MPI's mpi_yield_when_idle: set by
  // its launcher for more ranks than slots, or by the user), e.g. emulated hosts sharing cores.
  bool oversubscribed() const { return local_size_ > node_cpus_ || mpi_yields_; }

  // Collectives; `algo` is a name from algorithms() ("mpi", "ring", "tree", "rhd", "shm", "hier").
  // Counts and in-place conventions: see CollArgs.
  void allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                 std::string_view algo = "mpi");
  void allgather(const void* send, void* recv, std::size_t count, DataType type, std::string_view algo = "mpi");
  void reducescatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                     std::string_view algo = "mpi");
  void reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
              std::string_view algo = "mpi");
  void broadcast(const void* send, void* recv, std::size_t count, DataType type, int root,
                 std::string_view algo = "mpi");
  void alltoall(const void* send, void* recv, std::size_t count, DataType type, std::string_view algo = "mpi");
  void gather(const void* send, void* recv, std::size_t count, DataType type, int root, std::string_view algo = "mpi");
  void scatter(const void* send, void* recv, std::size_t count, DataType type, int root, std::string_view algo = "mpi");
  // The ring shift: send `count` elements to rank + 1, receive as many from rank - 1 (mod n).
  void sendrecv(const void* send, void* recv, std::size_t count, DataType type, std::string_view algo = "mpi");
  // Per-peer counts and displacements in elements (see CollArgs); `count`, the same on every
  // rank, bounds every rank's send and recv totals.
  void alltoallv(const void* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_displs,
                 void* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs,
                 std::size_t count, DataType type, std::string_view algo = "mpi");

  // Validate `args` (throws InvalidArgument / UnsupportedCollective) and run it.
  void run(const CollArgs& args, const Algorithm& algo);
  void run(const CollArgs& args, std::string_view algo) { run(args, find_algorithm(algo)); }

  void barrier();

  // Every later call is shown to `watch` (nullptr: none); moves with the communicator.
  void watch(std::shared_ptr<CallWatch> watch) { watch_ = std::move(watch); }
  // The watch, taken off until watch() gives it back: a benchmark's timed loop runs its calls
  // unwatched and shows the watch the loop as one call (a watch's clock readings would be timed
  // with every call).
  std::shared_ptr<CallWatch> unwatch() { return std::exchange(watch_, nullptr); }

 private:
  void run_watched(const CollArgs& args, const Algorithm& algo);

  std::unique_ptr<MpiTransport> transport_;
  CommOptions options_;
  int local_size_ = 1;
  int node_cpus_ = 1;
  bool mpi_yields_ = false;
  // The last call that passed validation: a benchmark repeats one call many times, and
  // repeating it needs no new checks (nor a new error context).
  CollArgs checked_args_;
  const Algorithm* checked_algo_ = nullptr;
  std::shared_ptr<CallWatch> watch_;
};

// Throws InvalidArgument describing the first problem with `args` on a communicator of
// `nranks` ranks where this process is `rank`; the checks Communicator::run makes.
void validate(const CollArgs& args, int rank, int nranks);

// The error-message context of running `args` with algorithm `algo` on `nranks` ranks.
inline CallContext call_context(const CollArgs& args, std::string_view algo, int nranks) {
  return CallContext{args.coll, algo, args.type, args.op, args.root, args.count, nranks};
}

}  // namespace commscope
