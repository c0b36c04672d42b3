// commscope-report hang DIR: the flight records of a stuck job (libcommscope-mpiprof.so's
// rankNNNNN.flight files, docs/hang.md) read together: per communicator the last call every
// member completed, who waits at the next one and who never arrived there (and where that rank is
// instead), calls that differ at one sequence number (a desync), ranks that wait on each other's
// messages, and ranks that wrote no file. One verdict line first.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/report.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {
namespace {

namespace fs = std::filesystem;

struct FlightCall {
  std::int64_t seq = -1;
  std::string op, link;
  std::int64_t bytes = 0;
  int peer = -1;
  double posted = 0, completed = 0;  // completed 0: not completed
  // A collective's datatype, reduction and root's world rank ("" and -1 where none, or in records
  // written before them).
  std::string type, reduction;
  int root = -1;
  // A nonblocking call (its post above): when a wait or test first looked at its request and when
  // one completed it (0: not), in records that follow requests.
  bool nonblocking = false;
  double checked = 0, done = 0;
};

// A nonblocking call whose post returned and that no wait or test has completed.
bool open_request(const FlightCall& c) {
  return c.nonblocking && c.completed != 0 && c.done == 0;
}
struct FlightComm {
  std::string label;
  std::vector<int> members;
  std::vector<FlightCall> calls;  // the last ones, oldest first
};
struct FlightRank {
  int rank = -1, size = 0, pid = 0;
  std::string host, reason, file, tool;
  std::string phase;               // the operator or phase it last entered ("" where none said)
  std::string error;               // the MPI error that made the rank write it ("error" records)
  std::vector<std::string> hosts;  // every world rank's, as gathered at MPI_Init ("-": none given)
  double written = 0, last_done = 0;
  std::vector<FlightComm> comms;
};

[[noreturn]] void bad(const std::string& file, int line, const std::string& what) {
  throw InputError(file + ":" + std::to_string(line) + ": " + what);
}

FlightRank read_flight(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot read it");
  FlightRank r;
  r.file = path.string();
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream s(line);
    std::string key;
    s >> key;
    if (n == 1) {
      int version = 0;
      if (key != "commscope-flight" || !(s >> version) || version != 1)
        bad(r.file, n, "not a commscope flight record (version 1)");
      continue;
    }
    bool ok = true;
    if (key == "rank") {
      ok = static_cast<bool>(s >> r.rank);
    } else if (key == "size") {
      ok = static_cast<bool>(s >> r.size);
    } else if (key == "host") {
      ok = static_cast<bool>(s >> r.host);
    } else if (key == "hosts") {
      for (std::string h; s >> h;) r.hosts.push_back(h);
    } else if (key == "pid") {
      ok = static_cast<bool>(s >> r.pid);
    } else if (key == "reason") {
      ok = static_cast<bool>(s >> r.reason);
    } else if (key == "error") {
      std::getline(s >> std::ws, r.error);
    } else if (key == "tool") {
      ok = static_cast<bool>(s >> r.tool);
    } else if (key == "phase") {  // NAME SINCE: the time is not used (a phase may have ended since)
      ok = static_cast<bool>(s >> r.phase);
    } else if (key == "written") {
      ok = static_cast<bool>(s >> r.written);
    } else if (key == "last_done") {
      ok = static_cast<bool>(s >> r.last_done);
    } else if (key == "comm") {
      FlightComm c;
      std::string members;
      ok = static_cast<bool>(s >> c.label >> members);
      for (std::size_t at = 0; ok && at < members.size();) {
        std::size_t end = members.find(',', at);
        if (end == std::string::npos) end = members.size();
        try {
          c.members.push_back(std::stoi(members.substr(at, end - at)));
        } catch (const std::exception&) {
          ok = false;
        }
        at = end + 1;
      }
      r.comms.push_back(std::move(c));
    } else if (key == "call") {
      if (r.comms.empty()) bad(r.file, n, "a call before any comm line");
      FlightCall c;
      ok = static_cast<bool>(s >> c.seq >> c.op >> c.bytes >> c.peer >> c.link >> c.posted >> c.completed);
      if (c.link == "-") c.link.clear();
      if (ok && s >> c.type >> c.reduction >> c.root) {  // the later fields
        if (c.type == "-") c.type.clear();
        if (c.reduction == "-") c.reduction.clear();
        std::string checked, done;  // a nonblocking call's request; "- -" for a blocking call
        if (s >> checked >> done && checked != "-") {
          try {
            c.checked = std::stod(checked), c.done = std::stod(done), c.nonblocking = true;
          } catch (const std::exception&) {
            ok = false;
          }
        }
      }
      r.comms.back().calls.push_back(std::move(c));
    }  // other keys: later versions' additions, skipped
    if (!ok) bad(r.file, n, "cannot read '" + line + "'");
  }
  if (n == 0) throw InputError(r.file + ": empty");
  if (r.rank < 0 || r.size <= r.rank) bad(r.file, n, "no rank and size");
  return r;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

// "rank 3", "ranks 0-2": the word and rank_list's list.
std::string ranks_named(const std::vector<int>& ranks) {
  return (ranks.size() > 1 ? "ranks " : "rank ") + rank_list(ranks);
}

// " (on host1, host2)": the hosts of `ranks` where known, each once; "" where none is.
template <class HostOf>
std::string hosts_named(const std::vector<int>& ranks, const HostOf& host_of) {
  std::vector<std::string> hosts;
  for (int r : ranks)
    if (const std::string h = host_of(r); !h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end())
      hosts.push_back(h);
  if (hosts.empty()) return "";
  std::string out = " (on ";
  for (const std::string& h : hosts) out += h + ", ";
  out.resize(out.size() - 2);
  return out + ")";
}

// Where a rank is: its newest call not completed (the communicator's label, the call), else
// outside MPI since its last call completed.
struct Where {
  const FlightComm* comm = nullptr;
  const FlightCall* call = nullptr;
  double since = 0;  // seconds before the record was written
};
Where where_is(const FlightRank& r) {
  Where w;
  for (const FlightComm& c : r.comms)
    for (const FlightCall& call : c.calls)
      if (call.completed == 0 && (w.call == nullptr || call.posted > w.call->posted)) w.comm = &c, w.call = &call;
  w.since = r.written - (w.call != nullptr ? w.call->posted : r.last_done);
  return w;
}

// What a call is, for telling members apart at one sequence number: "allreduce of 8 B (double,
// sum)", "broadcast of 8 B (double, root 0)".
std::string kind_text(const FlightCall& call) {
  std::string s = call.op + " of " + std::to_string(call.bytes) + " B", detail;
  for (const std::string& d : {call.type, call.reduction})
    if (!d.empty()) detail += (detail.empty() ? "" : ", ") + d;
  if (call.root >= 0) detail += (detail.empty() ? "" : ", ") + std::string("root ") + std::to_string(call.root);
  return detail.empty() ? s : s + " (" + detail + ")";
}

std::string call_text(const FlightComm& c, const FlightCall& call) {
  std::string s = call.op;
  if (call.seq >= 0) s += " #" + std::to_string(call.seq);
  if (!call.link.empty()) return s + " on " + call.link;
  return s + " on " + c.label;
}

std::string where_text(const FlightRank& r) {
  const Where w = where_is(r);
  if (w.call == nullptr)
    return "outside MPI (computing" + (r.phase.empty() ? "" : "; last entered " + r.phase) + ") for " +
           seconds(w.since);
  return "in " + call_text(*w.comm, *w.call) + " for " + seconds(w.since);
}

// A call every member reached, in flight this long on each that has not completed it, is stalled.
constexpr double kStallS = 1.0;

// One communicator across its members' records.
struct CommState {
  std::string label;
  std::vector<int> members;
  std::map<int, std::int64_t> posted;  // per member with a record: the highest sequence number it posted (-1: none)
  std::map<int, const FlightCall*> waiting;   // members in a call on it now (collective), or waiting or
                                              // testing for a nonblocking one not done
  std::map<int, const FlightCall*> unwaited;  // members with a nonblocking call no wait or test looked at
};

// The sequence number a communicator is stuck at: the highest any member waits in (-1: none waits).
std::int64_t stuck_at(const CommState& s) {
  std::int64_t next = -1;
  for (const auto& [rank, call] : s.waiting) next = std::max(next, call->seq);
  return next;
}

// Its members that have not posted call `next` (none have a record: every member).
std::vector<int> behind(const CommState& s, std::int64_t next) {
  std::vector<int> out;
  for (int m : s.members) {
    const auto p = s.posted.find(m);
    if (p == s.posted.end() || p->second < next) out.push_back(m);
  }
  return out;
}

}  // namespace

void report_hang(const std::string& dir, const ReportOptions& options) {
  if (!fs::is_directory(dir)) throw InputError(dir + ": not a folder of flight records");
  std::vector<FlightRank> ranks;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".flight") ranks.push_back(read_flight(entry.path()));
  if (ranks.empty()) throw InputError(dir + ": no flight records (rankNNNNN.flight) in it");
  std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  int size = 0;
  for (const FlightRank& r : ranks) size = std::max(size, r.size);
  std::map<int, const FlightRank*> by_rank;
  for (const FlightRank& r : ranks) by_rank[r.rank] = &r;
  std::vector<int> missing;
  for (int k = 0; k < size; ++k)
    if (!by_rank.contains(k)) missing.push_back(k);
  // Each rank's host: its own record's, else the one every record lists (records written before
  // the list, or a rank that wrote none: "" when no record names it).
  const auto host_of = [&](int rank) -> std::string {
    if (const auto it = by_rank.find(rank); it != by_rank.end()) return it->second->host;
    for (const FlightRank& r : ranks)
      if (rank < static_cast<int>(r.hosts.size()) && r.hosts[static_cast<std::size_t>(rank)] != "-")
        return r.hosts[static_cast<std::size_t>(rank)];
    return "";
  };
  // "rank 3 (host2)", or "rank 3" where no record names its host.
  const auto rank_on = [&](int rank) {
    const std::string h = host_of(rank);
    return "rank " + std::to_string(rank) + (h.empty() ? "" : " (" + h + ")");
  };

  // Every communicator's members and how far each got.
  std::map<std::string, CommState> comms;
  for (const FlightRank& r : ranks)
    for (const FlightComm& c : r.comms) {
      CommState& s = comms[c.label];
      s.label = c.label;
      if (s.members.empty()) s.members = c.members;
      std::int64_t top = -1;
      for (const FlightCall& call : c.calls) {
        if (call.seq < 0) continue;
        top = std::max(top, call.seq);
        if (call.completed == 0 || (open_request(call) && call.checked != 0))
          s.waiting[r.rank] = &call;
        else if (open_request(call))
          s.unwaited[r.rank] = &call;
      }
      s.posted[r.rank] = top;
    }

  std::vector<std::string> verdicts, desyncs, stalled;
  for (auto& [label, s] : comms) {
    if (s.waiting.empty()) continue;
    const std::int64_t next = stuck_at(s);
    const FlightCall* any = s.waiting.begin()->second;
    std::vector<int> waiting;
    for (const auto& [rank, call] : s.waiting)
      if (call->seq == next) waiting.push_back(rank);
    // A stall: every member has a record and reached call #m, the lowest any member waits in,
    // and some have not completed it: neither a late rank nor a desync holds it, but what lies
    // between them (a cut or dead link, the MPI library). Those that completed it may wait in
    // the next one already.
    std::int64_t lowest = next;
    for (const auto& [rank, call] : s.waiting) lowest = std::min(lowest, call->seq);
    bool reached = true;
    for (int m : s.members) reached = reached && by_rank.contains(m) && s.posted.contains(m) && s.posted[m] >= lowest;
    std::vector<int> in_it, past_it;
    for (int m : s.members) {
      const auto w = s.waiting.find(m);
      (w != s.waiting.end() && w->second->seq == lowest ? in_it : past_it).push_back(m);
    }
    // Members that posted the call the others wait in as a nonblocking one and never waited on it
    // or tested it: the MPI library need not progress it on them until they do.
    std::vector<int> unwaited;
    for (const auto& [rank, call] : s.unwaited)
      if (call->seq == lowest && !s.waiting.contains(rank)) unwaited.push_back(rank);
    for (int u : unwaited) {
      const FlightCall& call = *s.unwaited.at(u);
      verdicts.push_back(rank_on(u) + " posted " + call.op + " #" + std::to_string(call.seq) + " on " + label +
                         " and never waited on it (no wait or test of its request); it has been " +
                         where_text(*by_rank.at(u)) + "; " + ranks_named(in_it) +
                         (in_it.size() > 1 ? " wait" : " waits") + " for it");
    }
    if (!unwaited.empty()) continue;
    bool same = true;  // at #lowest all members stuck in it call the same (else: a desync below)
    for (int m : in_it) same = same && kind_text(*s.waiting.at(m)) == kind_text(*s.waiting.at(in_it.front()));
    double least = 0, most = 0;
    for (std::size_t i = 0; i < in_it.size(); ++i) {
      const double since = by_rank.at(in_it[i])->written - s.waiting.at(in_it[i])->posted;
      least = i == 0 ? since : std::min(least, since), most = std::max(most, since);
    }
    // A second at least: a snapshot (SIGUSR1) of a running job catches calls in flight.
    if (reached && same && !in_it.empty() && least >= kStallS) {
      const FlightCall& call = *s.waiting.at(in_it.front());
      const std::string at = call.op + " #" + std::to_string(lowest),
                        who = ranks_named(in_it) + hosts_named(in_it, host_of),
                        how_long = seconds(least) + (most - least >= 0.05 ? " to " + seconds(most) : "");
      stalled.push_back(
          (past_it.empty() ? "every member of " + label + ", " + who + ", has been in " + at + " for " + how_long
                           : at + " on " + label + " has not completed on " + who + ", in it for " + how_long +
                                 ", where " + ranks_named(past_it) + " completed it") +
          ": a call all members reached does not complete (the network between them, or the MPI library)");
      continue;  // its members behind the next call are in this one
    }
    // A desync: members at the same number with another call.
    std::map<std::string, std::vector<int>> kinds;
    for (const auto& [rank, call] : s.waiting)
      if (call->seq == next) kinds[kind_text(*call)].push_back(rank);
    if (kinds.size() > 1) {
      std::string d = "desync at #" + std::to_string(next) + " on " + label + ":";
      for (const auto& [kind, who] : kinds) d += " " + ranks_named(who) + " " + kind + ";";
      d.pop_back();
      desyncs.push_back(d);
    }
    for (int b : behind(s, next)) {
      const auto it = by_rank.find(b);
      std::string v = rank_on(b) + " never called " + any->op + " #" + std::to_string(next) + " on " + label + "; ";
      v += it != by_rank.end() ? "it has been " + where_text(*it->second)
                               : "it wrote no flight record (dead, stopped or unreachable)";
      v += "; " + ranks_named(waiting) + (waiting.size() > 1 ? " wait" : " waits") + " in " + any->op + " #" +
           std::to_string(next);
      verdicts.push_back(v);
    }
  }
  // Messages: ranks each waiting to receive from a rank that waits to receive from it.
  std::vector<std::string> cycles;
  for (const FlightRank& r : ranks) {
    const Where w = where_is(r);
    if (w.call == nullptr || w.call->op != "recv" || w.call->link.empty()) continue;
    // link "mpi[A>B]": from A to B
    const std::size_t open = w.call->link.find('['), gt = w.call->link.find('>');
    if (open == std::string::npos || gt == std::string::npos) continue;
    int from = -1;
    try {
      from = std::stoi(w.call->link.substr(open + 1, gt - open - 1));
    } catch (const std::exception&) {
      continue;
    }
    const auto peer = by_rank.find(from);
    if (peer == by_rank.end() || from <= r.rank) continue;
    const Where pw = where_is(*peer->second);
    if (pw.call != nullptr && pw.call->op == "recv" &&
        pw.call->link.find("[" + std::to_string(r.rank) + ">") != std::string::npos)
      cycles.push_back("ranks " + std::to_string(r.rank) + " and " + std::to_string(from) +
                       " each wait to receive from the other (" + w.call->link + ", " + pw.call->link +
                       "), a deadlock");
  }

  // A rank that failed with an MPI error comes first: the others were stopped because of it.
  std::vector<std::string> failures;
  for (const FlightRank& r : ranks) {
    if (r.error.empty()) continue;
    const Where w = where_is(r);
    failures.push_back(rank_on(r.rank) + " failed" + (w.call != nullptr ? " in " + call_text(*w.comm, *w.call) : "") +
                       ": " + r.error);
  }
  verdicts.insert(verdicts.begin(), failures.begin(), failures.end());

  ReportWriter out(options, "Hang: " + dir);
  std::string verdict;
  if (!verdicts.empty())
    verdict = verdicts.front();
  else if (!desyncs.empty())
    verdict = desyncs.front();
  else if (!stalled.empty())
    verdict = stalled.front();
  else if (!cycles.empty())
    verdict = cycles.front();
  else if (!missing.empty())
    verdict = ranks_named(missing) + hosts_named(missing, host_of) +
              " wrote no flight record (dead, stopped or unreachable); the others are behind no collective";
  else
    verdict = "no rank is behind a collective, no call differs and no two ranks wait on each other's messages";
  out.text("Verdict: " + verdict + ".");
  for (std::size_t i = 1; i < verdicts.size(); ++i) out.text("Also: " + verdicts[i] + ".");
  for (std::size_t i = verdicts.empty() ? 1 : 0; i < desyncs.size(); ++i) out.text("Also: " + desyncs[i] + ".");
  if (!missing.empty() && !verdicts.empty())
    out.text("No flight record from " + ranks_named(missing) + hosts_named(missing, host_of) + ".");

  out.section("Ranks");
  Table t({"rank", "host", "pid", "written_by", "where", "since_s"});
  for (const FlightRank& r : ranks) {
    const Where w = where_is(r);
    char since[32];
    std::snprintf(since, sizeof since, "%.2f", w.since);
    t.add({std::to_string(r.rank), r.host, std::to_string(r.pid), r.reason,
           w.call != nullptr ? call_text(*w.comm, *w.call) : "outside MPI", since});
  }
  for (int m : missing) {
    const std::string h = host_of(m);
    t.add({std::to_string(m), h.empty() ? "-" : h, "-", "no record", "-", "-"});
  }
  out.table("ranks", t);

  out.section("Communicators");
  Table c({"communicator", "members", "completed_by_all", "waiting", "behind"});
  for (const auto& [label, s] : comms) {
    std::int64_t all = -1;
    bool first = true;
    for (int m : s.members) {
      const auto p = s.posted.find(m);
      std::int64_t done = p == s.posted.end() ? -1 : p->second;
      if (s.waiting.contains(m)) done = s.waiting.at(m)->seq - 1;
      all = first ? done : std::min(all, done);
      first = false;
    }
    std::vector<int> waiting;
    for (const auto& [rank, call] : s.waiting) waiting.push_back(rank);
    c.add({label, rank_list(s.members), all >= 0 ? "#" + std::to_string(all) : "-", rank_list(waiting),
           waiting.empty() ? "" : rank_list(behind(s, stuck_at(s)))});
  }
  out.table("communicators", c);
  out.finish();
}

}  // namespace commscope::analysis
