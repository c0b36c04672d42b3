#include "runner.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>

#include "backend.hpp"
#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/common/memory_headroom.hpp"
#include "commscope/profiler/flight_watch.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/replay/gap_budget.hpp"
#include "mpi_calls.hpp"
#include "watch.hpp"
#include "zeros.hpp"

namespace commscope::replay {
namespace {

namespace prof = commscope::profiler;

// A recorded group on this rank: its communicator over the played members (null when this
// rank is not one, or for a link) and its numbering in the replay's profile.
struct Group {
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<prof::CommGroup> profiled;  // null for the profiled communicator ("")
  int recorded_members = 0;
  std::size_t index = 0;  // in the plan's (sorted) order: its calls' place on the watch's board
};

// Every rank splits MPI_COMM_WORLD once per label, in the plan's (sorted) order.
// (Only played ranks run, so the members left out by a mapping are simply absent.)
std::map<std::string, Group> rebuild_groups(const ReplayPlan& plan, int me, const CommOptions& options,
                                            CollectiveBackend& backend) {
  std::map<std::string, Group> groups;
  for (const auto& [label, parsed] : plan.groups) {
    Group& g = groups[label];
    g.index = groups.size() - 1;
    g.recorded_members = static_cast<int>(parsed.members.size());
    if (!label.empty()) g.profiled = std::make_unique<prof::CommGroup>(label);
    if (parsed.link) continue;
    const bool member = std::binary_search(parsed.members.begin(), parsed.members.end(), me);
    MPI_Comm split = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, me, &split);
    if (split == MPI_COMM_NULL) continue;
    g.comm = std::make_unique<Communicator>(split, options);
    MPI_Comm_free(&split);
    prof::flight::watch(*g.comm, label);  // the recorded label ("": the profiled communicator's, world's ring)
    backend.add_group(label, *g.comm);
  }
  return groups;
}

// The most bytes any op of `rank` moves: the zeros every send and posted collective reads.
std::size_t largest_op(const RankPlan& rank) {
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
      : plan_(plan),
        mapping_(mapping),
        options_(options),
        me_(mapping.recorded[static_cast<std::size_t>(world_rank())]),
        zeros_(largest_op(plan.ranks[static_cast<std::size_t>(me_)])) {
    rank_ = world_rank();
    CommOptions comm_options;
    // The algorithms' own waits end a little after the watch's (watch.hpp), which says more.
    comm_options.timeout_s = options.timeout_s > 0 ? 2 * options.timeout_s : 0;
    world_ = std::make_unique<Communicator>(MPI_COMM_WORLD, comm_options);
    backend_ = options.device == "cuda" ? make_device_backend(*world_) : make_host_backend();
    groups_ = rebuild_groups(plan, me_, comm_options, *backend_);
    MPI_Comm_dup(MPI_COMM_WORLD, &messages_);
    incoming_ = largest_messages_to(plan, me_);
    leads_ = iteration_leads(plan, mapping, me_);
    std::int64_t incoming = 64;
    for (const auto& [peer, bytes] : incoming_) incoming = std::max(incoming, bytes);
    recv_ = std::make_unique<Zeros>(static_cast<std::size_t>(incoming));
    // nccl (cuda only): NCCL's own collectives, a null algorithm; what the others lack runs
    // with mpi on the host and with nccl on a device.
    algo_ = options.algo == "nccl" ? nullptr : &find_algorithm(options.algo);
    fallback_ = options.device == "cuda" ? nullptr : &find_algorithm("mpi");
    algo_name_ = prof::name_id(options.algo);
    fallback_name_ = prof::name_id(options.device == "cuda" ? "nccl" : "mpi");
    mpi_name_ = prof::name_id("mpi");
    watch_ = std::make_unique<Watch>(plan, mapping, options.timeout_s);
  }
  ~Replayer() { MPI_Comm_free(&messages_); }
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  void run(RunCounts& counts) {
    const std::vector<ReplayIteration>& iterations = plan_.ranks[static_cast<std::size_t>(me_)].iterations;
    for (std::size_t i = 0; i < iterations.size(); ++i) {
      const ReplayIteration& it = iterations[i];
      if (it.number < 0) {
        run_ops(i, it, counts);
        continue;
      }
      if (!leads_.empty()) {  // together, then as late as recorded (plan.hpp's iteration_leads)
        watch_->at(Watch::Place::kBarrier, i);
        {
          Armed armed(*watch_, Watch::Place::kBarrier, nullptr, nullptr);
          world_->barrier();
        }
        spend_gap(options_.gaps, leads_[i]);
      }
      prof::IterationScope step(it.number);
      run_ops(i, it, counts);
    }
    // What no recorded completion can have completed (completion.hpp), at the end.
    watch_->at(Watch::Place::kReplayEnd, iterations.size());
    std::vector<std::int64_t> rest;
    for (const auto& [request, open] : open_) rest.push_back(request);
    complete(rest, Watch::Place::kReplayEnd, nullptr);
    watch_->at(Watch::Place::kDone, iterations.size());
  }

 private:
  // A posted op in flight: its requests and the buffer it receives into.
  struct Buffer {
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
  };
  struct Open {
    const ReplayOp* op = nullptr;
    std::vector<MPI_Request> requests;
    Buffer buffer;
    std::int64_t call = -1;  // a collective's number on its group
  };

  static int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }

  void run_ops(std::size_t index, const ReplayIteration& it, RunCounts& counts) {
    budget_.reset();
    for (std::size_t k = 0; k < it.ops.size(); ++k) {
      const ReplayOp& op = it.ops[k];
      watch_->at(Watch::Place::kGap, index, k);
      gap(op.gap_before_ns);
      watch_->at(Watch::Place::kOp, index, k);
      if (op.kind == OpKind::kWait) {
        scope(prof::name_id(op.name), mpi_name_, 0, groups_.at(op.group),
              [&] { complete(op.completes, Watch::Place::kOp, &op); });
      } else if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
        if (!message(op)) ++counts.dropped_messages;
      } else if (op.posted) {
        post(op, counts);
      } else {
        collective(op, counts);
      }
      ++counts.ops;
    }
    gap(it.tail_ns);
    watch_->at(Watch::Place::kIterationEnd, index);
    complete(it.completes_at_end, Watch::Place::kIterationEnd, nullptr);
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
    const std::int64_t call = watch_->enter(g.index);
    if (op.kind == OpKind::kBarrier) {
      scope(name, algo_name_, 0, g, [&] {
        Armed armed(*watch_, Watch::Place::kOp, &op, nullptr, call);
        comm.barrier();
      });
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
    scope(name, algo == algo_ ? algo_name_ : fallback_name_, bytes, g, [&] {
      Armed armed(*watch_, Watch::Place::kOp, &op, nullptr, call);
      backend_->run(op.group, comm, args, static_cast<std::size_t>(bytes), algo);
    });
  }

  // A nonblocking collective, posted as recorded and completed by its recorded completion: the
  // MPI library's (no algorithm has a nonblocking form), on host buffers.
  void post(const ReplayOp& op, RunCounts& counts) {
    Group& g = groups_.at(op.group);
    MPI_Comm comm = g.comm->mpi_comm();
    Open open;
    open.op = &op;
    open.call = watch_->enter(g.index);
    std::int64_t bytes = 0;
    const Collective coll = op.collective == Collective::alltoallv ? Collective::alltoall : op.collective;
    const Elements e = elements_of(coll, op.bytes, g.recorded_members);
    if (op.kind == OpKind::kCollective) {
      bytes = static_cast<std::int64_t>(collective_bytes(coll, e.count, e.type, g.comm->size()));
      open.buffer = take_buffer(static_cast<std::size_t>(bytes));
    }
    if (options_.algo != "mpi")
      ++counts.fallback["nonblocking " +
                        (op.kind == OpKind::kBarrier ? std::string("barrier") : std::string(collective_name(coll)))];
    scope(prof::name_id(op.name), mpi_name_, bytes, g, [&] {
      if (op.kind == OpKind::kBarrier) {
        open.requests.push_back(MPI_REQUEST_NULL);
        check(MPI_Ibarrier(comm, &open.requests.back()), "MPI_Ibarrier");
      } else {
        post_collective(comm, coll, e.count, e.type, zeros_.data(), open.buffer.data.get(), open.requests);
      }
    });
    keep(op, std::move(open));
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

  // false: the other side is played by nobody. A posted one is completed later (complete), a
  // blocking one here, under the watch.
  bool message(const ReplayOp& op) {
    const int peer = mapping_.replay_rank(op.peer);
    if (peer < 0) return false;
    Group& g = groups_.at(op.group);
    Open open;
    open.op = &op;
    open.requests.push_back(MPI_REQUEST_NULL);
    MPI_Request& r = open.requests.back();
    scope(prof::name_id(op.name), algo_name_, op.bytes, g, [&] {
      if (op.kind == OpKind::kSend) {
        const ByteCount n = byte_count(op.bytes);
        check(MPI_Isend(zeros_.data(), n.count, n.type, peer, 0, messages_, &r), "MPI_Isend");
      } else {
        const auto most = incoming_.find(op.peer);
        const std::int64_t bytes = most == incoming_.end() ? op.bytes : most->second;
        const ByteCount n = byte_count(bytes);
        // A posted receive gets a buffer of its own, kept until its completion.
        if (op.posted) open.buffer = take_buffer(static_cast<std::size_t>(bytes));
        check(MPI_Irecv(op.posted ? open.buffer.data.get() : recv_->data(), n.count, n.type, peer, 0, messages_, &r),
              "MPI_Irecv");
      }
      if (op.posted) return;
      {
        Armed armed(*watch_, Watch::Place::kOp, &op, nullptr);
        check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
      }
      complete(op.completes, Watch::Place::kOp, &op);  // an MPI_Sendrecv's send, once it has received
    });
    if (op.posted) keep(op, std::move(open));
    return true;
  }

  void keep(const ReplayOp& op, Open&& open) {
    reclaim_completed();
    open_[op.request] = std::move(open);
  }

  // Completes the posted ops `requests` names that are still open (those of ranks nobody plays
  // never were), in order, each under the watch.
  void complete(const std::vector<std::int64_t>& requests, Watch::Place place, const ReplayOp* in) {
    for (const std::int64_t request : requests) {
      const auto it = open_.find(request);
      if (it == open_.end()) continue;
      Open& open = it->second;
      {
        Armed armed(*watch_, place, open.op, in, open.call);
        check(MPI_Waitall(static_cast<int>(open.requests.size()), open.requests.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall");
      }
      if (open.buffer.data) spare_.push_back(std::move(open.buffer));
      open_.erase(it);
    }
  }

  // Frees the buffers of the open ops that have completed, once there are many (a program that
  // posts receives it completes much later, or never in its recorded completions).
  void reclaim_completed() {
    if (open_.size() < 64 || ++posts_ % 64 != 0) return;
    for (auto it = open_.begin(); it != open_.end();) {
      int done = 0;
      check(MPI_Testall(static_cast<int>(it->second.requests.size()), it->second.requests.data(), &done,
                        MPI_STATUSES_IGNORE),
            "MPI_Testall");
      if (done == 0) {
        ++it;
        continue;
      }
      if (it->second.buffer.data) spare_.push_back(std::move(it->second.buffer));
      it = open_.erase(it);
    }
  }

  // A buffer of `bytes` at least: a spare one (completed ops' buffers are kept, never zeroed:
  // thousands of posted receives of the peer's largest message cost no memsets).
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

  const ReplayPlan& plan_;
  const RankMapping& mapping_;
  const RunOptions& options_;
  int rank_ = 0, me_ = 0;
  Zeros zeros_;                  // what every send and posted collective sends
  std::unique_ptr<Zeros> recv_;  // where blocking receives land (the peers' largest message)
  std::unique_ptr<Communicator> world_;
  std::map<std::string, Group> groups_;
  std::unique_ptr<CollectiveBackend> backend_;  // after groups_: it goes before the communicators it uses
  MPI_Comm messages_ = MPI_COMM_NULL;
  std::map<int, std::int64_t> incoming_;  // recorded peer -> the largest message it sends this rank
  std::vector<std::int64_t> leads_;       // by iteration: its start after the earliest rank's (ns); empty: not aligned
  std::map<std::int64_t, Open> open_;     // posted ops in flight, by request
  std::vector<Buffer> spare_;             // the buffers of completed ones, for the next ones
  std::int64_t posts_ = 0;
  GapBudget budget_;
  const Algorithm* algo_ = nullptr;      // null: nccl
  const Algorithm* fallback_ = nullptr;  // for what algo_ lacks: mpi, or null (nccl) on a device
  prof::NameId algo_name_ = 0, fallback_name_ = 0, mpi_name_ = 0;
  std::unique_ptr<Watch> watch_;  // last: it goes first, before the communicators
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
