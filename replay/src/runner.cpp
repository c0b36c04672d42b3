#include "runner.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "backend.hpp"
#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/replay/gap_budget.hpp"

namespace commscope::replay {
namespace {

namespace prof = commscope::profiler;

// A recorded group on this rank: its communicator over the played members (null when this
// rank is not one, or for a link) and its numbering in the replay's profile.
struct Group {
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<prof::CommGroup> profiled;  // null for the profiled communicator ("")
  int recorded_members = 0;
};

// Every rank splits MPI_COMM_WORLD once per label, in the plan's (sorted) order.
// (Only played ranks run, so the members left out by a mapping are simply absent.)
std::map<std::string, Group> rebuild_groups(const ReplayPlan& plan, int me, const CommOptions& options,
                                            CollectiveBackend& backend) {
  std::map<std::string, Group> groups;
  for (const auto& [label, parsed] : plan.groups) {
    Group& g = groups[label];
    g.recorded_members = static_cast<int>(parsed.members.size());
    if (!label.empty()) g.profiled = std::make_unique<prof::CommGroup>(label);
    if (parsed.link) continue;
    const bool member = std::binary_search(parsed.members.begin(), parsed.members.end(), me);
    MPI_Comm split = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, me, &split);
    if (split == MPI_COMM_NULL) continue;
    g.comm = std::make_unique<Communicator>(split, options);
    MPI_Comm_free(&split);
    backend.add_group(label, *g.comm);
  }
  return groups;
}

// The largest buffer any op of `rank` needs (bytes).
std::size_t buffer_bytes(const RankPlan& rank) {
  std::int64_t most = 64;
  for (const ReplayIteration& it : rank.iterations)
    for (const ReplayOp& op : it.ops) most = std::max(most, op.bytes);
  return static_cast<std::size_t>(most);
}

// By recorded rank: the largest message it sends recorded rank `me` (bytes). A receive takes
// that many, not its own recorded bytes: the program's tags let its messages from one peer
// match out of order (a receive of 8 B before one of 4 KiB that was sent first), the replay's
// single tag matches them in order, and a message larger than its receive would be truncated.
std::map<int, std::int64_t> largest_messages_to(const ReplayPlan& plan, int me) {
  std::map<int, std::int64_t> most;
  for (int r = 0; r < plan.recorded_ranks; ++r)
    for (const ReplayIteration& it : plan.ranks[static_cast<std::size_t>(r)].iterations)
      for (const ReplayOp& op : it.ops)
        if (op.kind == OpKind::kSend && op.peer == me) most[r] = std::max(most[r], op.bytes);
  return most;
}

class Replayer {
 public:
  Replayer(const ReplayPlan& plan, const RankMapping& mapping, const RunOptions& options)
      : plan_(plan), mapping_(mapping), options_(options) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    me_ = mapping.recorded[static_cast<std::size_t>(rank_)];
    CommOptions comm_options;
    comm_options.timeout_s = options.timeout_s;
    world_ = std::make_unique<Communicator>(MPI_COMM_WORLD, comm_options);
    backend_ = options.device == "cuda" ? make_device_backend(*world_) : make_host_backend();
    groups_ = rebuild_groups(plan, me_, comm_options, *backend_);
    MPI_Comm_dup(MPI_COMM_WORLD, &messages_);
    incoming_ = largest_messages_to(plan, me_);
    leads_ = iteration_leads(plan, mapping, me_);
    std::size_t n = buffer_bytes(plan.ranks[static_cast<std::size_t>(me_)]);
    for (const auto& [peer, bytes] : incoming_) n = std::max(n, static_cast<std::size_t>(bytes));
    send_.assign(n, 0);
    recv_.assign(n, 0);
    // nccl (cuda only): NCCL's own collectives, a null algorithm; what the others lack runs
    // with mpi on the host and with nccl on a device.
    algo_ = options.algo == "nccl" ? nullptr : &find_algorithm(options.algo);
    fallback_ = options.device == "cuda" ? nullptr : &find_algorithm("mpi");
    algo_name_ = prof::name_id(options.algo);
    fallback_name_ = prof::name_id(options.device == "cuda" ? "nccl" : "mpi");
  }
  ~Replayer() { MPI_Comm_free(&messages_); }
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  void run(RunCounts& counts) {
    const std::vector<ReplayIteration>& iterations = plan_.ranks[static_cast<std::size_t>(me_)].iterations;
    for (std::size_t i = 0; i < iterations.size(); ++i) {
      const ReplayIteration& it = iterations[i];
      if (it.number < 0) {
        run_ops(it, counts);
        continue;
      }
      if (!leads_.empty()) {  // together, then as late as recorded (plan.hpp's iteration_leads)
        world_->barrier();
        spend_gap(options_.gaps, leads_[i]);
      }
      prof::IterationScope step(it.number);
      run_ops(it, counts);
    }
  }

 private:
  void run_ops(const ReplayIteration& it, RunCounts& counts) {
    budget_.reset();
    for (const ReplayOp& op : it.ops) {
      gap(op.gap_before_ns);
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
        if (!message(op)) ++counts.dropped_messages;
      } else {
        collective(op, counts);
      }
      ++counts.ops;
    }
    gap(it.tail_ns);
    if (!pending_.empty()) MPI_Waitall(static_cast<int>(pending_.size()), pending_.data(), MPI_STATUSES_IGNORE);
    pending_.clear();
    if (!posted_requests_.empty())
      MPI_Waitall(static_cast<int>(posted_requests_.size()), posted_requests_.data(), MPI_STATUSES_IGNORE);
    posted_requests_.clear();
    for (Buffer& b : posted_) spare_.push_back(std::move(b));
    posted_.clear();
  }

  // The recorded gap `ns`, less what the gaps before it in the iteration ran over (gap_budget.hpp).
  void gap(std::int64_t ns) {
    if (options_.gaps == GapMode::kNone) return;
    const std::int64_t asked = budget_.next(ns);
    if (asked <= 0) return;
    const auto start = std::chrono::steady_clock::now();
    if (options_.gaps == GapMode::kBusy) {
      prof::KernelScope k(prof::name_id("replay.compute"));
      spend_gap(options_.gaps, asked);
    } else {
      spend_gap(options_.gaps, asked);
    }
    budget_.spent(
        asked, std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  }

  void collective(const ReplayOp& op, RunCounts& counts) {
    Group& g = groups_.at(op.group);
    Communicator& comm = *g.comm;  // this rank ran it there, so it is a member
    const prof::NameId name = prof::name_id(op.name);
    if (op.kind == OpKind::kBarrier) {
      scope(name, algo_name_, 0, g, [&] { comm.barrier(); });
      return;
    }
    const Elements e = elements_of(op.collective, op.bytes, g.recorded_members);
    CollArgs args;
    args.coll = op.collective == Collective::alltoallv ? Collective::alltoall : op.collective;
    args.count = e.count;
    args.type = e.type;
    const std::int64_t bytes = static_cast<std::int64_t>(collective_bytes(args.coll, e.count, e.type, comm.size()));
    const Algorithm* algo = algo_;
    if (algo != nullptr && !algo->supports(args.coll)) {
      algo = fallback_;
      ++counts.fallback[std::string(collective_name(args.coll))];
    }
    scope(name, algo == algo_ ? algo_name_ : fallback_name_, bytes, g,
          [&] { backend_->run(op.group, comm, args, static_cast<std::size_t>(bytes), algo); });
  }

  template <class Call>
  void scope(prof::NameId name, prof::NameId algo, std::int64_t bytes, Group& g, Call&& call) {
    if (g.profiled) {
      prof::CommScope c(name, algo, bytes, *g.profiled);
      call();
    } else {
      prof::CommScope c(name, algo, bytes);
      call();
    }
  }

  // false: the other side is played by nobody.
  bool message(const ReplayOp& op) {
    const int peer = mapping_.replay_rank(op.peer);
    if (peer < 0) return false;
    Group& g = groups_.at(op.group);
    int n = static_cast<int>(op.bytes);
    ensure(static_cast<std::size_t>(op.bytes));
    if (op.kind == OpKind::kRecv) {
      const auto most = incoming_.find(op.peer);
      n = static_cast<int>(most == incoming_.end() ? op.bytes : most->second);
    }
    if (op.kind == OpKind::kSend) {
      scope(prof::name_id(op.name), algo_name_, op.bytes, g, [&] {
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Isend(send_.data(), n, MPI_BYTE, peer, 0, messages_, &r);
        pending_.push_back(r);
      });
      return true;
    }
    if (posted_receive(op)) {
      // A posted receive (MPI_Irecv) stays open like the program's did, to the end of the step:
      // waiting for it here would deadlock a ring whose ranks all post before they send.
      scope(prof::name_id(op.name), algo_name_, op.bytes, g, [&] {
        reclaim_posted();
        posted_.push_back(take_buffer(static_cast<std::size_t>(n)));
        posted_requests_.push_back(MPI_REQUEST_NULL);
        MPI_Irecv(posted_.back().data.get(), n, MPI_BYTE, peer, 0, messages_, &posted_requests_.back());
      });
      return true;
    }
    scope(prof::name_id(op.name), algo_name_, op.bytes, g, [&] {
      MPI_Request r = MPI_REQUEST_NULL;
      MPI_Irecv(recv_.data(), n, MPI_BYTE, peer, 0, messages_, &r);
      wait(r, op);
    });
    return true;
  }

  void wait(MPI_Request& r, const ReplayOp& op) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.timeout_s);
    for (int done = 0;;) {
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (done != 0) return;
      if (options_.timeout_s > 0 && std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("replay rank " + std::to_string(rank_) + ": '" + op.name + "' of " +
                                 std::to_string(op.bytes) + " B from recorded rank " + std::to_string(op.peer) +
                                 " not received within " + std::to_string(options_.timeout_s) + " s");
    }
  }

  // Frees the buffers of the posted receives that have completed, once there are many (a
  // program without iterations, as an MPI job often is, posts all its receives in one).
  void reclaim_posted() {
    if (posted_requests_.size() < 64) return;
    int done = 0;
    std::vector<int> which(posted_requests_.size());
    MPI_Testsome(static_cast<int>(posted_requests_.size()), posted_requests_.data(), &done, which.data(),
                 MPI_STATUSES_IGNORE);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < posted_requests_.size(); ++i) {
      if (posted_requests_[i] == MPI_REQUEST_NULL) {
        spare_.push_back(std::move(posted_[i]));
        continue;
      }
      posted_requests_[kept] = posted_requests_[i];
      posted_[kept] = std::move(posted_[i]);  // the storage, which MPI writes to, stays
      ++kept;
    }
    posted_requests_.resize(kept);
    posted_.resize(kept);
  }

  // A receive buffer of `bytes` at least: a spare one (completed receives' buffers are kept,
  // never zeroed: thousands of posted receives of the peer's largest message cost no memsets).
  struct Buffer {
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
  };
  Buffer take_buffer(std::size_t bytes) {
    for (Buffer& b : spare_)
      if (b.size >= bytes) {
        Buffer out = std::move(b);
        b = std::move(spare_.back());
        spare_.pop_back();
        return out;
      }
    return {std::make_unique_for_overwrite<char[]>(std::max<std::size_t>(bytes, 1)), bytes};
  }

  // Grows the messages' buffers; only between calls (pending sends read send_: wait for them first).
  void ensure(std::size_t bytes) {
    if (bytes <= send_.size()) return;
    if (!pending_.empty()) MPI_Waitall(static_cast<int>(pending_.size()), pending_.data(), MPI_STATUSES_IGNORE);
    pending_.clear();
    send_.assign(bytes, 0);
    recv_.assign(bytes, 0);
  }

  const ReplayPlan& plan_;
  const RankMapping& mapping_;
  const RunOptions& options_;
  int rank_ = 0, me_ = 0;
  std::unique_ptr<Communicator> world_;
  std::map<std::string, Group> groups_;
  std::unique_ptr<CollectiveBackend> backend_;  // after groups_: it goes before the communicators it uses
  MPI_Comm messages_ = MPI_COMM_NULL;
  std::vector<unsigned char> send_, recv_;
  std::map<int, std::int64_t> incoming_;  // recorded peer -> the largest message it sends this rank
  std::vector<std::int64_t> leads_;       // by iteration: its start after the earliest rank's (ns); empty: not aligned
  std::vector<MPI_Request> pending_;      // the sends
  // The open posted receives and their buffers (moved, never copied: the storage MPI writes to stays).
  std::vector<MPI_Request> posted_requests_;
  std::vector<Buffer> posted_;
  std::vector<Buffer> spare_;  // the buffers of completed posted receives, for the next ones
  GapBudget budget_;
  const Algorithm* algo_ = nullptr;      // null: nccl
  const Algorithm* fallback_ = nullptr;  // for what algo_ lacks: mpi, or null (nccl) on a device
  prof::NameId algo_name_ = 0, fallback_name_ = 0;
};

}  // namespace

RunCounts run_replay(const ReplayPlan& plan, const RankMapping& mapping, const RunOptions& options) {
  RunCounts counts;
  Replayer replayer(plan, mapping, options);
  prof::SessionOptions session_options;
  session_options.output = options.output;
  session_options.backend = prof::BackendChoice::kHost;
  session_options.command_line = options.command_line;
  session_options.attributes = options.attributes;
  prof::Session session(MPI_COMM_WORLD, session_options);
  replayer.run(counts);
  counts.placement = prof::summarize_placement(session.finish().ranks);  // all ranks' on rank 0
  counts.written = session.written();
  return counts;
}

}  // namespace commscope::replay
