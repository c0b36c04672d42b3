#include "cases.hpp"

#include <algorithm>

#include "backends/backend.hpp"
#include "commscope/collectives/error.hpp"
#include "from_profile.hpp"

namespace commscope::bench {

std::string_view Case::op_name() const {
  return is_reducing(coll) ? to_string(op) : std::string_view("none");
}

std::string describe(const Case& c) {
  std::string s = std::string(to_string(c.coll)) + " algo=" + c.algo + " type=" + std::string(to_string(c.type));
  if (is_reducing(c.coll)) s += " op=" + std::string(to_string(c.op));
  if (is_rooted(c.coll)) s += " root=" + std::to_string(c.root);
  s += " size=" + std::to_string(c.bytes) + " B " + (c.in_place ? "in-place" : "out-of-place");
  return s;
}

std::size_t count_for_bytes(Collective c, std::size_t bytes, DataType t, int nranks) {
  // Elements of the measured array per unit of per-call count (1, or n for the collectives
  // whose array is n blocks of `count`).
  const std::size_t per_count = collective_bytes(c, 1, t, nranks) / type_size(t);
  return bytes / type_size(t) / per_count;
}

namespace {

// --from-profile: whether the profile holds a call of `c`'s collective, algorithm and size on a
// communicator of `group` ranks.
bool in_profile(const Options& o, Collective coll, const std::string& algo, std::size_t bytes, int group) {
  return std::any_of(o.profile_calls.begin(), o.profile_calls.end(), [&](const ProfileCall& p) {
    return p.coll == coll && p.algo == algo && p.bytes == bytes && p.group_size == group;
  });
}

// The communicator sizes a run's cases take: the run's; with --from-profile, each size of the
// profile's communicators the run can rebuild (group_colors), the run's own first; on a device
// without groups (`groups` false), the run's alone.
std::vector<int> group_sizes(const Options& o, int nranks, bool groups) {
  if (o.profile_calls.empty() || !groups) return {nranks};
  std::vector<int> sizes{nranks};
  for (const ProfileCall& p : o.profile_calls)
    if (p.group_size < nranks && std::find(sizes.begin(), sizes.end(), p.group_size) == sizes.end() &&
        group_colors(o.profile_calls, p.group_size, nranks))
      sizes.push_back(p.group_size);
  return sizes;
}

// --from-profile without --algo: the device's algorithms the profile's calls name.
std::vector<std::string> profile_algorithms(const Options& o, const Backend& backend) {
  std::vector<std::string> algos;
  for (const std::string& a : backend.algorithms())
    if (std::any_of(o.profile_calls.begin(), o.profile_calls.end(), [&](const ProfileCall& p) { return p.algo == a; }))
      algos.push_back(a);
  return algos;
}

}  // namespace

std::vector<Case> make_cases(const Options& o, int nranks, const Backend& backend, bool groups) {
  const bool from_profile = !o.profile_calls.empty();
  std::vector<std::string> algos = !o.algos.empty() ? o.algos
                                   : from_profile   ? profile_algorithms(o, backend)
                                                    : backend.algorithms();
  const std::vector<std::string> have = backend.algorithms();
  for (const std::string& a : algos) {
    if (std::find(have.begin(), have.end(), a) == have.end()) {
      std::string list;
      for (const std::string& h : have) list += (list.empty() ? "" : ", ") + h;
      throw InvalidArgument("unknown algorithm '" + a + "' for --device " + backend.device() + " (have: " + list + ")");
    }
    const std::string why = backend.unavailable(a);
    if (!why.empty() && !o.algos.empty()) throw UnsupportedCollective("algorithm '" + a + "' " + why);
    // A named algorithm must have one of the collectives; `all` takes those that do.
    bool any = false;
    for (Collective c : o.collectives) any |= backend.supports(a, c);
    if (!any && !o.algos.empty()) {
      std::string colls;
      for (Collective c : o.collectives) colls += (colls.empty() ? "" : ", ") + std::string(to_string(c));
      throw UnsupportedCollective("algorithm '" + a + "' has none of the requested collectives (" + colls + ")");
    }
  }
  const bool any_rooted = std::any_of(o.collectives.begin(), o.collectives.end(), is_rooted);
  if (any_rooted && o.root >= nranks)
    throw InvalidArgument("-r/--root " + std::to_string(o.root) + " is not a rank of " + std::to_string(nranks));

  const std::vector<std::size_t> sizes = size_list(o);
  std::vector<Case> cases;
  int row = 0;
  for (Collective coll : o.collectives) {
    for (const int group : group_sizes(o, nranks, groups)) {  // --from-profile's groups: a section each
      for (DataType type : o.types) {
        // Non-reducing collectives run once per type, not once per op.
        const std::vector<ReduceOp> ops = is_reducing(coll) ? o.ops : std::vector<ReduceOp>{ReduceOp::sum};
        for (ReduceOp op : ops) {
          for (std::size_t req : sizes) {
            for (const std::string& algo : algos) {
              if (!backend.supports(algo, coll)) continue;
              if (from_profile && !in_profile(o, coll, algo, req, group)) continue;
              for (bool in_place : {false, true}) {
                if (in_place && !has_in_place(coll)) continue;  // alltoallv: out of place only
                if (in_place && from_profile) continue;         // what the report sets a call against
                Case c;
                c.id = static_cast<int>(cases.size());
                c.row = row;
                c.coll = coll;
                c.algo = algo;
                c.type = type;
                c.op = op;
                c.root = is_rooted(coll) ? o.root : 0;
                c.in_place = in_place;
                c.requested_bytes = req;
                c.count = count_for_bytes(coll, req, type, group);
                c.bytes = collective_bytes(coll, c.count, type, group);
                c.nranks = group;
                c.name = std::string(to_string(coll)) + "/" + algo + "/" + std::string(to_string(type)) + "/" +
                         std::string(c.op_name()) + "/root:" + std::to_string(c.root_shown()) +
                         "/bytes:" + std::to_string(c.bytes) + "/inplace:" + (in_place ? "1" : "0") +
                         (group != nranks ? "/group:" + std::to_string(group) : "");
                cases.push_back(std::move(c));
              }
              ++row;
            }
          }
        }
      }
    }
  }
  if (from_profile && cases.empty())
    throw InvalidArgument("--from-profile " + o.from_profile + ": none of its collective calls runs on " +
                          std::to_string(nranks) + (nranks == 1 ? " rank" : " ranks") + " with " + backend.device() +
                          "'s algorithms (it calls " + describe_profile_calls(o.profile_calls) +
                          "): run with as many ranks as one of its communicators has, or a multiple of it");
  return cases;
}

}  // namespace commscope::bench
