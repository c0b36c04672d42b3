// Checks the profile libcommscope-mpiprof.so wrote for tests/mpi_comms.c, and its replay by
// commscope-replay when given: every call on its communicator, under its label and number.
//   test_mpiprof_comms_check MODE ITERS PROFILE [REPLAY]
// halves: the MPI_Iallreduce on each half under "mpi[0,1]" / "mpi[2,3]", numbered 0..ITERS-1;
//   the MPI_Ibarrier on MPI_COMM_WORLD numbered; the intercommunicator's collectives under
//   "mpi[0,1|2,3]", numbered 0..2 ITERS-1. Replayed: each half's iallreduce on that half.
// dups: the three communicators of ranks 0 and 1 under "mpi[0,1]", "mpi[0,1]#1", "mpi[0,1]#2",
//   each numbered 0..ITERS-1; rank 0, which enters the second one's allreduce 100 ms before
//   rank 1, waits there: its wait is more than its transfer. Replayed: every allreduce (2 ITERS
//   a rank) and barrier.
// pairs: each MPI_Sendrecv(_replace) is a send to the partner and a receive from it, labelled
//   by their world ranks, with their bytes; the one-way MPI_Sendrecv a send on the even rank and
//   a receive on the odd one. Replayed: the same sends and receives, between the same ranks.
// threads: the barriers on the fresh communicators under "mpi[0,1]", "mpi[0,1]#1", ... in order,
//   each numbered 0, alike on both ranks: each communicator took one number.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "commscope/formats/profile_file.hpp"

namespace pf = commscope::profiler;

namespace {

int g_failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  g_failures += ok ? 0 : 1;
}

struct Comm {
  std::string op, name, label;
  std::int64_t bytes = 0, seq = -1, start = 0;
};

// A rank's communication events in time order, with their operators' names.
std::vector<Comm> comms(const pf::Profile& p, std::size_t rank) {
  std::map<std::uint64_t, std::string> operators;
  for (const pf::Event& e : p.events.at(rank))
    if (e.kind == pf::EventKind::kOperator) operators[e.id] = p.strings.at(e.name);
  std::multimap<std::int64_t, Comm> sorted;
  for (const pf::Event& e : p.events.at(rank))
    if (e.kind == pf::EventKind::kCommunication)
      sorted.emplace(e.start_ns, Comm{operators.count(e.parent) ? operators[e.parent] : "", p.strings.at(e.name),
                                      p.strings.at(e.communicator), e.bytes, e.seq, e.start_ns});
  std::vector<Comm> out;
  for (auto& [t, c] : sorted) out.push_back(c);
  return out;
}

std::string rank_name(std::size_t r) {
  return "rank " + std::to_string(r);
}

// The numbers of `name` events under `label`, in order.
std::vector<std::int64_t> seqs(const std::vector<Comm>& cs, const std::string& name, const std::string& label) {
  std::vector<std::int64_t> out;
  for (const Comm& c : cs)
    if (c.name == name && c.label == label) out.push_back(c.seq);
  return out;
}

std::vector<std::int64_t> count_up(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
  return out;
}

std::string text(const std::vector<std::int64_t>& v) {
  std::string out = "[";  // appended: GCC 12 warns falsely (-Wrestrict) about "," + std::to_string(...)
  for (std::size_t i = 0; i < v.size(); ++i) out.append(i > 0 ? "," : "").append(std::to_string(v[i]));
  return out + "]";
}

int count(const std::vector<Comm>& cs, const std::string& name, const std::string& label) {
  int n = 0;
  for (const Comm& c : cs) n += c.name == name && c.label == label;
  return n;
}

void halves(const pf::Profile& p, const pf::Profile* replay, int iters) {
  const std::string inter = "mpi[0,1|2,3]";
  for (std::size_t r = 0; r < p.events.size(); ++r) {
    const std::string half = r < 2 ? "mpi[0,1]" : "mpi[2,3]";
    const std::vector<Comm> cs = comms(p, r);
    const auto got = seqs(cs, "iallreduce", half);
    check(got == count_up(iters),
          rank_name(r) + ": iallreduce under " + half + " numbered " + text(got) + ", wanted " + text(count_up(iters)));
    int world = 0, inter_calls = 0;
    std::set<std::int64_t> inter_seqs;
    for (const Comm& c : cs) {
      world += c.name == "ibarrier" && c.label.empty() && c.seq >= 0;
      if (c.label == inter && (c.name == "allreduce" || c.name == "ibarrier")) ++inter_calls, inter_seqs.insert(c.seq);
    }
    check(world == iters, rank_name(r) + ": " + std::to_string(world) + " ibarrier numbered on MPI_COMM_WORLD");
    check(inter_calls == 2 * iters && inter_seqs.size() == static_cast<std::size_t>(2 * iters) &&
              *inter_seqs.begin() == 0 && *inter_seqs.rbegin() == 2 * iters - 1,
          rank_name(r) + ": " + std::to_string(inter_calls) + " intercommunicator collectives under " + inter +
              ", numbered 0.." + std::to_string(inter_seqs.empty() ? -1 : *inter_seqs.rbegin()));
    if (replay == nullptr || r >= replay->events.size()) continue;
    const std::vector<Comm> rs = comms(*replay, r);
    const int on_half = count(rs, "iallreduce", half), on_world = count(rs, "iallreduce", "");
    check(on_half == iters && on_world == 0, rank_name(r) + ": replayed " + std::to_string(on_half) +
                                                 " iallreduce on " + half + " and " + std::to_string(on_world) +
                                                 " on all ranks, wanted " + std::to_string(iters) + " and 0");
  }
}

void dups(const pf::Profile& p, const pf::Profile* replay, int iters) {
  const std::vector<std::int64_t> want = count_up(iters);
  for (std::size_t r = 0; r < p.events.size(); ++r) {
    const std::vector<Comm> cs = comms(p, r);
    for (const auto& [name, label] : std::vector<std::pair<std::string, std::string>>{
             {"allreduce", "mpi[0,1]"}, {"allreduce", "mpi[0,1]#1"}, {"barrier", "mpi[0,1]#2"}}) {
      const auto got = seqs(cs, name, label);
      check(got == want,
            rank_name(r) + ": " + name + " under " + label + " numbered " + text(got) + ", wanted " + text(want));
    }
    if (replay == nullptr || r >= replay->events.size()) continue;
    const std::vector<Comm> rs = comms(*replay, r);
    int allreduce = 0, barrier = 0;
    for (const Comm& c : rs) allreduce += c.name == "allreduce", barrier += c.name == "barrier";
    check(allreduce == 2 * iters && barrier == iters,
          rank_name(r) + ": replayed " + std::to_string(allreduce) + " allreduce and " + std::to_string(barrier) +
              " barrier, wanted " + std::to_string(2 * iters) + " and " + std::to_string(iters));
  }
  std::int64_t wait = 0, transfer = 0;
  for (const pf::BreakdownRow& row : p.breakdown)
    if (row.rank == 0 && row.iteration >= 1) wait += row.comm_wait_ns, transfer += row.comm_transfer_ns;
  check(wait > transfer, "rank 0 waits for rank 1 on the second communicator: " + std::to_string(wait / 1000000) +
                             " ms wait, " + std::to_string(transfer / 1000000) + " ms transfer");
}

void pairs(const pf::Profile& p, const pf::Profile* replay, int iters) {
  for (std::size_t r = 0; r < p.events.size(); ++r) {
    const int me = static_cast<int>(r), peer = me ^ 1;
    const std::string to = "mpi[" + std::to_string(me) + ">" + std::to_string(peer) + "]";
    const std::string from = "mpi[" + std::to_string(peer) + ">" + std::to_string(me) + "]";
    // (operator, event, label, bytes) -> calls
    std::map<std::tuple<std::string, std::string, std::string, std::int64_t>, int> want, got;
    want[{"MPI_Sendrecv", "send", to, 1024 + me}] = iters;
    want[{"MPI_Sendrecv", "recv", from, 1024 + peer}] = iters;
    want[{"MPI_Sendrecv_replace", "send", to, 1024}] = iters;
    want[{"MPI_Sendrecv_replace", "recv", from, 1024}] = iters;
    want[{"MPI_Sendrecv", me % 2 == 0 ? "send" : "recv", me % 2 == 0 ? to : from, 64}] = iters;
    for (const Comm& c : comms(p, r)) ++got[{c.op, c.name, c.label, c.bytes}];
    for (const auto& [key, n] : got)
      if (want[key] != n)
        check(false, rank_name(r) + ": " + std::to_string(n) + " x " + std::get<0>(key) + " " + std::get<1>(key) +
                         " '" + std::get<2>(key) + "' " + std::to_string(std::get<3>(key)) + " B, wanted " +
                         std::to_string(want[key]));
    check(got == want, rank_name(r) + ": each sendrecv a send on " + to + " and a receive on " + from);
    if (replay == nullptr || r >= replay->events.size()) continue;
    std::map<std::pair<std::string, std::string>, int> played, expected;
    expected[{"send", to}] = 2 * iters + (me % 2 == 0 ? iters : 0);
    expected[{"recv", from}] = 2 * iters + (me % 2 == 1 ? iters : 0);
    for (const Comm& c : comms(*replay, r)) ++played[{c.name, c.label}];
    std::string seen;
    for (const auto& [key, n] : played)
      seen.append(" ").append(std::to_string(n)).append(" x ").append(key.first).append(" '").append(key.second) +=
          '\'';
    check(played == expected, rank_name(r) + ": replayed" + seen + "; wanted " +
                                  std::to_string(expected[{"send", to}]) + " sends on " + to + " and " +
                                  std::to_string(expected[{"recv", from}]) + " receives on " + from);
  }
}

void threads(const pf::Profile& p, int iters) {
  std::vector<std::string> want;
  for (int i = 0; i < iters; ++i) want.push_back(i == 0 ? "mpi[0,1]" : "mpi[0,1]#" + std::to_string(i));
  for (std::size_t r = 0; r < p.events.size(); ++r) {
    std::vector<std::string> labels;
    int numbered_once = 0, messages = 0;
    for (const Comm& c : comms(p, r)) {
      if (c.name == "barrier") labels.push_back(c.label), numbered_once += c.seq == 0;
      messages += c.name == "send" || c.name == "recv";
    }
    std::size_t first_bad = 0;
    while (first_bad < std::min(labels.size(), want.size()) && labels[first_bad] == want[first_bad]) ++first_bad;
    check(labels == want && numbered_once == iters,
          rank_name(r) + ": " + std::to_string(labels.size()) + " barriers, each on its own communicator in order" +
              (labels == want ? ""
                              : " (barrier " + std::to_string(first_bad) + " under '" +
                                    (first_bad < labels.size() ? labels[first_bad] : "(none)") + "', wanted '" +
                                    (first_bad < want.size() ? want[first_bad] : "(none)") + "')") +
              ", " + std::to_string(numbered_once) + " numbered 0");
    check(messages == 2 * iters, rank_name(r) + ": " + std::to_string(messages) + " messages from the threads");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: test_mpiprof_comms_check halves|dups|pairs|threads ITERS PROFILE [REPLAY]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int iters = std::atoi(argv[2]);
  try {
    const pf::Profile p = pf::read_profile(argv[3], true);
    pf::Profile replayed;
    if (argc == 5) replayed = pf::read_profile(argv[4], true);
    const pf::Profile* replay = argc == 5 ? &replayed : nullptr;
    if (mode == "halves")
      halves(p, replay, iters);
    else if (mode == "dups")
      dups(p, replay, iters);
    else if (mode == "pairs")
      pairs(p, replay, iters);
    else if (mode == "threads")
      threads(p, iters);
    else
      return std::fprintf(stderr, "test_mpiprof_comms_check: unknown mode '%s'\n", mode.c_str()), 2;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("%s\n", g_failures ? "test_mpiprof_comms_check: FAILED" : "test_mpiprof_comms_check: all checks passed");
  return g_failures ? 1 : 0;
}
