// The machinery of shm's calls (shm.cpp): the segment's flags and the waits on them, the copy
// with non-temporal stores, and Steps, which runs one call over the segment as a sequence of
// fill/consume steps. Internal to the shm algorithm.
#pragma once

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>

#include "../shm_segment.hpp"
#include "common.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/stream_copy.hpp"

namespace commscope::shm_detail {

using detail::Blocks;
using detail::Buf;
using detail::kShmInlineBytes;
using detail::kShmInlineSlots;
using detail::kShmSlotBytes;
using detail::kShmSlotsPerRank;
using detail::ShmDirect;
using detail::ShmFlags;
using detail::ShmPathTimes;
using detail::ShmSegment;
enum class Flag { ready, reduced, done, ready_inline, decided };

inline const char* flag_name(Flag f) {
  return f == Flag::reduced   ? "reduced"
         : f == Flag::done    ? "done"
         : f == Flag::decided ? "decided"
                              : "ready";  // ready_inline: the same flag, in the data's line
}

// Spins until a peer's flag reaches a step, under the transport's deadline and its
// oversubscription setting (sleep between polls, as MpiTransport::wait does).
class FlagWaiter {
 public:
  FlagWaiter(MpiTransport& t, ShmSegment& seg)
      : t_(t), seg_(seg), timeout_s_(t.timeout_s()), yield_(t.yield_when_idle()) {}

  // Returns the flag's value, at least `step`.
  std::uint64_t wait(int peer, Flag f, std::uint64_t step) const {
    const std::atomic<std::uint64_t>& flag = get(seg_.flags(peer), f, step);
    if (const std::uint64_t v = flag.load(std::memory_order_acquire); v >= step) return v;
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    for (unsigned spins = 1;; ++spins) {
      if (const std::uint64_t v = flag.load(std::memory_order_acquire); v >= step) return v;
      // Oversubscribed: give the core to the rank being waited for (it may share it). A peer
      // flag moves within microseconds once that rank runs, so yield rather than sleep (a
      // 20 us sleep lasts 50 us or more with timer slack, and every step waits at least once).
      if (yield_ && spins > 64) std::this_thread::yield();
      if (timeout_s_ > 0 && (spins & 255u) == 0 &&
          std::chrono::duration<double>(clock::now() - start).count() > timeout_s_) {
        seg_.mark_broken();
        std::ostringstream os;
        os << "timeout after " << timeout_s_ << " s on rank " << t_.rank() << " in " << t_.context().describe()
           << ": waiting for rank " << peer << "'s shm " << flag_name(f) << " flag to reach step " << step
           << ", still at " << flag.load(std::memory_order_relaxed);
        throw TimeoutError(os.str());
      }
    }
  }
  // Waits for every peer; returns the lowest value seen (at least `step`).
  std::uint64_t wait_all(Flag f, std::uint64_t step) const {
    std::uint64_t low = UINT64_MAX;
    for (int q = 0; q < t_.size(); ++q)
      if (q != t_.rank()) low = std::min(low, wait(q, f, step));
    return low;
  }

 private:
  static const std::atomic<std::uint64_t>& get(const ShmFlags& fl, Flag f, std::uint64_t step) {
    switch (f) {
      case Flag::ready:
        return fl.ready;
      case Flag::reduced:
        return fl.reduced;
      case Flag::done:
        return fl.done;
      case Flag::decided:
        return fl.direct.decided;
      case Flag::ready_inline:
        break;
    }
    return fl.inline_slots[step % detail::kShmInlineSlots].ready;
  }
  MpiTransport& t_;
  ShmSegment& seg_;
  double timeout_s_;
  bool yield_;
};

using commscope::kStreamOutputBytes;
using commscope::store_fence;
using commscope::stream_copy;


// One collective call over the segment, as a sequence of steps. A step is
//   fill(step):    this rank copies its part of the step's data into `mine()` (may be nothing);
//                  then its ready flag says so;
//   consume(step): it reads what it needs from the peers' slots (`peer()` waits for their
//                  ready flag) and writes its output; then its done flag says so.
// Before filling a slot the rank waits until every peer is done with the step that last
// filled it.
class Steps {
 public:
  Steps(MpiTransport& transport, ShmSegment& segment)
      : t(transport), seg(segment), waiter(transport, segment), p(transport.size()), me(transport.rank()) {}

  template <typename Fill, typename Consume>
  void run(std::size_t nsteps, Fill fill, Consume consume) {
    run(nsteps, fill, consume, nullptr);
  }
  // With a second phase: finish(i) runs one step late (after step i + 1's consume, the last
  // after the loop), so that a rank need not wait for its peers' consume of the same step.
  // Its done flag follows finish.
  template <typename Fill, typename Consume, typename Finish>
  void run(std::size_t nsteps, Fill fill, Consume consume, Finish finish) {
    constexpr bool late = !std::is_same_v<Finish, std::nullptr_t>;
    ShmFlags& flags = seg.flags(me);
    for (std::size_t i = 0; i < nsteps; ++i) {
      step_ = seg.next_step();
      // The peers' done flags are read only when the last reading does not already free the
      // slot: a line the peers keep writing costs a transfer between cores per read.
      // An inline step reuses the inline slot of step - kShmInlineSlots, a slot step the slot of
      // step - kShmSlotsPerRank (at the latest: steps of the other kind may lie between).
      const std::uint64_t reuse = inline_ ? kShmInlineSlots : kShmSlotsPerRank;
      if (step_ > reuse && seg.peers_done() < step_ - reuse)
        seg.set_peers_done(waiter.wait_all(Flag::done, step_ - reuse));
      fill(i);
      if (inline_) flags.inline_slots[step_ % kShmInlineSlots].ready.store(step_, std::memory_order_release);
      flags.ready.store(step_, std::memory_order_release);  // (no peer polls it in inline steps: the line stays here)
      consume(i);
      if constexpr (late) {
        if (i > 0) finish_step(i - 1, step_ - 1, finish);
      } else {
        flags.done.store(step_, std::memory_order_release);
      }
    }
    if constexpr (late) {
      if (nsteps > 0) finish_step(nsteps - 1, step_, finish);
    }
    if (stream) store_fence();  // the output is complete before the caller (or a thread it tells) reads it
  }
  // A direct step: the whole call in one step. publish() makes this rank's input readable
  // (and, for an adaptive call, its estimates of both paths); then either `body` reads what it
  // needs straight from the peers' buffers (read_send) in finish_direct(), which returns only
  // once every peer is done too, since they read this rank's input; or, an adaptive call that
  // chose the slots, end_announce() says this rank has read the peers' estimates and the slot
  // steps follow.
  void publish(const void* send, const void* recv, const ShmPathTimes* times) {
    step_ = seg.next_step();
    inline_ = false;
    // The peers may still be reading the estimates this rank published last.
    if (seg.peers_done() < seg.last_announce()) seg.set_peers_done(waiter.wait_all(Flag::done, seg.last_announce()));
    seg.set_last_announce(step_);
    ShmDirect& d = seg.flags(me).direct;
    d.send = reinterpret_cast<std::uintptr_t>(send);
    d.recv = reinterpret_cast<std::uintptr_t>(recv);
    d.slot_ns = times ? times->slot_ns : 0;
    d.direct_ns = times ? times->direct_ns : 0;
    seg.flags(me).ready.store(step_, std::memory_order_release);
  }
  // After publish(): whether this adaptive call goes direct. Rank 0 decides, from its record and
  // the slowest rank's estimate of each path, and publishes the answer; the others wait for it
  // (so ranks whose records differ, e.g. in-place gather at the root alone, still agree).
  bool choose_direct(const ShmPathTimes& times) const {
    if (me != 0) return waiter.wait(0, Flag::decided, 2 * step_) & 1u;
    std::uint64_t slot = times.slot_ns, direct = times.direct_ns;
    for (int q = 1; q < p; ++q) {
      waiter.wait(q, Flag::ready, step_);
      slot = std::max(slot, seg.flags(q).direct.slot_ns);
      direct = std::max(direct, seg.flags(q).direct.direct_ns);
    }
    const bool d = detail::shm_choose_direct(times, slot, direct);
    seg.flags(0).direct.decided.store(2 * step_ + (d ? 1 : 0), std::memory_order_release);
    return d;
  }
  void end_announce() const { seg.flags(me).done.store(step_, std::memory_order_release); }
  template <typename Body>
  void finish_direct(Body body) {
    body();
    seg.flags(me).done.store(step_, std::memory_order_release);
    seg.set_peers_done(waiter.wait_all(Flag::done, step_));
  }
  // Copies `bytes` from byte `offset` of peer q's send buffer (once q has published it) into
  // `dst`.
  void read_send(int q, std::size_t offset, void* dst, std::size_t bytes) const {
    waiter.wait(q, Flag::ready, step_);
    read(q, seg.flags(q).direct.send + offset, dst, bytes);
  }
  // Copies `bytes` from byte `offset` of peer q's output (once q says its part is reduced).
  void read_recv(int q, std::size_t offset, void* dst, std::size_t bytes) const {
    waiter.wait(q, Flag::reduced, step_);
    read(q, seg.flags(q).direct.recv + offset, dst, bytes);
  }
  // Writes to the caller's output: streamed (non-temporal) when the output is large.
  void copy_out(void* dst, const void* src, std::size_t bytes) const {
    if (dst == src || bytes == 0) return;
    if (stream) return stream_copy(dst, src, bytes);
    std::memcpy(dst, src, bytes);
  }
  // A collective sets this before run(): the most bytes any rank puts into its slot in a step
  // (the same on every rank); small steps go inline (ShmFlags::inline_slots).
  void set_step_bytes(std::size_t bytes) { inline_ = bytes <= kShmInlineBytes; }
  std::byte* mine() const { return slot(me); }
  // Peer q's slot of this step, once q has filled it.
  const std::byte* peer(int q) const {
    if (q != me) waiter.wait(q, inline_ ? Flag::ready_inline : Flag::ready, step_);
    return slot(q);
  }
  // Two-shot: this rank's reduced slice is in its slot / peer q's is in q's.
  void publish_reduced() const { seg.flags(me).reduced.store(step_, std::memory_order_release); }
  const std::byte* reduced(int q) const {
    if (q != me) waiter.wait(q, Flag::reduced, step_);
    return slot(q);
  }

  MpiTransport& t;
  ShmSegment& seg;
  const FlagWaiter waiter;
  const int p, me;
  bool stream = false;  // set by the collective from its output size

 private:
  std::byte* slot(int q) const {
    return inline_ ? seg.flags(q).inline_slots[step_ % kShmInlineSlots].data : seg.slot(q, step_);
  }
  void read(int q, std::uint64_t remote, void* dst, std::size_t bytes) const {
    if (bytes == 0 || detail::read_process(seg.flags(q).direct.pid, remote, dst, bytes)) return;
    const int err = errno;
    seg.mark_broken();
    throw TransportError("rank " + std::to_string(me) + " in " + t.context().describe() + ": reading rank " +
                         std::to_string(q) + "'s buffer (process_vm_readv) failed: " + std::strerror(err));
  }
  template <typename Finish>
  void finish_step(std::size_t i, std::uint64_t step, Finish& finish) {
    const std::uint64_t now = step_;
    step_ = step;
    finish(i);
    seg.flags(me).done.store(step, std::memory_order_release);
    step_ = now;
  }
  std::uint64_t step_ = 0;
  bool inline_ = false;
};

}  // namespace commscope::shm_detail
