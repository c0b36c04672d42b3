#pragma once
// A replay that cannot finish ends (docs/replay.md, "Timeouts"). Every wait of the replay (a
// collective, blocking or completed later, a message, a recorded completion, the completion at an
// iteration's end or the replay's, the barrier before an iteration) is armed here; a thread that
// watches the main thread's progress, when one wait has lasted --timeout seconds, prints one line
// (where this rank waits: the call, its communicator and sequence number; the ranks it waits for
// that did not arrive, and where they are) and ends the process with status 1, so that the
// launcher ends the others. The ranks' positions are on a board in their node's shared memory
// (MPI_Win_allocate_shared), which the watching thread reads without MPI calls (the replay runs
// MPI_THREAD_SINGLE); ranks on other hosts are said to be unknown.

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "commscope/replay/plan.hpp"

namespace commscope::replay {

class Watch {
 public:
  // Where a rank is (the board's first slot).
  enum class Place : std::int64_t { kStart, kGap, kOp, kIterationEnd, kBarrier, kReplayEnd, kDone };

  // Collective over MPI_COMM_WORLD. timeout_s <= 0: no watching thread (and no board).
  Watch(const ReplayPlan& plan, const RankMapping& mapping, double timeout_s);
  ~Watch();  // collective (the board's window), unless an exception unwinds
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // This rank's position: the plan's iteration `iteration` and its op `op` (main thread).
  void at(Place place, std::size_t iteration, std::size_t op = 0) noexcept;
  // A call on group `group` (plan.groups' order) begins; returns its number there (from 0).
  std::int64_t enter(std::size_t group) noexcept;
  // Waiting from now on for `awaited` (an op of this rank, or null in the barrier), at `place`
  // (kOp: in `awaited` itself or in the recorded completion `in`), with its number `call` on its
  // group for a collective; until disarm().
  void arm(Place place, const ReplayOp* awaited, const ReplayOp* in, std::int64_t call = -1) noexcept;
  void disarm() noexcept { armed_.store(false, std::memory_order_release); }

 private:
  void watch();
  std::string message(double waited_s) const;
  std::string position(int replay_rank) const;  // where a rank on this node is, from the board
  std::int64_t read(int replay_rank, std::size_t slot) const;
  void write(std::size_t slot, std::int64_t value) noexcept;

  const ReplayPlan& plan_;
  const RankMapping& mapping_;
  double timeout_s_;
  int rank_ = 0;
  std::size_t groups_ = 0;
  std::vector<std::string> labels_;  // plan.groups' labels, in order
  // The board: per replay rank its slots (place, iteration, op, then the calls entered per
  // group); null for a rank on another host. Own slots alone (own_) where no shared window.
  std::vector<std::int64_t*> board_;
  std::vector<std::int64_t> own_;
  MPI_Win window_ = MPI_WIN_NULL;
  MPI_Comm node_ = MPI_COMM_NULL;
  // What the main thread waits for (read by the watching thread on a timeout).
  std::atomic<bool> armed_{false};
  std::atomic<std::uint64_t> arms_{0};  // arm() calls: a new wait is progress
  std::atomic<Place> place_{Place::kStart};
  std::atomic<const ReplayOp*> awaited_{nullptr}, in_{nullptr};
  std::atomic<std::int64_t> call_{-1};
  std::atomic<std::size_t> iteration_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// RAII arm / disarm.
class Armed {
 public:
  Armed(Watch& w, Watch::Place place, const ReplayOp* awaited, const ReplayOp* in, std::int64_t call = -1) : w_(w) {
    w_.arm(place, awaited, in, call);
  }
  ~Armed() { w_.disarm(); }
  Armed(const Armed&) = delete;
  Armed& operator=(const Armed&) = delete;

 private:
  Watch& w_;
};

}  // namespace commscope::replay
