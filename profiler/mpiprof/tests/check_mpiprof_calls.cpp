// Checks the profile libcommscope-mpiprof.so wrote for tests/mpi_calls.c against the events that
// program expected, PREFIX.rankN.txt ("MPI_Function comm bytes numbered" a line, in call order):
// per rank, its communication events in time order must be exactly those, each under its MPI
// function's operator, with those bytes, and numbered (seq >= 0) or not.
//   test_mpiprof_calls_check PROFILE PREFIX
#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "commscope/formats/profile_file.hpp"

namespace pf = commscope::profiler;

namespace {

struct Call {
  std::string function, comm;
  long long bytes = 0;
  int numbered = 0;

  std::string text() const {
    return function + " " + comm + " " + std::to_string(bytes) + " " + (numbered ? "numbered" : "unnumbered");
  }
  bool operator==(const Call&) const = default;
};

std::vector<Call> expected_calls(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the expected events");
  std::vector<Call> calls;
  Call c;
  while (in >> c.function >> c.comm >> c.bytes >> c.numbered) calls.push_back(c);
  if (!in.eof()) throw std::runtime_error(path + ": line " + std::to_string(calls.size() + 1) + " is not 'F C B N'");
  return calls;
}

// A rank's communication events in time order, with their operators' names.
std::vector<Call> recorded_calls(const pf::Profile& p, std::size_t rank) {
  std::vector<pf::Event> comms;
  std::map<std::uint64_t, std::string> operators;
  for (const pf::Event& e : p.events.at(rank)) {
    if (e.kind == pf::EventKind::kOperator) operators[e.id] = p.strings.at(e.name);
    if (e.kind == pf::EventKind::kCommunication) comms.push_back(e);
  }
  std::stable_sort(comms.begin(), comms.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  std::vector<Call> calls;
  for (const pf::Event& e : comms)
    calls.push_back({operators.count(e.parent) ? operators[e.parent] : "(no operator)", p.strings.at(e.name), e.bytes,
                     e.seq >= 0 ? 1 : 0});
  return calls;
}

// Prints each difference (the first 20) and returns how many calls differ.
int compare(std::size_t rank, const std::vector<Call>& want, const std::vector<Call>& got) {
  int bad = 0;
  for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    const Call none{"(none)", "", 0, 0};
    const Call& w = i < want.size() ? want[i] : none;
    const Call& g = i < got.size() ? got[i] : none;
    if (w == g) continue;
    if (++bad <= 20)
      std::printf("FAIL: rank %zu, call %zu: wanted %s, recorded %s\n", rank, i + 1, w.text().c_str(),
                  g.text().c_str());
  }
  std::printf("%s: rank %zu: %zu calls expected, %zu recorded, %d differ\n", bad ? "FAIL" : "ok", rank, want.size(),
              got.size(), bad);
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: test_mpiprof_calls_check PROFILE PREFIX\n");
    return 2;
  }
  try {
    const pf::Profile p = pf::read_profile(argv[1], true);
    int bad = 0;
    for (std::size_t r = 0; r < p.ranks.size(); ++r)
      bad += compare(r, expected_calls(std::string(argv[2]) + ".rank" + std::to_string(r) + ".txt"),
                     r < p.events.size() ? recorded_calls(p, r) : std::vector<Call>{});
    std::printf("test_mpiprof_calls_check: %zu ranks: %s\n", p.ranks.size(), bad ? "FAILED" : "all calls as expected");
    return bad ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_mpiprof_calls_check: %s\n", e.what());
    return 2;
  }
}
