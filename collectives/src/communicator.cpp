#include "commscope/collectives/communicator.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/mpi_transport.hpp"

namespace commscope {

namespace {

// True when a launcher (mpirun, mpiexec, srun) started this process: they all leave one of
// these in the environment.
bool launched() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_STEP_ID"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// Open MPI's isolated singleton names its session directory alike in every process
// (<tmp>/ompi.<host>.<uid>/jf.0/1/0): two started at once share it, and one's MPI_Finalize
// removes what the other is creating, which then fails MPI_Init ("A call to mkdir was unable to
// create the desired directory ... File exists": 1 of 100 fuzzed trainer runs, two at a time,
// in one CI run). Each singleton gets its own under the same top directory; Open MPI removes it at
// MPI_Finalize. Its name is its pid and a random tag (singleton.<pid>.<tag>), not pid.<pid> as
// mpirun names its own: an mpirun that was killed leaves its directory behind, and where pids wrap
// (pid_max 32768, a few thousand launches) a singleton given that pid took the stale directory
// over, and left it behind with the dead job's files at its MPI_Finalize. A directory the user named
// is kept.
void own_singleton_session_dir() {
  if (std::getenv("OMPI_MCA_orte_jobfam_session_dir") != nullptr) return;
  std::string base = "/tmp";
  for (const char* name : {"OMPI_MCA_orte_tmpdir_base", "TMPDIR", "TEMP", "TMP"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') {
      base = v;
      break;
    }
  }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  std::string node = host;
  node = node.substr(0, node.find('.'));
  std::uint64_t tag = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  try {
    tag ^= std::random_device{}();
  } catch (const std::exception&) {  // no entropy source: the clock's nanoseconds alone
  }
  char tag_hex[24];
  std::snprintf(tag_hex, sizeof tag_hex, "%08llx", static_cast<unsigned long long>(tag & 0xffffffffULL));
  const std::string dir = base + "/ompi." + node + "." + std::to_string(getuid()) + "/singleton." +
                          std::to_string(getpid()) + "." + tag_hex;
  ::setenv("OMPI_MCA_orte_jobfam_session_dir", dir.c_str(), 0);
}

// Whether the MPI library idles by yielding the core: Open MPI's `mpi_yield_when_idle`, which it
// sets at MPI_Init from the control variable or when the launcher says the ranks outnumber the
// slots; the CPU masks cannot tell when hosts share cores (namespaces emulating a cluster), and
// spinning there starves the rank waited for. Read as libmpi's own flag, by its symbol (false in
// other MPI libraries, which have no such setting): through the tool interface it took 0.2 s a
// process, as Open MPI's MPI_T_init_thread opens every component of every framework to list the
// control variables (PSM's library sleeps in its constructor, libfabric starts), in every
// commscope tool's start (the trainer's --help: 0.27 s, 0.05 s without).
bool read_mpi_yields_when_idle() {
  const void* flag = dlsym(RTLD_DEFAULT, "ompi_mpi_yield_when_idle");  // Open MPI 4: a bool
  return flag != nullptr && *static_cast<const bool*>(flag);
}

}  // namespace

bool mpi_yields_when_idle() {
  static const bool yes = read_mpi_yields_when_idle();
  return yes;
}

// COMMSCOPE_MPI_THREAD_LEVEL, or SINGLE (see MpiRuntime). MPI is not up yet: a bad value is
// said on stderr and the default used, rather than failing before any rank can report it.
namespace {
int requested_thread_level() {
  const char* v = std::getenv("COMMSCOPE_MPI_THREAD_LEVEL");
  if (!v || !*v) return MPI_THREAD_SINGLE;
  const std::string s(v);
  if (s == "single") return MPI_THREAD_SINGLE;
  if (s == "funneled") return MPI_THREAD_FUNNELED;
  if (s == "serialized") return MPI_THREAD_SERIALIZED;
  if (s == "multiple") return MPI_THREAD_MULTIPLE;
  std::fprintf(stderr, "commscope: ignoring COMMSCOPE_MPI_THREAD_LEVEL='%s' (single, funneled, serialized, multiple)\n",
               v);
  return MPI_THREAD_SINGLE;
}
}  // namespace

MpiRuntime::MpiRuntime(int& argc, char**& argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // One rank without a launcher: Open MPI's singleton start execs its daemon (orted), which a
    // machine with only the MPI libraries (a GPU node, a container) lacks; isolated, it needs none.
    // A value the user set is kept; other MPI libraries ignore the variable.
    if (!launched()) {
      ::setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
      if (std::strcmp(std::getenv("OMPI_MCA_ess_singleton_isolated"), "1") == 0) own_singleton_session_dir();
    }
    int provided = 0;
    COMMSCOPE_MPI_CHECK(MPI_Init_thread(&argc, &argv, requested_thread_level(), &provided));
    owns_ = true;
  }
}

MpiRuntime::~MpiRuntime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

Communicator::Communicator(MPI_Comm comm, CommOptions options)
    : transport_(std::make_unique<MpiTransport>(comm, options.timeout_s)), options_(options) {
  if (options_.algo.segment_bytes == 0) throw InvalidArgument("segment size must be at least 1 byte");
  MPI_Comm node = MPI_COMM_NULL;
  COMMSCOPE_MPI_CHECK(MPI_Comm_split_type(transport_->comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_Comm_size(node, &local_size_);
  // The CPUs the node's ranks may run on, together. Comparing with this rank's own mask took
  // mpirun's default binding (one core per rank) for oversubscription, and ring, tree and rhd
  // then slept 20 us (60-500 us in a VM) in waits on an idle node.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_SET(0, &mine);
  std::vector<cpu_set_t> all(static_cast<std::size_t>(local_size_));
  COMMSCOPE_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node));
  MPI_Comm_free(&node);
  cpu_set_t node_set;
  CPU_ZERO(&node_set);
  for (cpu_set_t& s : all) CPU_OR(&node_set, &node_set, &s);
  node_cpus_ = std::max(1, CPU_COUNT(&node_set));
  // Every rank's own library answers; one rank yielding alone would not matter for agreement
  // (the waiting policy is local), but the launcher sets the variable for the whole job.
  mpi_yields_ = mpi_yields_when_idle();
  transport_->set_yield_when_idle(options_.yield_when_oversubscribed && oversubscribed());
}

Communicator::~Communicator() = default;
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;

Communicator Communicator::split_by_node() const {
  MPI_Comm node = MPI_COMM_NULL;
  COMMSCOPE_MPI_CHECK(MPI_Comm_split_type(transport_->comm(), MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &node));
  Communicator result(node, options_);
  MPI_Comm_free(&node);
  return result;
}

int Communicator::rank() const {
  return transport_->rank();
}
int Communicator::size() const {
  return transport_->size();
}
MPI_Comm Communicator::mpi_comm() const {
  return transport_->comm();
}
Transport& Communicator::transport() {
  return *transport_;
}

void Communicator::barrier() {
  const std::uint64_t token = watch_ ? watch_->posted(nullptr) : 0;
  COMMSCOPE_MPI_CHECK(MPI_Barrier(transport_->comm()));
  if (watch_) watch_->completed(token);
}

void Communicator::run_watched(const CollArgs& args, const Algorithm& algo) {
  if (!watch_) return algo.run(*transport_, args, options_.algo);
  const std::uint64_t token = watch_->posted(&args);
  algo.run(*transport_, args, options_.algo);
  watch_->completed(token);
}

namespace {

[[noreturn]] void invalid(const CollArgs& a, const std::string& what) {
  throw InvalidArgument(std::string(to_string(a.coll)) + ": " + what);
}

bool overlaps(const void* p, std::size_t pn, const void* q, std::size_t qn) {
  const auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(q);
  return pn > 0 && qn > 0 && a < b + qn && b < a + pn;
}

// alltoallv: n counts and displacements per side whose totals stay within `count`; the send
// and recv regions must not overlap (there is no in-place form).
void validate_alltoallv(const CollArgs& a, int rank, int nranks, std::size_t max_elems) {
  const auto n = static_cast<std::size_t>(nranks);
  if (a.count == 0 && a.send_counts.empty() && a.recv_counts.empty() && a.send_displs.empty() && a.recv_displs.empty())
    return;
  struct Side {
    const char* name;
    std::span<const std::size_t> counts, displs;
    const void* buf;
    std::size_t total = 0, first = SIZE_MAX, end = 0;  // elements, and the extent [first, end)
  };
  Side sides[2] = {{"send", a.send_counts, a.send_displs, a.send}, {"recv", a.recv_counts, a.recv_displs, a.recv}};
  for (Side& s : sides) {
    if (s.counts.size() != n || s.displs.size() != n) {
      invalid(a, std::string(s.name) + " counts and displacements need " + std::to_string(n) + " entries each, got " +
                     std::to_string(s.counts.size()) + " and " + std::to_string(s.displs.size()));
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (s.counts[j] > max_elems || s.displs[j] > max_elems - s.counts[j])
        invalid(a, std::string(s.name) + " block " + std::to_string(j) + " exceeds the address space");
      s.total += s.counts[j];
      if (s.total > a.count) {
        invalid(a, std::string("this rank's ") + s.name + " counts add up to more than count " +
                       std::to_string(a.count) + " (count bounds every rank's total)");
      }
      if (s.counts[j] == 0) continue;
      s.first = std::min(s.first, s.displs[j]);
      s.end = std::max(s.end, s.displs[j] + s.counts[j]);
    }
    if (s.total > 0 && !s.buf)
      invalid(a, std::string(s.name) + " buffer is null with " + std::to_string(s.total) + " elements");
  }
  const auto r = static_cast<std::size_t>(rank);
  if (a.send_counts[r] != a.recv_counts[r]) {
    invalid(a, "this rank sends itself " + std::to_string(a.send_counts[r]) + " elements but receives " +
                   std::to_string(a.recv_counts[r]));
  }
  const std::size_t es = type_size(a.type);
  const Side& s = sides[0];
  const Side& d = sides[1];
  if (s.total > 0 && d.total > 0 &&
      overlaps(static_cast<const std::byte*>(a.send) + s.first * es, (s.end - s.first) * es,
               static_cast<const std::byte*>(a.recv) + d.first * es, (d.end - d.first) * es)) {
    invalid(a, "send and recv regions overlap (alltoallv has no in-place form)");
  }
}

}  // namespace

void validate(const CollArgs& a, int rank, int nranks) {
  bool known_type = false, known_op = false, known_coll = false;
  for (DataType t : kAllDataTypes) known_type |= t == a.type;
  for (ReduceOp o : kAllReduceOps) known_op |= o == a.op;
  for (Collective c : kAllCollectives) known_coll |= c == a.coll;
  if (!known_coll) throw InvalidArgument("invalid collective value " + std::to_string(static_cast<int>(a.coll)));
  if (!known_type) invalid(a, "invalid datatype value " + std::to_string(static_cast<int>(a.type)));
  if (is_reducing(a.coll) && !known_op)
    invalid(a, "invalid reduction op value " + std::to_string(static_cast<int>(a.op)));
  if (is_rooted(a.coll) && (a.root < 0 || a.root >= nranks)) {
    invalid(a, "root " + std::to_string(a.root) + " out of range [0, " + std::to_string(nranks) + ")");
  }
  // Bytes of each side; the blocked collectives (allgather, reducescatter, alltoall, gather,
  // scatter) hold count * nranks elements on one side.
  const std::size_t es = type_size(a.type);
  const bool blocked = collective_bytes(a.coll, 1, a.type, nranks) != es;
  const std::size_t max_elems = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / es /
                                static_cast<std::size_t>(blocked ? nranks : 1);
  if (a.count > max_elems) {
    std::ostringstream os;
    os << "count overflow: " << a.count << " elements of " << to_string(a.type)
       << (blocked ? " x " + std::to_string(nranks) + " ranks" : std::string()) << " exceed the address space";
    invalid(a, os.str());
  }
  if (a.coll == Collective::alltoallv) return validate_alltoallv(a, rank, nranks, max_elems);
  if (a.count == 0) return;
  const std::size_t n = a.count * es, big = n * static_cast<std::size_t>(nranks);
  std::size_t send_bytes = n, recv_bytes = n;
  bool need_send = true, need_recv = true;
  switch (a.coll) {
    case Collective::allgather:
      recv_bytes = big;
      break;
    case Collective::reducescatter:
      send_bytes = big;
      break;
    case Collective::alltoall:
      send_bytes = recv_bytes = big;
      break;
    case Collective::reduce:
      need_recv = rank == a.root;
      break;
    case Collective::broadcast:
      need_send = rank == a.root;
      break;
    case Collective::gather:
      recv_bytes = big;
      need_recv = rank == a.root;
      break;
    case Collective::scatter:
      send_bytes = big;
      need_send = rank == a.root;
      break;
    case Collective::allreduce:
    case Collective::sendrecv:
    case Collective::alltoallv:
      break;
  }
  if (need_send && !a.send) invalid(a, "send buffer is null with count " + std::to_string(a.count));
  if (need_recv && !a.recv) invalid(a, "recv buffer is null with count " + std::to_string(a.count));
  if (!need_send || !need_recv) return;
  // Buffers either do not overlap or are exactly in place (NCCL's conventions).
  const auto* s = static_cast<const std::byte*>(a.send);
  const auto* r = static_cast<const std::byte*>(a.recv);
  const std::size_t off = n * static_cast<std::size_t>(rank);
  const bool in_place = a.coll == Collective::allgather || a.coll == Collective::gather        ? s == r + off
                        : a.coll == Collective::reducescatter || a.coll == Collective::scatter ? r == s + off
                                                                                               : s == r;
  if (!in_place && overlaps(s, send_bytes, r, recv_bytes)) {
    invalid(a, "send and recv buffers overlap without being the in-place layout");
  }
}

bool CollArgs::operator==(const CollArgs& o) const noexcept {
  const auto same = [](std::span<const std::size_t> x, std::span<const std::size_t> y) {
    return x.data() == y.data() && x.size() == y.size();
  };
  return coll == o.coll && send == o.send && recv == o.recv && count == o.count && type == o.type && op == o.op &&
         root == o.root && same(send_counts, o.send_counts) && same(send_displs, o.send_displs) &&
         same(recv_counts, o.recv_counts) && same(recv_displs, o.recv_displs);
}

void Communicator::run(const CollArgs& args, const Algorithm& algo) {
  if (&algo == checked_algo_ && args == checked_args_) {
    if (args.count != 0) run_watched(args, algo);
    return;
  }
  validate(args, rank(), size());
  if (!algo.supports(args.coll)) {
    std::string have;
    for (const Algorithm* a : algorithms()) {
      if (a->supports(args.coll)) have += (have.empty() ? "" : ", ") + std::string(a->name());
    }
    throw UnsupportedCollective("algorithm '" + std::string(algo.name()) + "' has no " +
                                std::string(to_string(args.coll)) + " (algorithms with " +
                                std::string(to_string(args.coll)) + ": " + have + ")");
  }
  // Plain values: the text of an error message is made only when an error is raised.
  transport_->set_context(call_context(args, algo.name(), size()));
  // alltoallv's counts may change behind unchanged spans: it is validated on every call.
  checked_args_ = args;
  checked_algo_ = args.coll == Collective::alltoallv ? nullptr : &algo;
  if (args.count == 0) return;  // every rank passes the same count, so every rank returns here
  run_watched(args, algo);
}

void Communicator::allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                             std::string_view algo) {
  run({Collective::allreduce, send, recv, count, type, op, 0}, algo);
}
void Communicator::allgather(const void* send, void* recv, std::size_t count, DataType type, std::string_view algo) {
  run({Collective::allgather, send, recv, count, type, ReduceOp::sum, 0}, algo);
}
void Communicator::reducescatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                                 std::string_view algo) {
  run({Collective::reducescatter, send, recv, count, type, op, 0}, algo);
}
void Communicator::reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
                          std::string_view algo) {
  run({Collective::reduce, send, recv, count, type, op, root}, algo);
}
void Communicator::broadcast(const void* send, void* recv, std::size_t count, DataType type, int root,
                             std::string_view algo) {
  run({Collective::broadcast, send, recv, count, type, ReduceOp::sum, root}, algo);
}
void Communicator::alltoall(const void* send, void* recv, std::size_t count, DataType type, std::string_view algo) {
  run({Collective::alltoall, send, recv, count, type, ReduceOp::sum, 0}, algo);
}
void Communicator::gather(const void* send, void* recv, std::size_t count, DataType type, int root,
                          std::string_view algo) {
  run({Collective::gather, send, recv, count, type, ReduceOp::sum, root}, algo);
}
void Communicator::scatter(const void* send, void* recv, std::size_t count, DataType type, int root,
                           std::string_view algo) {
  run({Collective::scatter, send, recv, count, type, ReduceOp::sum, root}, algo);
}
void Communicator::sendrecv(const void* send, void* recv, std::size_t count, DataType type, std::string_view algo) {
  run({Collective::sendrecv, send, recv, count, type, ReduceOp::sum, 0}, algo);
}
void Communicator::alltoallv(const void* send, std::span<const std::size_t> send_counts,
                             std::span<const std::size_t> send_displs, void* recv,
                             std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs,
                             std::size_t count, DataType type, std::string_view algo) {
  run({Collective::alltoallv, send, recv, count, type, ReduceOp::sum, 0, send_counts, send_displs, recv_counts,
       recv_displs},
      algo);
}

}  // namespace commscope
