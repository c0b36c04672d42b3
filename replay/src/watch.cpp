#include "watch.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>

#include "commscope/common/memory_headroom.hpp"
#include "commscope/profiler/flight.hpp"

namespace commscope::replay {
namespace {

constexpr std::size_t kPlace = 0, kIteration = 1, kOp = 2, kCalls = 3;  // board slots; kCalls + group

std::string rank_text(int replay_rank, int recorded) {
  return "replay rank " + std::to_string(replay_rank) + " (recorded rank " + std::to_string(recorded) + ")";
}

std::string label_text(const std::string& label) {
  return "'" + (label.empty() ? std::string("all ranks") : label) + "'";
}

}  // namespace

Watch::Watch(const ReplayPlan& plan, const RankMapping& mapping, double timeout_s)
    : plan_(plan), mapping_(mapping), timeout_s_(timeout_s) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (const auto& [label, group] : plan.groups) labels_.push_back(label);
  groups_ = labels_.size();
  const std::size_t slots = kCalls + groups_;
  own_.assign(slots, 0);
  board_.assign(static_cast<std::size_t>(size), nullptr);
  board_[static_cast<std::size_t>(rank_)] = own_.data();
  if (timeout_s_ <= 0) return;
  // The node's ranks' boards, in shared memory; without it this rank knows its own alone.
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_) == MPI_SUCCESS) {
    MPI_Comm_set_errhandler(node_, MPI_ERRORS_RETURN);
    std::int64_t* base = nullptr;
    if (MPI_Win_allocate_shared(static_cast<MPI_Aint>(slots * sizeof(std::int64_t)), sizeof(std::int64_t),
                                MPI_INFO_NULL, node_, &base, &window_) == MPI_SUCCESS) {
      std::fill(base, base + slots, 0);
      int n = 1;
      MPI_Comm_size(node_, &n);
      std::vector<int> world(static_cast<std::size_t>(n));
      MPI_Allgather(&rank_, 1, MPI_INT, world.data(), 1, MPI_INT, node_);
      for (int i = 0; i < n; ++i) {
        MPI_Aint bytes = 0;
        int unit = 0;
        void* at = nullptr;
        if (MPI_Win_shared_query(window_, i, &bytes, &unit, &at) == MPI_SUCCESS)
          board_[static_cast<std::size_t>(world[static_cast<std::size_t>(i)])] = static_cast<std::int64_t*>(at);
      }
      MPI_Barrier(node_);
    }
  }
  // The watching thread must not take the signals meant for the main thread's handlers.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([this] { watch(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

Watch::~Watch() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Freeing the window is collective: while an exception unwinds (a failed call on this rank,
  // whose handler aborts), the other ranks are elsewhere and it would wait for them.
  if (std::uncaught_exceptions() > 0) return;
  if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

void Watch::write(std::size_t slot, std::int64_t value) noexcept {
  std::atomic_ref<std::int64_t>(board_[static_cast<std::size_t>(rank_)][slot]).store(value, std::memory_order_relaxed);
}

std::int64_t Watch::read(int replay_rank, std::size_t slot) const {
  return std::atomic_ref<std::int64_t>(board_[static_cast<std::size_t>(replay_rank)][slot])
      .load(std::memory_order_relaxed);
}

void Watch::at(Place place, std::size_t iteration, std::size_t op) noexcept {
  write(kPlace, static_cast<std::int64_t>(place));
  write(kIteration, static_cast<std::int64_t>(iteration));
  write(kOp, static_cast<std::int64_t>(op));
  iteration_.store(iteration, std::memory_order_relaxed);
}

std::int64_t Watch::enter(std::size_t group) noexcept {
  const std::int64_t calls = read(rank_, kCalls + group);
  write(kCalls + group, calls + 1);
  return calls;
}

void Watch::arm(Place place, const ReplayOp* awaited, const ReplayOp* in, std::int64_t call) noexcept {
  place_.store(place, std::memory_order_relaxed);
  awaited_.store(awaited, std::memory_order_relaxed);
  in_.store(in, std::memory_order_relaxed);
  call_.store(call, std::memory_order_relaxed);
  arms_.fetch_add(1, std::memory_order_relaxed);
  armed_.store(true, std::memory_order_release);
}

void Watch::watch() {
  const auto timeout = std::chrono::duration<double>(timeout_s_);
  const auto period = std::chrono::milliseconds(
      std::clamp<std::int64_t>(static_cast<std::int64_t>(timeout_s_ * 1000 / 20), std::int64_t{10}, std::int64_t{500}));
  std::uint64_t seen = 0;
  auto since = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
    const auto now = std::chrono::steady_clock::now();
    const std::uint64_t arms = arms_.load(std::memory_order_relaxed);
    if (!armed_.load(std::memory_order_acquire) || arms != seen) {
      seen = arms, since = now;
      continue;
    }
    if (now - since < timeout) continue;
    const std::string text = message(std::chrono::duration<double>(now - since).count());
    // Still the same wait (the main thread moved on while the line was made: no timeout).
    if (!armed_.load(std::memory_order_acquire) || arms_.load(std::memory_order_relaxed) != seen) continue;
    std::fprintf(stderr, "commscope-replay: %s\n", text.c_str());
    std::fflush(stderr);
    (void)commscope::profiler::flight::dump("timeout");  // where this rank is, for commscope-report hang
    std::_Exit(1);                                       // no destructors: they would wait on MPI
  }
}

namespace {

// "iteration 3", or where a run outside the iterations lies.
std::string iteration_text(const ReplayPlan& plan, int recorded, std::size_t index) {
  const auto& its = plan.ranks[static_cast<std::size_t>(recorded)].iterations;
  if (index >= its.size()) return "after its last iteration";
  return its[index].number >= 0 ? "iteration " + std::to_string(its[index].number) : "outside the iterations";
}

// "'MPI_Allreduce' (4 KiB) on communicator 'tp[0,1]', sequence number 3 there", "'MPI_Recv' (64 B)
// from recorded rank 1 on 'mpi[1>0]'".
std::string op_text(const ReplayOp& op, std::int64_t call) {
  if (op.kind == OpKind::kWait) return "'" + op.name + "'";  // a recorded completion
  std::string out =
      "'" + op.name + "' (" + bytes_text(static_cast<std::uint64_t>(std::max<std::int64_t>(0, op.bytes))) + ")";
  if (op.kind == OpKind::kSend)
    return out + " to recorded rank " + std::to_string(op.peer) + " on " + label_text(op.group);
  if (op.kind == OpKind::kRecv)
    return out + " from recorded rank " + std::to_string(op.peer) + " on " + label_text(op.group);
  out += " on communicator " + label_text(op.group);
  return call >= 0 ? out + ", sequence number " + std::to_string(call) + " there" : out;
}

}  // namespace

std::string Watch::position(int q) const {
  if (board_[static_cast<std::size_t>(q)] == nullptr) return "on another host: not known";
  const int recorded = mapping_.recorded[static_cast<std::size_t>(q)];
  const auto place = static_cast<Place>(read(q, kPlace));
  const auto it = static_cast<std::size_t>(read(q, kIteration)), at = static_cast<std::size_t>(read(q, kOp));
  const auto& its = plan_.ranks[static_cast<std::size_t>(recorded)].iterations;
  const ReplayOp* op = it < its.size() && at < its[it].ops.size() ? &its[it].ops[at] : nullptr;
  const std::string where = iteration_text(plan_, recorded, it);
  switch (place) {
    case Place::kStart:
      return "not started";
    case Place::kGap:
      return op ? "between calls, before '" + op->name + "', " + where : "between calls, " + where;
    case Place::kOp: {
      if (op == nullptr) return "in a call, " + where;
      std::int64_t call = -1;
      if (const auto g = plan_.groups.find(op->group);
          g != plan_.groups.end() && (op->kind == OpKind::kCollective || op->kind == OpKind::kBarrier))
        call = read(q, kCalls + static_cast<std::size_t>(std::distance(plan_.groups.begin(), g))) - 1;
      return "in " + op_text(*op, call) + ", " + where;
    }
    case Place::kIterationEnd:
      return "completing its calls at the end of " + where;
    case Place::kBarrier:
      return "in the barrier before " + where;
    case Place::kReplayEnd:
      return "completing its calls at the end of the replay";
    case Place::kDone:
      return "done with its replay";
  }
  return "somewhere";
}

std::string Watch::message(double waited_s) const {
  const int me = mapping_.recorded[static_cast<std::size_t>(rank_)];
  const Place place = place_.load(std::memory_order_relaxed);
  const ReplayOp* awaited = awaited_.load(std::memory_order_relaxed);
  const ReplayOp* in = in_.load(std::memory_order_relaxed);
  const std::int64_t call = call_.load(std::memory_order_relaxed);
  const std::string where = iteration_text(plan_, me, iteration_.load(std::memory_order_relaxed));
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, "%.1f s (--timeout %g)", waited_s, timeout_s_);
  std::string text = rank_text(rank_, me) + ": no progress for " + seconds;
  if (place == Place::kBarrier) text += " in the barrier before " + where;
  if (place == Place::kIterationEnd) text += " at the end of " + where + ", completing " + op_text(*awaited, call);
  if (place == Place::kReplayEnd) text += " at the end of the replay, completing " + op_text(*awaited, call);
  if (place == Place::kOp && in != nullptr)
    text += " in '" + in->name + "', " + where + ", completing " + op_text(*awaited, call);
  if (place == Place::kOp && in == nullptr) text += " in " + op_text(*awaited, call) + ", " + where;
  // Whom it waits for.
  std::vector<int> others;  // replay ranks
  if (awaited == nullptr) {
    for (int q = 0; q < static_cast<int>(mapping_.recorded.size()); ++q)
      if (q != rank_) others.push_back(q);
  } else if (awaited->kind == OpKind::kSend || awaited->kind == OpKind::kRecv) {
    others.push_back(mapping_.replay_rank(awaited->peer));
  } else {
    for (const int m : played_members(plan_.groups.at(awaited->group), mapping_))
      if (m != me) others.push_back(mapping_.replay_rank(m));
  }
  const auto group = awaited ? plan_.groups.find(awaited->group) : plan_.groups.end();
  std::string missing, unknown;
  for (const int q : others) {
    if (q < 0) continue;
    if (board_[static_cast<std::size_t>(q)] == nullptr) {
      unknown += (unknown.empty() ? "" : ", ") + std::to_string(q);
      continue;
    }
    bool arrived = false;
    if (awaited == nullptr)
      arrived = static_cast<Place>(read(q, kPlace)) == Place::kBarrier &&
                iteration_text(plan_, mapping_.recorded[static_cast<std::size_t>(q)],
                               static_cast<std::size_t>(read(q, kIteration))) == where;
    else if (group != plan_.groups.end() && awaited->kind != OpKind::kSend && awaited->kind != OpKind::kRecv)
      arrived = read(q, kCalls + static_cast<std::size_t>(std::distance(plan_.groups.begin(), group))) > call;
    if (arrived) continue;
    missing += (missing.empty() ? "" : "; ") + rank_text(q, mapping_.recorded[static_cast<std::size_t>(q)]) + ", " +
               position(q);
  }
  const bool message = awaited != nullptr && (awaited->kind == OpKind::kSend || awaited->kind == OpKind::kRecv);
  text += missing.empty() ? (message ? "" : ": every rank on this host arrived")
                          : (message ? ": the other side, " : ": not arrived: ") + missing;
  if (!unknown.empty()) text += "; replay ranks " + unknown + " on other hosts: not known";
  return text + "; ending the replay";
}

}  // namespace commscope::replay
