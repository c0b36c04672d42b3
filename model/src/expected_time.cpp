#include "commscope/model/expected_time.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "commscope/common/memory_headroom.hpp"
#include "commscope/model/format.hpp"

namespace commscope {
namespace {

// GB/s to bytes per microsecond.
constexpr double kBytesPerUsPerGBps = 1e3;

// One message of a step: src sends to dst.
struct Flow {
  int src = 0, dst = 0;
};
// A step of an algorithm: its flows at once, and its share of the algorithm's bytes (relative to
// the other steps'; the cost terms give the total).
struct Step {
  double weight = 1;
  std::vector<Flow> flows;
  // The ring's steps (shift 1, its flows in ring order): each rank's next message waits only for
  // the one it receives, so a small message's time runs down a chain of consecutive flows, which
  // crosses a node's edge only where they do (2 hosts x 2 ranks: 3 of the allreduce's 6), not in
  // every step as the steps' bytes do.
  bool chained = false;
};

// r -> r + shift (mod p) for every rank: the ring (shift 1) and the pairwise exchange's steps.
Step shift_step(int p, int shift) {
  Step s;
  for (int r = 0; r < p; ++r) s.flows.push_back({r, (r + shift) % p});
  return s;
}

// r -> r + 1 for r < p - 1: the ring's chains' hops (reduce, broadcast, gather, scatter), hop h
// joining ranks h - 1 and h, all at once as in the pipeline's steady state; no wrap-around.
Step chain_step(int p) {
  Step s;
  for (int r = 0; r + 1 < p; ++r) s.flows.push_back({r, r + 1});
  return s;
}

// A round of a chain (collectives/src/algorithms/ring.cpp): the hops first..last each move one unit
// at once, and the round lasts as long as the slowest of them; `count` rounds alike.
struct Round {
  int first = 1, last = 1;
  double count = 1;
};

// The rounds of the ring's chains on p ranks. Reduce and broadcast pipeline k segments: segment j
// crosses hop h in round h + j - 1, so round r moves hops max(1, r - k + 1) .. min(p - 1, r), p - 2 + k
// rounds, those of every hop (k - p + 2 of them where k >= p - 1) counted as one. Gather moves a block
// a round towards the root: hop h carries the blocks of ranks h .. p - 1 in rounds 1 .. p - h;
// scatter is its mirror image (hop h in rounds h .. p - 1); both take p - 1 rounds, the m-th as long
// as the slowest of hops 1 .. m.
std::vector<Round> chain_rounds(Collective c, int p, double segments) {
  std::vector<Round> rounds;
  const int hops = p - 1;
  if (hops < 1) return rounds;
  if (c == Collective::gather || c == Collective::scatter) {
    for (int m = 1; m <= hops; ++m) rounds.push_back({1, m, 1});
    return rounds;
  }
  const double k = std::max(1.0, segments);
  for (double r = 1; r <= hops - 1 + k; ++r) {
    const int first = static_cast<int>(std::max(1.0, r - k + 1));
    const int last = static_cast<int>(std::min<double>(hops, r));
    if (first == 1 && last == hops) {  // every hop: rounds hops .. k
      const double alike = k - hops + 1;
      rounds.push_back({1, hops, alike});
      r += alike - 1;
    } else {
      rounds.push_back({first, last, 1});
    }
  }
  return rounds;
}

// What a flat algorithm's bytes cross: its steps, each a share of the bytes through its slowest
// flow; or a chain's rounds over the hops of chain_step, each round one unit through its slowest hop.
struct Pattern {
  std::vector<Step> steps;
  std::vector<Round> rounds;  // a chain: steps holds chain_step(p)
};

// rhd (collectives/src/algorithms/rhd.cpp): the p2 = 2^floor(lg p) ranks exchange with the
// partner at distance mask = p2/2 .. 1, each step half the previous one's bytes (full_steps: the
// whole array every step, recursive doubling's allreduce); the p - p2 extra ranks (odd ranks
// below 2(p - p2)) fold into their even neighbours first and get the result back last.
// Rabenseifner's allreduce (near_halves: rhd's, and the MPI libraries' textbook one, Open MPI's
// redscat_allgather, MPICH's) halves the vector as the distance doubles instead: its largest halves
// go to the nearest partner, mask 1.
// rhd's virtual ranks: p2 = 2^floor(lg p) of them, the extra ranks (odd ones below 2(p - p2))
// folded into their even neighbours.
struct RhdFold {
  int p2 = 1, rem = 0;
  explicit RhdFold(int p) {
    while (p2 * 2 <= p) p2 *= 2;
    rem = p - p2;
  }
  int real(int v) const { return v < rem ? 2 * v : v + rem; }
};

// Binomial tree rooted at unit 0 of n units (rank real(u)): ceil(lg n) steps, in step i unit u + 2^i
// sends to u (u a multiple of 2^(i+1)); each the whole array, or (gathered: gather, scatter) 2^i of
// n parts. A scatter's or a broadcast's steps cross the same links the other way.
template <class Real>
std::vector<Step> binomial_steps(int n, bool gathered, Real real) {
  std::vector<Step> steps;
  for (int d = 1; d < n; d *= 2) {
    Step s{gathered ? static_cast<double>(d) / n : 1.0, {}};
    for (int u = 0; u + d < n; u += 2 * d) s.flows.push_back({real(u + d), real(u)});
    steps.push_back(std::move(s));
  }
  return steps;
}

std::vector<Step> tree_steps(int p, bool gathered) {
  return binomial_steps(p, gathered, [](int r) { return r; });
}

// The p2 virtual ranks' exchanges, mask = p2/2 .. 1, each the step's share of n (see rhd_steps).
std::vector<Step> halving_steps(const RhdFold& fold, bool full_steps, bool near_halves) {
  const int p2 = fold.p2;
  std::vector<Step> steps;
  for (int mask = p2 / 2; mask > 0; mask /= 2) {
    const double share = near_halves ? p2 / 2.0 / mask : mask;  // the step's blocks of p2
    Step s{full_steps ? 1.0 : share / p2, {}};
    for (int v = 0; v < p2; ++v) s.flows.push_back({fold.real(v), fold.real(v ^ mask)});
    steps.push_back(std::move(s));
  }
  return steps;
}

// The extra ranks' fold: their arrays into their even neighbours (weight `in`) and the result back
// (`out`); a weight of 0 leaves that step out.
void add_fold(std::vector<Step>& steps, const RhdFold& fold, double in, double out) {
  for (const auto& [weight, into] : {std::pair{in, true}, std::pair{out, false}}) {
    if (fold.rem == 0 || weight == 0) continue;
    Step s{weight, {}};
    for (int i = 0; i < fold.rem; ++i) s.flows.push_back(into ? Flow{2 * i + 1, 2 * i} : Flow{2 * i, 2 * i + 1});
    steps.push_back(std::move(s));
  }
}

std::vector<Step> rhd_steps(int p, bool full_steps, bool near_halves = false) {
  const RhdFold fold(p);
  std::vector<Step> steps = halving_steps(fold, full_steps, near_halves);
  add_fold(steps, fold, full_steps ? 1.0 : 0.5, full_steps ? 1.0 : 0.5);
  return steps;
}

// rhd's reduce and broadcast, whose two halves differ: reduce halves (the steps above, n/2 .. n/p2,
// the extra ranks' arrays folded in first) and gathers the groups to the root down a binomial
// tree over the p2 virtual ranks; broadcast scatters the root's array down one over all p ranks,
// then allgathers by doubling (the halving's links, 1 .. p2/2 blocks) and hands the whole array
// to the extra ranks. Weights: each step's share of n.
std::vector<Step> rhd_tree_steps(Collective c, int p) {
  const RhdFold fold(p);
  const bool reduce = c == Collective::reduce;
  std::vector<Step> steps = reduce ? binomial_steps(fold.p2, true, [&](int v) { return fold.real(v); })
                                   : binomial_steps(p, true, [](int r) { return r; });
  for (Step& s : halving_steps(fold, false, false)) steps.push_back(std::move(s));
  add_fold(steps, fold, reduce ? 1.0 : 0.0, reduce ? 0.0 : 1.0);
  return steps;
}

// What one pricing needs and what it found missing.
class Pricer {
 public:
  // `rank_bytes`: the bytes of one rank's send and receive buffers (buffer_bytes_per_rank), which
  // with the node's other ranks' make the working set its copy rate is read at.
  Pricer(const MachineModel& m, std::span<const int> node, double rank_bytes)
      : m_(m), node_(node), rank_bytes_(rank_bytes) {}

  const std::vector<std::string>& missing() const { return missing_; }
  int node(int rank) const { return node_[static_cast<std::size_t>(rank)]; }
  std::size_t nodes() const { return m_.nodes.size(); }
  const NodeModel& at(int k) const { return m_.nodes[static_cast<std::size_t>(k)]; }

  // The rate between two ranks of node k: its intra figure, or on a CPU node the copy rate / 2
  // (a message through shared memory is copied in by the sender and out by the receiver).
  std::optional<LimitingLink> intra(int k) {
    const NodeModel& n = at(k);
    if (n.intra.known()) return message_link(n, n.intra);
    if (n.gpus == 0 && n.copy.known())
      return LimitingLink{LinkLevel::intra,
                          n.host,
                          rate_at(n.copy, rank_bytes_) / 2,
                          1,
                          n.copy.source,
                          detail_at(n.copy, rank_bytes_, kBuffers) + ", halved: copied in and out of shared memory",
                          n.copy.spread,
                          moved_at(n.copy, rank_bytes_)};
    miss(n.host + "'s rate between its ranks" +
         (n.gpus > 0 ? " (NVLink or PCIe: intra=RATE in a --machine file)"
                     : " (measured at start-up, or half its memory copy rate: intra=RATE in a --machine file)"));
    return std::nullopt;
  }
  // One message alone between two ranks of node k (a chain's or a tree's step on 2 ranks): its
  // one-flow rate where measured, else the rate with every rank at once.
  std::optional<LimitingLink> intra_one(int k) {
    const NodeModel& n = at(k);
    if (!n.intra_one.known() || n.intra.source == FigureSource::user) return intra(k);
    return message_link(n, n.intra_one);
  }
  // The rates between a node's ranks are read by the size of the algorithm's messages where it
  // says (`bytes` a message, on average: its terms' bytes over its messages), not by the row's
  // buffers: a message's rate depends on its own size (its protocol, eager or rendezvous; its
  // per-message costs), which the probe's points measure, one message of S from buffers of 2 S.
  void price_messages(double bytes) { message_bytes_ = bytes; }
  std::optional<LimitingLink> nic(int k) {
    const NodeModel& n = at(k);
    if (n.nic.known()) return link(LinkLevel::inter, n, n.nic, rank_bytes_, kBuffers);  // one rate: no curve
    miss(n.host + "'s link rate (its NIC reports none: --link-rate " + n.host + "=RATE)");
    return std::nullopt;
  }
  std::optional<LimitingLink> copy(int k) { return copy_at(k, rank_bytes_, kBuffers); }
  // The rate a rank reduces at, its working set `bytes`: the measured reduction rate where there is
  // one (and the copy rate is not the user's), else the copy rate.
  std::optional<LimitingLink> reduction_at(int k, double bytes, std::string_view what) {
    const NodeModel& n = at(k);
    if (!n.reduce.known() || n.copy.source == FigureSource::user) return copy_at(k, bytes, what);
    return link(LinkLevel::memory, n, n.reduce, bytes, what);
  }
  std::optional<LimitingLink> reduction(int k) { return reduction_at(k, rank_bytes_, kBuffers); }
  // shm's reductions, of slots that other ranks of node k just wrote (`slots`: the bytes of a step's
  // slots): the rate measured so at the rank's buffers' working set where there is one (and the
  // copy rate is not the user's), else the reduction rate with the slots in the caches.
  std::optional<LimitingLink> slot_reduction(int k, double slots) {
    const NodeModel& n = at(k);
    if (!n.reduce_slot.known() || n.copy.source == FigureSource::user) return reduction_at(k, slots, kSlotsInCaches);
    return link(LinkLevel::memory, n, n.reduce_slot, rank_bytes_, kBuffers);
  }
  // A copy between a rank's buffer and a slot that stays in the caches, into the slot (`into`) or
  // out of it: its measured rate where there is one (and the copy rate is not the user's), else
  // the copy rate.
  std::optional<LimitingLink> staged(int k, bool into) {
    const NodeModel& n = at(k);
    const Rate& r = into ? n.copy_in : n.copy_out;
    if (!r.known() || n.copy.source == FigureSource::user) return copy(k);
    return link(LinkLevel::memory, n, r, rank_bytes_, kBuffers);
  }
  // The copy rate at a working set of `bytes`, `what` saying whose (a chunk that stays in the caches).
  std::optional<LimitingLink> copy_at(int k, double bytes, std::string_view what) {
    const NodeModel& n = at(k);
    if (n.copy.known()) return link(LinkLevel::memory, n, n.copy, bytes, what);
    miss(n.host + "'s memory copy rate (" + (n.copy.detail.empty() ? "" : n.copy.detail + "; ") +
         "copy=RATE in a --machine file)");
    return std::nullopt;
  }
  // The slowest of `get` (a member of this class, or a callable of the node) over the nodes the
  // ranks use; nullopt where any node lacks it.
  template <class Get>
  std::optional<LimitingLink> slowest(Get get) {
    std::optional<LimitingLink> worst;
    bool all = true;
    for (int k : used_nodes()) {
      std::optional<LimitingLink> l;
      if constexpr (std::is_member_function_pointer_v<Get>)
        l = (this->*get)(k);
      else
        l = get(k);
      if (!l)
        all = false;
      else if (!worst || l->link_GBps < worst->link_GBps)
        worst = l;
    }
    return all ? worst : std::nullopt;
  }
  std::vector<int> used_nodes() const {
    std::vector<int> used(node_.begin(), node_.end());
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    return used;
  }
  void miss(std::string what) {
    if (std::find(missing_.begin(), missing_.end(), what) == missing_.end()) missing_.push_back(std::move(what));
  }

 private:
  static constexpr std::string_view kBuffers = "a rank, its buffers";  // the row's working set
  static constexpr std::string_view kSlotsInCaches =
      "a step, its slots in the caches";  // shm's reductions' working set
  // Node n's rate r at a working set of `bytes` (whose: `what`) as the link that limits a price.
  LimitingLink link(LinkLevel level, const NodeModel& n, const Rate& r, double bytes, std::string_view what) const {
    return LimitingLink{
        level, n.host, rate_at(r, bytes), 1, r.source, detail_at(r, bytes, what), r.spread, moved_at(r, bytes)};
  }
  // A rate between two ranks of node n: by its curve at the algorithm's messages (price_messages),
  // where it has both, else at the rank's buffers. A message of m is the probe's point at 2 m (its
  // two buffers); past the curve's peak, where the buffers leave the caches, no faster than the
  // rank's own buffers allow: each of the two limits the rate.
  // Below the curve's smallest point a message takes that point's time (its fixed costs: the
  // library's call, the flags a message waits on), not less: the rate falls with the message's size.
  LimitingLink message_link(const NodeModel& n, const Rate& r) const {
    if (r.curve.empty() || !(message_bytes_ > 0)) return link(LinkLevel::intra, n, r, rank_bytes_, kBuffers);
    const double at = 2 * message_bytes_;
    const CurvePoint& first = r.curve.front();
    LimitingLink l{LinkLevel::intra, n.host, rate_at(r, at), 1, r.source, {}, r.spread, moved_at(r, at)};
    l.message_floor_us = message_us(first);
    if (n.self_exchange.known() && !n.self_exchange.curve.empty()) {
      l.call_us = message_us(n.self_exchange.curve.front());
      l.call_detail = n.self_exchange.detail;
    }
    l.detail = r.detail + "; at messages of " + bytes_text(static_cast<std::uint64_t>(message_bytes_));
    if (at < first.bytes) {
      l.link_GBps = first.gbytes_per_s * at / first.bytes;
      l.detail += " (under its smallest, of " + bytes_text(static_cast<std::uint64_t>(first.bytes / 2)) + ": " +
                  analysis::format_number(l.message_floor_us, 3) + " us a message, as that one)";
    } else {
      l.detail += " (its point of " + bytes_text(static_cast<std::uint64_t>(at)) + ", a message's two buffers)";
    }
    const auto peak = std::max_element(r.curve.begin(), r.curve.end(), [](const CurvePoint& a, const CurvePoint& b) {
      return a.gbytes_per_s < b.gbytes_per_s;
    });
    const double buffers_GBps = rank_bytes_ > peak->bytes ? rate_at(r, rank_bytes_) : l.link_GBps;
    if (buffers_GBps < l.link_GBps) {
      l.link_GBps = buffers_GBps;
      l.moved = std::max(l.moved, moved_at(r, rank_bytes_));
      l.detail += " and, past its peak at " + bytes_text(static_cast<std::uint64_t>(peak->bytes)) + ", at " +
                  bytes_text(static_cast<std::uint64_t>(rank_bytes_)) + " " + std::string(kBuffers);
    }
    l.detail += curve_span(r);
    return l;
  }
  // What priced a rate at a working set: its curve's point there, or its one figure.
  std::string detail_at(const Rate& r, double bytes, std::string_view what) const {
    if (r.curve.empty()) return r.detail;
    return r.detail + "; at " + bytes_text(static_cast<std::uint64_t>(bytes)) + " " + std::string(what) + curve_span(r);
  }
  // ", on its curve (FIRST to LAST)": the sizes a curve's points span, after the point that priced.
  static std::string curve_span(const Rate& r) {
    return ", on its curve (" + bytes_text(static_cast<std::uint64_t>(r.curve.front().bytes)) + " to " +
           bytes_text(static_cast<std::uint64_t>(r.curve.back().bytes)) + ")";
  }

  const MachineModel& m_;
  std::span<const int> node_;
  double rank_bytes_ = 0;
  double message_bytes_ = 0;  // the algorithm's messages (price_messages); 0: by the rank's buffers
  std::vector<std::string> missing_;
};

// The time a byte takes through a link (us per byte, x 1e3), each flow getting its share.
double inverse_rate(const LimitingLink& l) {
  return l.sharing / l.link_GBps;
}

// Each flow of a step with the link that limits it and the rate it gets there (a node's link is
// shared by the step's flows through it in one direction); nullopt where a link is not known.
std::optional<std::vector<LimitingLink>> flow_links(const Step& s, Pricer& pr) {
  std::vector<int> out(pr.nodes(), 0), in(pr.nodes(), 0);  // the step's flows leaving, entering each node
  auto count = [](std::vector<int>& v, int k) -> int& { return v[static_cast<std::size_t>(k)]; };
  for (const Flow& f : s.flows)
    if (pr.node(f.src) != pr.node(f.dst)) ++count(out, pr.node(f.src)), ++count(in, pr.node(f.dst));
  std::vector<int> inside(pr.nodes(), 0);  // the step's flows between ranks of each node
  for (const Flow& f : s.flows)
    if (pr.node(f.src) == pr.node(f.dst)) ++count(inside, pr.node(f.src));
  std::vector<LimitingLink> links;
  bool all = true;
  for (const Flow& f : s.flows) {
    std::optional<LimitingLink> worst;
    auto consider = [&](std::optional<LimitingLink> l, int sharing) {
      if (!l) {
        all = false;
        return;
      }
      l->sharing = sharing;
      if (!worst || inverse_rate(*l) > inverse_rate(*worst)) worst = l;
    };
    const int a = pr.node(f.src), b = pr.node(f.dst);
    if (a == b) {
      consider(count(inside, a) == 1 ? pr.intra_one(a) : pr.intra(a), 1);
    } else {
      consider(pr.nic(a), count(out, a));
      consider(pr.nic(b), count(in, b));
    }
    if (worst) links.push_back(std::move(*worst));
  }
  if (!all) return std::nullopt;
  return links;
}

// A message through a link on a curve of messages with the node's call (between ranks of one node,
// where measured) pays that call beside its transfer; through any other (between nodes, or a rate
// alone) the latency.
bool pays_call(const LimitingLink& l) {
  return l.message_floor_us > 0 && l.call_us > 0;
}

// A share of an algorithm's bytes (relative to the other parts') and the link that carries it;
// `messages`, its share of the algorithm's messages (a step: one; a chain's hop: its rounds), and
// of those, `latency_messages` pay the latency: a step or a round pays it where any of its flows
// does (its slowest by rate may be between ranks of one node, whose rate at the smallest messages
// is under the link's), a chained step for the share of its chain that crosses; the others pay
// their call, `call` (the slowest call of the flows that pay one).
struct Part {
  double weight = 1;
  LimitingLink link;
  double messages = 1;
  double latency_messages = 0;
  LimitingLink call;
};

// How many of links[0 .. i) pay the latency, for i = 0 .. laps x links.size() (the links `laps`
// times round, for cyclic windows).
std::vector<int> latency_counts(const std::vector<LimitingLink>& links, std::size_t laps = 1) {
  const std::size_t n = links.size();
  std::vector<int> counts(laps * n + 1, 0);
  for (std::size_t i = 0; i < laps * n; ++i) counts[i + 1] = counts[i] + !pays_call(links[i % n]);
  return counts;
}

// The most flows that pay the latency in a chain of `length` consecutive flows of a chained step
// (cyclic: the ring's flows in order), over every place it may start.
double chain_latency_flows(const std::vector<LimitingLink>& links, double length) {
  const std::size_t p = links.size();
  if (p == 0 || !(length >= 1)) return 0;
  const std::vector<int> paying = latency_counts(links, 2);
  const auto whole = static_cast<std::size_t>(length) / p, rest = static_cast<std::size_t>(length) % p;
  int most = 0;
  for (std::size_t start = 0; start < p; ++start) most = std::max(most, paying[start + rest] - paying[start]);
  return static_cast<double>(whole) * paying[p] + most;
}

// The parts of a pattern: each step through its slowest flow, or each round of a chain through its
// slowest hop (the hops' rates those of every hop at once), a hop's rounds together; nullopt where
// a link is not known. `chain`: the messages of a chained step's chain (the cost terms' alpha count).
std::optional<std::vector<Part>> pattern_parts(const Pattern& pattern, Pricer& pr, double chain = 1) {
  std::vector<Part> parts;
  bool all = true;
  if (pattern.rounds.empty()) {
    const double length = std::max(1.0, std::round(chain));
    for (const Step& s : pattern.steps) {
      const auto links = flow_links(s, pr);
      if (!links) {
        all = false;
        continue;
      }
      if (links->empty()) continue;
      Part part;
      part.weight = s.weight;
      part.link = *std::max_element(links->begin(), links->end(),
                                    [](const auto& x, const auto& y) { return inverse_rate(x) < inverse_rate(y); });
      part.latency_messages = s.chained ? std::min(1.0, chain_latency_flows(*links, length) / length)
                                        : std::all_of(links->begin(), links->end(), pays_call) ? 0.0 : 1.0;
      for (const LimitingLink& l : *links)
        if (pays_call(l) && l.call_us > part.call.call_us) part.call = l;
      parts.push_back(std::move(part));
    }
    if (!all) return std::nullopt;
    return parts;
  }
  const auto hops = flow_links(pattern.steps.front(), pr);
  if (!hops) return std::nullopt;
  // Hops 1..h that pay the latency, to tell a round that has one.
  const std::vector<int> latency_hops = latency_counts(*hops);
  // The slowest hop of each round: the rounds' hops only move forward, so a deque of the hops in
  // view, slowest first, finds each in one pass.
  std::vector<double> rounds_of(hops->size(), 0), latency_rounds_of(hops->size(), 0);
  std::deque<std::size_t> view;
  std::size_t next = 0;
  for (const Round& r : pattern.rounds) {
    for (; next < static_cast<std::size_t>(r.last); ++next) {
      while (!view.empty() && inverse_rate((*hops)[view.back()]) <= inverse_rate((*hops)[next])) view.pop_back();
      view.push_back(next);
    }
    while (view.front() + 1 < static_cast<std::size_t>(r.first)) view.pop_front();
    rounds_of[view.front()] += r.count;
    if (latency_hops[static_cast<std::size_t>(r.last)] > latency_hops[static_cast<std::size_t>(r.first - 1)])
      latency_rounds_of[view.front()] += r.count;
  }
  for (std::size_t h = 0; h < hops->size(); ++h)
    if (rounds_of[h] > 0) parts.push_back({rounds_of[h], (*hops)[h], rounds_of[h], latency_rounds_of[h], (*hops)[h]});
  return parts;
}

// A flat algorithm's expectation: its terms, its pattern's links.
// The bytes a rank copies locally besides its terms, as a fraction of n (out of place): its own
// block into the output (allgather, alltoall, gather and scatter at the root: 1/p; rhd's
// reduce-scatter its block out of the halving's scratch: 1/p), the root's array into its output
// before a broadcast's first send (ours: 1). collectives/src/algorithms.
double local_copy_factor(Collective c, std::string_view algorithm, int p) {
  switch (c) {
    case Collective::allgather:
    case Collective::alltoall:
    case Collective::gather:
    case Collective::scatter:
      return 1.0 / p;
    case Collective::reducescatter:
      return algorithm == "rhd" ? 1.0 / p : 0.0;  // its block out of the halving's scratch
    case Collective::broadcast:
      return algorithm == "ring" || algorithm == "rhd" || algorithm == "tree" ? 1.0 : 0.0;
    default:
      return 0;
  }
}

Expectation flat(Pricer& pr, const CostTerms& terms, const Pattern& pattern, double alpha, double n,
                 double copy_factor = 0) {
  Expectation e;
  if (terms.alpha_count > 0) pr.price_messages(terms.beta_factor * n / terms.alpha_count);
  double weights = 0, inverse = 0, worst = -1;  // sum of weight / (GB/s) over the parts
  double floor_us = 0;                          // the largest least time of a message of the parts' links
  double call_us = 0;                           // the slowest call of a message alone of the parts' links
  std::string call_detail;
  // The parts' messages, those of them that pay the latency, and the others' least times and calls
  // summed over their messages (floors, own_calls).
  double messages = 0, latency_messages = 0, floors = 0, own_calls = 0;
  const auto parts = pattern_parts(pattern, pr, terms.alpha_count);
  if (parts)
    for (const Part& p : *parts) {
      const LimitingLink& l = p.link;
      const double part = p.weight * inverse_rate(l);
      weights += p.weight, inverse += part;
      floor_us = std::max(floor_us, l.message_floor_us);
      messages += p.messages, latency_messages += p.latency_messages;
      const double calling = p.messages - p.latency_messages;  // > 0: pays_call(p.call)
      if (calling > 0) {
        floors += calling * p.call.message_floor_us, own_calls += calling * p.call.call_us;
        if (p.call.call_us > call_us) call_us = p.call.call_us, call_detail = p.call.call_detail;
      }
      if (part > worst) worst = part, e.limit = l;
    }
  const bool calls = latency_messages == 0;  // every message pays its call
  // Passes over memory: local copies at the copy rate, reductions at the reduction rate.
  std::optional<LimitingLink> mem, red;
  if (copy_factor > 0) mem = pr.slowest(&Pricer::copy);
  if (terms.gamma_factor > 0) red = pr.slowest(&Pricer::reduction);
  if (!parts || (copy_factor > 0 && !mem) || (terms.gamma_factor > 0 && !red)) return e;
  const double beta_us = weights > 0 ? terms.beta_factor * n * (inverse / weights) / kBytesPerUsPerGBps : 0;
  const double copy_us = mem ? copy_factor * n / (mem->link_GBps * kBytesPerUsPerGBps) : 0;
  const double gamma_us = red ? terms.gamma_factor * n / (red->link_GBps * kBytesPerUsPerGBps) : 0;
  if (copy_us + gamma_us > beta_us) e.limit = copy_us > gamma_us ? *mem : *red;
  // Each message's least time on the curve of its rate is part of beta_us (a message under the
  // curve's smallest takes that one's time) and a fixed cost per message: counted as latency.
  // Where every step is on such a curve, whose points hold the transfer's latency already, each
  // message pays besides its call, which a rank's exchange with itself measures (the ping-pong's
  // latency would count the transfer twice: docs/verdicts.md, "A message's least time, and its call").
  e.messages = terms.alpha_count;
  e.call_priced = calls && weights > 0;
  if (e.call_priced) alpha = e.alpha_us = call_us, e.call_detail = call_detail;
  if (latency_messages > 0 && latency_messages < messages) {
    // Some steps between ranks of one node on the curve, the others across a link without one
    // (between nodes): those pay their call, these the latency, each for its share of the
    // messages (a chain over 2 hosts x 2 ranks crosses the link in one round of three at 8 B).
    e.latency_share = latency_messages / messages;
    e.crossing_alpha_us = alpha, e.call_us = own_calls / (messages - latency_messages), e.call_detail = call_detail;
    alpha = e.alpha_us = e.latency_share * alpha + own_calls / messages;
    floor_us = floors / messages;
  }
  e.latency_us = terms.alpha_count * alpha + std::min(beta_us, terms.alpha_count * floor_us);
  e.time_us = terms.alpha_count * alpha + beta_us + copy_us + gamma_us;
  return e;
}

// shm: one node's copies and reductions (docs/verdicts.md, "The rate of a size"). Through the
// segment, each byte copied (B) moves between a rank's buffer and a slot that stays in the caches
// (shm_slot_copies: into a slot at the measured copy_in rate, out of one at copy_out's, the rest
// from input to output at the copy rate, each at the rank's buffers' working set; the bench
// measures copy_in and copy_out with the slots handed from core to core, as shm's are); each byte
// reduced (G) is read from slots other ranks just wrote, at the rate measured so (reduce_slot);
// where none was, from (p + 1) chunks in the caches at the reduction rate there (the copy rate's
// where none was measured). Direct, each byte is read from
// a peer's buffer through the kernel, as a message between the node's ranks is (the rate between
// them), and reduced in pieces that stay in the caches. From --shm-adapt's size the library times
// both on the call and keeps the faster: so does the price.
Expectation shm(Pricer& pr, Collective c, int p, double n, double alpha, const ExpectationOptions& o) {
  Expectation e;
  e.basis = "shm";
  const std::vector<int> used = pr.used_nodes();
  if (used.size() > 1) {
    pr.miss("shm runs on one node, the ranks are on " + std::to_string(used.size()));
    return e;
  }
  const ShmCostSettings settings = o.shm.value_or(shm_default_cost_settings(p));
  const auto terms = shm_cost_terms(c, p, n, settings);
  if (!terms) {
    pr.miss("shm's cost terms for " + std::string(collective_name(c)));
    return e;
  }
  const int k = used.front();
  const auto mem = pr.copy(k), in = pr.staged(k, true), out = pr.staged(k, false);
  const auto cached = pr.slot_reduction(k, (p + 1) * settings.chunk_bytes);
  const auto split = shm_slot_copies(c, p, n, settings);
  if (!mem || !in || !out || !cached || !split) return e;
  auto us = [&](double factor, const LimitingLink& l) { return factor * n / (l.link_GBps * kBytesPerUsPerGBps); };
  // A one-shot reduce splits the work between the ranks: the others fill their slots, the root
  // reduces them (it fills none); calls back to back overlap the two (a rank runs up to two
  // slots ahead), so the slower of them is the call's. Every other call's busiest rank does both.
  const bool split_roles = c == Collective::reduce && n < settings.two_shot_bytes;
  auto total = [&](const CostTerms& t, double copies_us) {
    const double gamma_us = us(t.gamma_factor, *cached);
    return t.alpha_count * alpha + (split_roles ? std::max(copies_us, gamma_us) : copies_us + gamma_us);
  };
  // Direct reads go through the kernel as a message between the node's ranks does: one flow at a
  // time where only the root reads (gather) or only one rank reads the root's (broadcast, scatter
  // on 2 ranks), else every rank at once.
  const bool one_flow = c == Collective::gather || ((c == Collective::broadcast || c == Collective::scatter) && p == 2);
  auto read_rate = [&] { return one_flow ? pr.intra_one(k) : pr.intra(k); };
  // Through the slots: each part of the copies at its rate, the largest part the limit.
  const bool slots = !(shm_has_direct(c) && n >= settings.direct_bytes);
  double copies_us = 0;
  LimitingLink copies = *mem;
  if (slots) {
    double largest = -1;
    for (const auto& [f, l] :
         {std::pair{split->in, &*in}, std::pair{split->out, &*out}, std::pair{split->local, &*mem}}) {
      const double part = us(f, *l);
      copies_us += part;
      if (part > largest) largest = part, copies = *l;
    }
  } else {  // direct from direct_bytes on: every byte read from a peer through the kernel
    const auto reads = read_rate();
    if (!reads) return e;
    copies = *reads, copies_us = us(terms->beta_factor, *reads);
  }
  double time = total(*terms, copies_us);
  CostTerms chosen = *terms;
  if (slots && shm_has_direct(c) && n >= o.shm_adapt_bytes) {
    ShmCostSettings direct = settings;
    direct.direct_bytes = 0;
    const auto d = shm_cost_terms(c, p, n, direct);
    const auto reads = read_rate();
    if (d && reads) {
      const double reads_us = us(d->beta_factor, *reads);
      if (total(*d, reads_us) < time) {
        time = total(*d, reads_us), chosen = *d, copies = *reads, copies_us = reads_us;
        e.basis = "shm, direct reads (its measured choice from --shm-adapt's size)";
      }
    }
  }
  e.limit = copies_us >= us(chosen.gamma_factor, *cached) ? copies : *cached;
  e.messages = chosen.alpha_count;
  e.latency_us = chosen.alpha_count * alpha;
  e.time_us = time;
  return e;
}

// hier: the node level at the slowest node's copy rate, the level between nodes at the slowest
// node's link (the terms count the node's ranks sharing it); alpha for the level between nodes
// (for the node level where there is one node).
Expectation hier(Pricer& pr, Collective c, std::span<const int> node_of_rank, double n, double alpha,
                 const ExpectationOptions& o) {
  Expectation e;
  const std::vector<int> used = pr.used_nodes();
  std::vector<int> per_node;
  for (int k : used) per_node.push_back(static_cast<int>(std::count(node_of_rank.begin(), node_of_rank.end(), k)));
  const int s = per_node.front(), nn = static_cast<int>(used.size());
  if (std::any_of(per_node.begin(), per_node.end(), [s](int x) { return x != s; })) {
    pr.miss("a model of hier on nodes of different sizes");
    return e;
  }
  if (nn == 1) {  // shm on the whole call
    e = shm(pr, c, s, n, alpha, o);
    e.basis = "hier on one node: " + e.basis;
    return e;
  }
  const ShmCostSettings node_settings = o.shm.value_or(shm_default_cost_settings(s));
  const HierCostTerms t = hier_cost_terms(c, nn, s, n, {node_settings, o.ring_segment_bytes});
  e.basis = "hier: shm in nodes";
  if (nn > 1) e.basis += ", " + std::string(hier_cross_algorithm(c, n / s)) + " between them";
  const auto mem = pr.slowest(&Pricer::copy), red = pr.slowest(&Pricer::reduction);
  const auto link = nn > 1 ? pr.slowest(&Pricer::nic) : std::nullopt;
  if (!mem || !red || (nn > 1 && !link)) return e;
  // The node level's reductions read slots that stay in the caches, as shm's do.
  const auto cached = pr.slowest([&](int k) { return pr.slot_reduction(k, (s + 1) * node_settings.chunk_bytes); });
  if (!cached) return e;
  const double intra_us = t.intra.beta_factor * n / (mem->link_GBps * kBytesPerUsPerGBps) +
                          t.intra.gamma_factor * n / (cached->link_GBps * kBytesPerUsPerGBps);
  const double inter_us = link ? t.inter.beta_factor * n / (link->link_GBps * kBytesPerUsPerGBps) +
                                     t.inter.gamma_factor * n / (red->link_GBps * kBytesPerUsPerGBps)
                               : 0;
  e.limit = inter_us > intra_us ? *link : *mem;
  if (inter_us > intra_us) e.limit.sharing = s;
  // The node level's flag handoffs are priced only on one node: across nodes alpha is the
  // network's latency, 10-100x a handoff's, and shm's hundreds of steps would swamp the estimate.
  e.messages = nn > 1 ? t.inter.alpha_count : t.intra.alpha_count;
  e.latency_us = e.messages * alpha;
  e.time_us = e.latency_us + intra_us + inter_us;
  return e;
}

// NCCL's tree allreduce (nccl_tree_allreduce_cost_terms): the chain at the slowest rate between
// two ranks of a node of two or more, the tree at the slowest node's link, both at once; the
// reduction at the slowest copy rate.
Expectation nccl_tree(Pricer& pr, Collective c, std::span<const int> node_of_rank, double n, double alpha) {
  Expectation e;
  e.basis = "NCCL's pipelined tree (a double binary tree between the nodes, a chain in each)";
  if (c != Collective::allreduce) {
    pr.miss("NCCL's tree for " + std::string(collective_name(c)) + " (NCCL runs only allreduce as a tree)");
    return e;
  }
  const std::vector<int> used = pr.used_nodes();
  int s = 1;
  std::optional<LimitingLink> chain, tree;
  bool all = true;
  for (int k : used) {
    const int ranks = static_cast<int>(std::count(node_of_rank.begin(), node_of_rank.end(), k));
    s = std::max(s, ranks);
    if (ranks < 2) continue;
    const auto l = pr.intra(k);
    if (!l)
      all = false;
    else if (!chain || l->link_GBps < chain->link_GBps)
      chain = l;
  }
  if (used.size() > 1 && !(tree = pr.slowest(&Pricer::nic))) all = false;
  const auto mem = pr.slowest(&Pricer::reduction);
  if (!all || !mem) return e;
  const NcclTreeCostTerms t = nccl_tree_allreduce_cost_terms(static_cast<int>(used.size()), s);
  const double chain_us = chain ? t.chain.beta_factor * n / (chain->link_GBps * kBytesPerUsPerGBps) : 0;
  const double tree_us = tree ? t.tree.beta_factor * n / (tree->link_GBps * kBytesPerUsPerGBps) : 0;
  const double gamma_us = t.chain.gamma_factor * n / (mem->link_GBps * kBytesPerUsPerGBps);
  const double beta_us = std::max(chain_us, tree_us);
  e.limit = gamma_us > beta_us ? *mem : tree && tree_us >= chain_us ? *tree : *chain;
  e.messages = t.chain.alpha_count + t.tree.alpha_count;
  e.latency_us = e.messages * alpha;
  e.time_us = e.latency_us + beta_us + gamma_us;
  return e;
}

// The pattern of our flat algorithms and of the textbook ones (`segments`: the ring's reduce and
// broadcast chains').
Pattern pattern_of(std::string_view algorithm, Collective c, int p, double segments = 1) {
  if (algorithm == "ring" || algorithm == "pairwise_exchange") {
    if (algorithm == "ring" &&
        (c == Collective::reduce || c == Collective::broadcast || c == Collective::gather || c == Collective::scatter))
      return {{chain_step(p)}, chain_rounds(c, p, segments)};
    if (c != Collective::alltoall) {
      Step ring = shift_step(p, 1);
      ring.chained = algorithm == "ring";
      return {{ring}, {}};
    }
    Pattern steps;
    for (int k = 1; k < p; ++k) steps.steps.push_back(shift_step(p, k));
    return steps;
  }
  if (algorithm == "tree" || algorithm == "binomial_tree")
    return {tree_steps(p, c == Collective::gather || c == Collective::scatter), {}};
  if (algorithm == "rhd" && (c == Collective::reduce || c == Collective::broadcast)) return {rhd_tree_steps(c, p), {}};
  const bool near = algorithm == "rabenseifner" || (algorithm == "rhd" && c == Collective::allreduce);
  return {rhd_steps(p, algorithm == "recursive_doubling" && c == Collective::allreduce, near), {}};
}

// The expectation at `alpha` us per message (expected_time without the busbw and the latency's
// check).
Expectation price(const MachineModel& model, std::span<const int> node_of_rank, Collective c,
                  std::string_view algorithm, double bytes, const ExpectationOptions& options, double alpha) {
  const int p = static_cast<int>(node_of_rank.size());
  Pricer pr(model, node_of_rank, buffer_bytes_per_rank(c, bytes, p));
  Expectation e;
  if (p == 1) {
    e.basis = "one rank: one copy of the array";
    if (const auto mem = pr.copy(node_of_rank.front())) {
      e.limit = *mem;
      e.time_us = bytes / (mem->link_GBps * kBytesPerUsPerGBps);
    }
  } else if (algorithm == "shm") {
    e = shm(pr, c, p, bytes, alpha, options);
  } else if (algorithm == "hier") {
    e = hier(pr, c, node_of_rank, bytes, alpha, options);
  } else if (algorithm == "nccl_tree") {
    e = nccl_tree(pr, c, node_of_rank, bytes, alpha);
  } else if (algorithm == "ring" || algorithm == "rhd" || algorithm == "tree") {
    const std::optional<CostTerms> terms = cost_terms_of(algorithm, c, p, {bytes, options.ring_segment_bytes});
    if (terms)
      e = flat(pr, *terms, pattern_of(algorithm, c, p, ring_segments(bytes, options.ring_segment_bytes)), alpha, bytes,
               local_copy_factor(c, algorithm, p));
    else
      pr.miss(std::string(algorithm) + "'s cost terms for " + std::string(collective_name(c)));
    e.basis = std::string(algorithm);
  } else if (library_chooses(algorithm)) {
    for (const TextbookAlgorithm a : kAllTextbookAlgorithms) {
      const auto terms = textbook_cost_terms(c, a, p);
      if (!terms) continue;
      Expectation x = flat(pr, *terms, pattern_of(textbook_algorithm_name(a), c, p), alpha, bytes,
                           c == Collective::broadcast ? 0 : local_copy_factor(c, "", p));
      if (x.time_us && (!e.time_us || *x.time_us < *e.time_us)) {
        e = std::move(x);
        e.basis = "best of the textbook algorithms (the library's choice is hidden): " +
                  std::string(textbook_algorithm_name(a));
      }
    }
    if (c == Collective::sendrecv) {  // no textbook algorithm: one message to the next rank, the ring's
      e = flat(pr, *ring_cost_terms(c, p, bytes, options.ring_segment_bytes), pattern_of("ring", c, p), alpha, bytes);
      e.basis = "one message to the next rank (the ring's sendrecv; the library's choice is hidden)";
    }
    if (e.basis.empty() && pr.missing().empty()) pr.miss("a textbook algorithm of " + std::string(collective_name(c)));
  } else {
    pr.miss("a cost model of algorithm '" + std::string(algorithm) + "'");
  }
  if (!e.call_priced && e.latency_share == 1) e.alpha_us = alpha;  // a call-priced or mixed row's is flat's
  e.missing = pr.missing();
  return e;
}

}  // namespace

double buffer_bytes_per_rank(Collective c, double bytes, int p) {
  const double part = p > 0 ? bytes / p : bytes;
  switch (c) {
    case Collective::allgather:
    case Collective::gather:
    case Collective::reducescatter:
    case Collective::scatter:
      return bytes + part;  // one rank's part on one side, the whole array on the other
    default:
      return 2 * bytes;  // the array in and out (nccl-tests' out of place)
  }
}

std::string_view link_level_name(LinkLevel level) {
  switch (level) {
    case LinkLevel::none:
      return "";
    case LinkLevel::memory:
      return "memory";
    case LinkLevel::intra:
      return "intra-node";
    case LinkLevel::inter:
      return "inter-node";
  }
  return "";
}

std::vector<int> placement_of(const MachineModel& model, int nranks) {
  std::vector<int> node = model.node_of_rank;
  if (node.empty())
    for (std::size_t k = 0; k < model.nodes.size(); ++k)
      node.insert(node.end(), model.nodes[k].ranks, static_cast<int>(k));
  if (static_cast<int>(node.size()) != nranks)
    throw std::invalid_argument("the machine model places " + std::to_string(node.size()) + " ranks, the run has " +
                                std::to_string(nranks));
  for (int k : node)
    if (k < 0 || static_cast<std::size_t>(k) >= model.nodes.size())
      throw std::invalid_argument("the machine model places a rank on node " + std::to_string(k) + " of " +
                                  std::to_string(model.nodes.size()));
  return node;
}

Expectation expected_time(const MachineModel& model, std::span<const int> node_of_rank, Collective c,
                          std::string_view algorithm, double bytes, const ExpectationOptions& options) {
  const int p = static_cast<int>(node_of_rank.size());
  for (int k : node_of_rank)
    if (k < 0 || static_cast<std::size_t>(k) >= model.nodes.size())
      throw std::invalid_argument("expected_time: rank placed on node " + std::to_string(k) + " of " +
                                  std::to_string(model.nodes.size()));
  if (p < 1) throw std::invalid_argument("expected_time: no ranks");
  const bool has_alpha = options.latency_us || model.latency_known();
  Expectation e = price(model, node_of_rank, c, algorithm, bytes, options,
                        options.latency_us.value_or(model.latency_known() ? model.latency_us : 0));
  if (!has_alpha && p > 1 && !e.call_priced) {
    // A model without the latency (written before the bench measured it): priced without it where
    // even a generous latency would be under 1/kLatencyFreeFactor of the time, else not at all.
    const bool one_node =
        std::all_of(node_of_rank.begin(), node_of_rank.end(), [&](int k) { return k == node_of_rank.front(); });
    const double generous = one_node ? kGenerousLatencyOneNodeUs : kGenerousLatencyUs;
    bool negligible = false;
    if (e.missing.empty() && e.time_us) {
      const Expectation g = price(model, node_of_rank, c, algorithm, bytes, options, generous);
      negligible = g.messages * generous * kLatencyFreeFactor <= *e.time_us;
    }
    if (negligible)
      e.latency_left_out = true;
    else
      e.missing.push_back(
          "the latency per message (the bench measures it at start-up; else a doctor file's 8 B "
          "pairs or a machine file's latency_us), needed below " +
          std::to_string(static_cast<int>(kLatencyFreeFactor)) + "x a generous " +
          std::to_string(static_cast<int>(generous)) + " us per message");
  }
  if (!e.missing.empty()) {
    e.time_us.reset();
    return e;
  }
  const double factor = busbw_factor(c, p);
  if (e.time_us && *e.time_us > 0 && factor > 0) e.busbw_GBps = factor * bytes / (*e.time_us * kBytesPerUsPerGBps);
  // Latency-bound, the rest of the time is a message's least time on a curve whose small sizes are
  // latency too (a ping-pong's): all of it may hide.
  if (options.calls_overlap && is_rooted(c) && p > 1 && algorithm != "shm")
    e.hidden_us = e.latency_bound() ? *e.time_us : e.latency_us;
  return e;
}

}  // namespace commscope
