// Node-aware hierarchical collectives: shared memory (`shm`) among the ranks of a node, and a
// network algorithm among the nodes, run on two sub-transports (detail::HierGroups): the node's
// ranks, and the ranks with the same local index on every node ("cross" group j). Each phase is
// an existing algorithm's run() on one of them. s ranks per node, N nodes:
//   allreduce:     shm reducescatter, cross allreduce of the own 1/s block in every group, shm
//                  allgather (below kSmallBytes: shm allreduce, then cross allreduce of all of it)
//   allgather:     cross allgather in every group, shm allgather of the N blocks, reorder
//   reducescatter: reorder, shm reducescatter of N blocks, cross reducescatter in every group
//   broadcast:     cross broadcast in the root's group, shm broadcast from its local index
//   reduce:        shm reduce to the root's local index, cross reduce in its group
// Cross calls take rhd (allreduce, allgather, reducescatter) or tree (broadcast, reduce) below
// kHierCrossRingBytes (collective_model.hpp) and ring from it. Nodes of different sizes (the cross groups then miss
// some nodes) go through local index 0: shm reduce / gather to it, the leaders' cross call (blocks padded to the
// largest node), shm broadcast / scatter. A root beyond the smallest node hands its data to (or gets it from) local
// index 0 of its node. avg runs as sum, divided by p once. One node: shm on the whole call; one rank per node: the
// cross algorithm on the whole call. Costs: hier_cost below (two levels), docs/collectives.md.
#include <algorithm>
#include <cstring>
#include <memory>

#include "../hier_groups.hpp"
#include "common.hpp"
#include "commscope/collectives/hier_options.hpp"
#include "commscope/collectives/mpi_transport.hpp"

namespace commscope {

const Algorithm& ring_algorithm();
const Algorithm& tree_algorithm();
const Algorithm& rhd_algorithm();
const Algorithm& shm_algorithm();
ShmCostSettings shm_cost_settings(const AlgoOptions& o, int node_ranks);  // shm.cpp

namespace {

using detail::Buf;
using detail::HierGroups;

// Even nodes' allreduce below this many bytes: shm allreduce of the whole array, then every
// cross group allreduces all of it (s times the bytes on a node's link, one phase fewer). The
// cost model's threshold (collective_model.hpp), so that hier_cost prices the path run.
constexpr auto kSmallBytes = static_cast<std::size_t>(kHierSmallBytes);

// The cross calls' algorithm by the sub-call's bytes: collective_model.hpp's hier_cross_algorithm.
const Algorithm& cross_algorithm(Collective c, double bytes) {
  const std::string_view a = hier_cross_algorithm(c, bytes);
  return a == "ring" ? ring_algorithm() : a == "tree" ? tree_algorithm() : rhd_algorithm();
}

class Hier {
 public:
  Hier(MpiTransport& t, HierGroups& g, const CollArgs& a, const AlgoOptions& o)
      : t_(t),
        g_(g),
        a_(a),
        o_(o),
        es_(type_size(a.type)),
        k_(g.node_index()),
        j_(g.local_index()),
        n_(g.nodes()),
        s_(g.node().size()) {}

  void allreduce() {
    if (!g_.even()) return leaders_allreduce(0, a_.count);
    const std::size_t c = a_.count / static_cast<std::size_t>(s_), body = c * static_cast<std::size_t>(s_);
    if (a_.count * es_ < kSmallBytes || c == 0) return every_group_allreduce(0, a_.count);
    // Block j of the first s*c elements: in place it is the reducescatter's in-place layout.
    void* mine = out().at(static_cast<std::size_t>(j_) * c);
    intra({Collective::reducescatter, a_.send, mine, c, a_.type, op(), 0});
    cross({Collective::allreduce, mine, mine, c, a_.type, op(), 0});
    average(mine, c);
    intra({Collective::allgather, mine, a_.recv, c, a_.type, ReduceOp::sum, 0});
    // The last count mod s elements: fewer than s, small.
    if (body < a_.count) every_group_allreduce(body, a_.count - body);
  }

  void allgather() {
    const std::size_t c = a_.count, nc = static_cast<std::size_t>(n_) * c;
    if (g_.even()) {
      // y[j'][k] = the block of local index j' on node k.
      const Buf y = scratch(0, static_cast<std::size_t>(s_) * nc);
      cross({Collective::allgather, a_.send, y.at(static_cast<std::size_t>(j_) * nc), c, a_.type, ReduceOp::sum, 0});
      intra({Collective::allgather, y.at(static_cast<std::size_t>(j_) * nc), y.base, nc, a_.type, ReduceOp::sum, 0});
      for (int k = 0; k < n_; ++k)
        for (int j = 0; j < s_; ++j)
          place(g_.rank_of(k, j),
                y.at((static_cast<std::size_t>(j) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(k)) * c));
      return;
    }
    // y[k][t] = the block of local index t on node k, t < the largest node size m (padded).
    const std::size_t m = static_cast<std::size_t>(g_.max_node_size()), mc = m * c;
    const Buf y = scratch(0, static_cast<std::size_t>(n_) * mc);
    void* node_blocks = y.at(static_cast<std::size_t>(k_) * mc);
    intra({Collective::gather, a_.send, node_blocks, c, a_.type, ReduceOp::sum, 0});
    if (j_ == 0) {
      zero(y.at(static_cast<std::size_t>(k_) * mc + static_cast<std::size_t>(s_) * c),
           (m - static_cast<std::size_t>(s_)) * c);
      cross({Collective::allgather, node_blocks, y.base, mc, a_.type, ReduceOp::sum, 0});
    }
    intra({Collective::broadcast, y.base, y.base, static_cast<std::size_t>(n_) * mc, a_.type, ReduceOp::sum, 0});
    for (int k = 0; k < n_; ++k)
      for (int j = 0; j < g_.node_size(k); ++j)
        place(g_.rank_of(k, j), y.at(static_cast<std::size_t>(k) * mc + static_cast<std::size_t>(j) * c));
  }

  void reducescatter() {
    const std::size_t c = a_.count;
    const Buf in = detail::cbuf(a_.send, es_);
    if (g_.even()) {
      // x[j'][k] = the input block of local index j' on node k; after the shm reducescatter,
      // this rank holds the node's sums of its column: the blocks of its cross group's ranks.
      const std::size_t nc = static_cast<std::size_t>(n_) * c;
      const Buf x = scratch(0, static_cast<std::size_t>(s_) * nc), y = scratch(1, nc);
      for (int k = 0; k < n_; ++k)
        for (int j = 0; j < s_; ++j)
          t_.copy(x.at((static_cast<std::size_t>(j) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(k)) * c),
                  in.at(static_cast<std::size_t>(g_.rank_of(k, j)) * c), x.bytes(c));
      intra({Collective::reducescatter, x.base, y.base, nc, a_.type, op(), 0});
      cross({Collective::reducescatter, y.base, a_.recv, c, a_.type, op(), 0});
      return average(a_.recv, c);
    }
    const std::size_t m = static_cast<std::size_t>(g_.max_node_size()), mc = m * c;
    const Buf x = scratch(0, static_cast<std::size_t>(n_) * mc), y = scratch(1, static_cast<std::size_t>(n_) * mc),
              z = scratch(2, mc);
    for (int k = 0; k < n_; ++k) {
      const auto uk = static_cast<std::size_t>(k), sk = static_cast<std::size_t>(g_.node_size(k));
      for (std::size_t j = 0; j < sk; ++j)
        t_.copy(x.at(uk * mc + j * c), in.at(static_cast<std::size_t>(g_.rank_of(k, static_cast<int>(j))) * c),
                x.bytes(c));
      zero(x.at(uk * mc + sk * c), (m - sk) * c);
    }
    intra({Collective::reduce, x.base, y.base, static_cast<std::size_t>(n_) * mc, a_.type, op(), 0});
    if (j_ == 0) cross({Collective::reducescatter, y.base, z.base, mc, a_.type, op(), 0});
    intra({Collective::scatter, z.base, a_.recv, c, a_.type, ReduceOp::sum, 0});
    average(a_.recv, c);
  }

  void broadcast() {
    const int k0 = g_.node_of(a_.root), j0 = g_.local_of(a_.root), js = via(j0);
    const std::size_t bytes = a_.count * es_;
    if (js != j0 && k_ == k0) {  // the root's data to local index js of its node
      g_.node().set_context(t_.context());
      if (j_ == j0) g_.node().send(a_.send, bytes, js);
      if (j_ == js) g_.node().recv(a_.recv, bytes, j0);
    }
    const void* src = k_ == k0 && j_ == j0 ? a_.send : a_.recv;
    if (j_ == js) cross({Collective::broadcast, src, a_.recv, a_.count, a_.type, ReduceOp::sum, k0});
    intra({Collective::broadcast, j_ == js ? src : nullptr, a_.recv, a_.count, a_.type, ReduceOp::sum, js});
  }

  void reduce() {
    const int k0 = g_.node_of(a_.root), j0 = g_.local_of(a_.root), js = via(j0);
    const bool root = t_.rank() == a_.root;
    const Buf x = scratch(0, a_.count);
    intra({Collective::reduce, a_.send, x.base, a_.count, a_.type, op(), js});
    void* dst = root ? a_.recv : x.base;
    if (j_ == js) cross({Collective::reduce, x.base, dst, a_.count, a_.type, op(), k0});
    if (js != j0 && k_ == k0) {  // local index js of the root's node hands the result on
      g_.node().set_context(t_.context());
      if (j_ == js) g_.node().send(x.base, a_.count * es_, j0);
      if (root) g_.node().recv(a_.recv, a_.count * es_, js);
    }
    if (root) average(a_.recv, a_.count);
  }

 private:
  ReduceOp op() const { return a_.op == ReduceOp::avg ? ReduceOp::sum : a_.op; }
  Buf out() const { return {a_.recv, es_}; }
  Buf scratch(int slot, std::size_t elems) const { return {t_.scratch(slot, elems * es_), es_}; }
  void zero(void* p, std::size_t elems) const {
    if (elems > 0) std::memset(p, 0, elems * es_);  // host memory: hier runs on the MPI transport only
  }
  void average(void* buf, std::size_t elems) const {
    if (a_.op == ReduceOp::avg && elems > 0) t_.divide(buf, elems, a_.type, t_.size());
  }
  // Rank r's block of an allgather from where the node layout put it.
  void place(int r, const void* block) const {
    t_.copy(out().at(static_cast<std::size_t>(r) * a_.count), block, a_.count * es_);
  }
  // The cross group a rooted call goes through: the root's own where every node has that local
  // index, else 0 (the leaders).
  int via(int j0) const { return j0 < g_.min_node_size() ? j0 : 0; }

  // Runs one phase on a sub-transport (count 0: nothing, as Communicator::run does). Its errors
  // name the user's call (the sub-transport's rank numbers, though).
  void phase(const Algorithm& algo, MpiTransport& on, const CollArgs& args) const {
    if (args.count == 0) return;
    on.set_context(t_.context());
    algo.run(on, args, o_);
  }
  void intra(const CollArgs& args) const { phase(shm_algorithm(), g_.node(), args); }
  void cross(const CollArgs& args) const {
    const double bytes = static_cast<double>(collective_bytes(args.coll, args.count, args.type, g_.cross().size()));
    phase(cross_algorithm(args.coll, bytes), g_.cross(), args);
  }

  // shm allreduce on the node, then each cross group (all hold every node) allreduces it all.
  void every_group_allreduce(std::size_t off, std::size_t len) {
    const Buf in = detail::cbuf(a_.send, es_);
    intra({Collective::allreduce, in.at(off), out().at(off), len, a_.type, op(), 0});
    cross({Collective::allreduce, out().at(off), out().at(off), len, a_.type, op(), 0});
    average(out().at(off), len);
  }
  // shm reduce to local index 0, the leaders' allreduce, shm broadcast.
  void leaders_allreduce(std::size_t off, std::size_t len) {
    const Buf in = detail::cbuf(a_.send, es_);
    void* o = out().at(off);
    intra({Collective::reduce, in.at(off), o, len, a_.type, op(), 0});
    if (j_ == 0) {
      cross({Collective::allreduce, o, o, len, a_.type, op(), 0});
      average(o, len);
    }
    intra({Collective::broadcast, o, o, len, a_.type, ReduceOp::sum, 0});
  }

  MpiTransport& t_;
  HierGroups& g_;
  const CollArgs& a_;
  const AlgoOptions& o_;
  const std::size_t es_;
  const int k_, j_, n_, s_;  // node index, local index, nodes, ranks on this node
};

class HierAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "hier"; }
  std::string_view description() const override {
    return "node-aware: shm within nodes, rhd/ring (tree/ring rooted) among them; leaders where node sizes differ";
  }
  bool supports(Collective c) const override {
    return c == Collective::allreduce || c == Collective::allgather || c == Collective::reducescatter ||
           c == Collective::broadcast || c == Collective::reduce;
  }
  void run(Transport& t, const CollArgs& a, const AlgoOptions& o) const override {
    if (!supports(a.coll)) detail::unsupported(name(), a.coll);
    MpiTransport* mt = t.as_mpi();
    if (!mt) throw UnsupportedCollective("algorithm 'hier' needs the MPI transport (host buffers over MPI)");
    // Made on the first call (collective over the communicator), which also fixes the layout.
    HierGroups& g = t.algorithm_state<HierGroups>(
        name(), [&] { return std::make_unique<HierGroups>(*mt, o.get<HierOptions>().test_nodes); });
    // One node: node ranks are the communicator's. One rank per node: cross group 0 is every
    // rank, ordered by node, i.e. by rank.
    if (g.nodes() == 1) {
      g.node().set_context(t.context());
      return shm_algorithm().run(g.node(), a, o);
    }
    if (g.max_node_size() == 1) {
      g.cross().set_context(t.context());
      const double bytes = static_cast<double>(collective_bytes(a.coll, a.count, a.type, t.size()));
      return cross_algorithm(a.coll, bytes).run(g.cross(), a, o);
    }
    Hier h(*mt, g, a, o);
    switch (a.coll) {
      case Collective::allreduce:
        return h.allreduce();
      case Collective::allgather:
        return h.allgather();
      case Collective::reducescatter:
        return h.reducescatter();
      case Collective::broadcast:
        return h.broadcast();
      case Collective::reduce:
        return h.reduce();
      default:
        detail::unsupported(name(), a.coll);
    }
  }
  std::optional<Cost> cost(Collective c, int p, double n, const AlgoOptions& o) const override {
    if (!supports(c)) return std::nullopt;
    return hier_cost(c, p, 1, n, o).inter;
  }
};

}  // namespace

// The terms' derivation: hier_cost_terms (collective_model.hpp), which the report's expected
// values use too.
HierCost hier_cost(Collective c, int nodes, int per_node, double n, const AlgoOptions& o) {
  const HierCostSettings settings{shm_cost_settings(o, std::max(1, per_node)), static_cast<double>(o.segment_bytes)};
  const HierCostTerms t = hier_cost_terms(c, nodes, per_node, n, settings);
  return {Cost{t.intra.alpha_count, t.intra.beta_factor, t.intra.gamma_factor},
          Cost{t.inter.alpha_count, t.inter.beta_factor, t.inter.gamma_factor}};
}

const Algorithm& hier_algorithm() {
  static const HierAlgorithm instance;
  return instance;
}

}  // namespace commscope
