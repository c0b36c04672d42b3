#include "commscope/collectives/check_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/half.hpp"

namespace commscope::check {
namespace {

// Cheap per-element hash of (seed, stream, index): one multiply-xorshift round. Checking a
// 16 MiB array hashes millions of elements per rank, so this is kept to a few cycles.
std::uint64_t hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t g) {
  std::uint64_t x = (g + 1) * 0x9e3779b97f4a7c15ull ^ (seed + stream * 0xd1b54a32d192ed03ull);
  x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 32);
}
// Uniform in [0, n) from the hash's high bits, without a division.
std::uint64_t below(std::uint64_t h, std::uint64_t n) {
  return ((h >> 32) * n) >> 32;
}

// Largest integer magnitude every partial sum may reach and stay exact.
double exact_limit(DataType t) {
  switch (t) {
    case DataType::f16:
      return 2048;
    case DataType::bf16:
      return 256;
    case DataType::f32:
      return 16777216.0;
    case DataType::f64:
      return 9007199254740992.0;
    case DataType::i32:
      return 2147483647.0;
    case DataType::i64:
      return 9.2e18;
    // Not 'modulo 256': Open MPI 4.1's AVX reduction saturates 8-bit sums (ompi #8045), so
    // no 8-bit result may overflow.
    case DataType::u8:
      return 255;
    case DataType::i8:
      return 127;
    case DataType::u32:
      return 4294967295.0;
    case DataType::u64:
      return 1.8e19;
  }
  return 0;
}
// Largest power-of-two exponent a product may reach.
int max_exponent(DataType t) {
  switch (t) {
    case DataType::f16:
      return 15;
    case DataType::i32:
      return 30;
    case DataType::i64:
      return 62;
    case DataType::u8:
    case DataType::i8:
      return 7;
    case DataType::u32:
      return 31;
    default:
      return 62;  // the reference product is computed in 64-bit integers
  }
}

// Ranks with their own contribution to one element, at most: each element's window of ranks
// takes its values from 4-bit fields of one hash, so the reference costs one hash per element
// whatever the rank count.
constexpr int kMaxWindow = 8;

// The value generator of one Spec. Reductions: element g of rank q is
//   sum, avg, min, max: base(g) + d_j(g) when q is the j-th rank of g's window, base(g) otherwise
//   prod:               sign(g) * f_j(g) in the window, sign(g) otherwise
// The window of g is the `window` ranks from start(g) = (g mod T) * window + g / T + seed
// (mod n), T = ceil(n / window): each run of T elements from a multiple of T tiles the ranks,
// so every rank has a value of its own (d_j >= 1, f_j != 1) there, and each run is shifted by
// one rank from the one before. base(g) is shared by all ranks, so a missing
// rank also shows wherever base(g) != 0, while the window makes it show even where the type
// leaves base no room (bf16, u8 and i8 at hundreds of ranks) and tells a duplicated rank from
// the one it replaced. Every partial result of any subset of ranks is bounded by
// n * base_max + window * delta_max (sums) or 2^window, 3^window (products), below the type's
// exact limit, at any rank count.
struct Gen {
  Spec s;
  bool reducing;
  std::uint64_t n = 1;
  int window = 1;
  long long base_max = 0, delta_max = 1;
  bool signs = false;  // prod: a per-element sign shared by all ranks (signed types)

  explicit Gen(const Spec& spec) : s(spec), reducing(is_reducing(spec.coll)) {
    n = static_cast<std::uint64_t>(std::max(1, s.nranks));
    const double limit = exact_limit(s.type);
    window = static_cast<int>(std::min<std::uint64_t>(n, kMaxWindow));
    if (s.op == ReduceOp::prod) {
      // Signed factors are -1 or 2, unsigned 2 or 3: the worst product of a window is 2^w or 3^w.
      const double room = is_unsigned() ? limit : std::ldexp(1.0, max_exponent(s.type) - 1);
      while (window > 1 && std::pow(is_unsigned() ? 3.0 : 2.0, window) > room) --window;
      signs = !is_unsigned();
      return;
    }
    delta_max = std::clamp(static_cast<long long>(limit / (2.0 * window)), 1LL, 16LL);
    base_max = static_cast<long long>(
        std::min(std::floor((limit - static_cast<double>(window * delta_max)) / static_cast<double>(n)), 1000.0));
  }
  bool is_unsigned() const { return s.type == DataType::u8 || s.type == DataType::u32 || s.type == DataType::u64; }
  // One hash per element serves all: its high 32 bits give base(g) (and prod's sign, bit 63),
  // its low 32 bits the window's own values, 4 bits per position.
  std::uint64_t element_hash(std::size_t g) const { return hash(s.seed, 0, g); }
  long long base(std::uint64_t h) const {
    if (is_unsigned()) return static_cast<long long>(below(h, static_cast<std::uint64_t>(base_max + 1)));
    return static_cast<long long>(below(h, static_cast<std::uint64_t>(2 * base_max + 1))) - base_max;
  }
  long long sign(std::uint64_t h) const { return signs && (h >> 63) ? -1 : 1; }
  // Windows per pass over the ranks; each pass shifts them by one rank, so that neighbours
  // that share a window in one pass are split in another.
  std::uint64_t tiles() const {
    return (n + static_cast<std::uint64_t>(window) - 1) / static_cast<std::uint64_t>(window);
  }
  // The window's own value at position j: d_j in 1..delta_max, or (prod) f_j.
  long long own_delta(std::uint64_t h, int j) const {
    return 1 + static_cast<long long>((((h >> (4 * j)) & 0xf) * static_cast<std::uint64_t>(delta_max)) >> 4);
  }
  long long own_factor(std::uint64_t h, int j) const { return ((h >> (4 * j)) & 1) ? (is_unsigned() ? 3 : -1) : 2; }
  // Element g of a rank at position j of g's window (-1: outside it), for reductions.
  long long reduced_input(int j, std::size_t g) const {
    const std::uint64_t h = element_hash(g);
    if (s.op == ReduceOp::prod) return sign(h) * (j < 0 ? 1 : own_factor(h, j));
    return base(h) + (j < 0 ? 0 : own_delta(h, j));
  }
  // Input element g of rank q for the collectives that move data without reducing it (the
  // reductions' inputs are fill_send's, which walks the windows).
  long long input(int q, std::size_t g) const {
    return static_cast<long long>(below(hash(s.seed, static_cast<std::uint64_t>(q) + 2, g), 200));
  }
};

// Reduced value over all ranks of element g, exact (integer) before avg's division.
struct Reference {
  const Gen& gen;
  explicit Reference(const Gen& g) : gen(g) {}
  // Exact integer result (modular for prod), before avg's division.
  long long combined(std::size_t g) const {
    const auto n = static_cast<long long>(gen.n);
    const std::uint64_t f = gen.element_hash(g);
    const int w = gen.window;
    switch (gen.s.op) {
      case ReduceOp::sum:
      case ReduceOp::avg: {
        long long sum = 0;
        for (int j = 0; j < w; ++j) sum += gen.own_delta(f, j);
        return n * gen.base(f) + sum;
      }
      case ReduceOp::min: {
        long long lo = w < n ? 0 : gen.own_delta(f, 0);  // ranks outside the window add base alone
        for (int j = 0; j < w; ++j) lo = std::min(lo, gen.own_delta(f, j));
        return gen.base(f) + lo;
      }
      case ReduceOp::max: {
        long long hi = 0;
        for (int j = 0; j < w; ++j) hi = std::max(hi, gen.own_delta(f, j));
        return gen.base(f) + hi;
      }
      case ReduceOp::prod: {
        unsigned long long prod = gen.sign(f) < 0 && (n & 1) ? ~0ULL : 1ULL;  // wraps: integer products are modular
        for (int j = 0; j < w; ++j) prod *= static_cast<unsigned long long>(gen.own_factor(f, j));
        return static_cast<long long>(prod);
      }
    }
    return 0;
  }
};

// Per-type storage and conversions; check loops are instantiated per type so that the
// per-element work has no type dispatch in it.
template <typename S>
struct Native {
  using storage = S;
  static S from_int(long long v) {
    // Integers wrap as the reduction kernels wrap (through the unsigned type).
    if constexpr (std::is_integral_v<S>)
      return static_cast<S>(static_cast<std::make_unsigned_t<S>>(v));
    else
      return static_cast<S>(v);
  }
  static double to_double(S v) { return static_cast<double>(v); }
};
struct F16 {
  using storage = std::uint16_t;
  static std::uint16_t from_int(long long v) { return f32_to_f16(static_cast<float>(v)); }
  static double to_double(std::uint16_t v) { return f16_to_f32(v); }
};
struct BF16 {
  using storage = std::uint16_t;
  static std::uint16_t from_int(long long v) { return f32_to_bf16(static_cast<float>(v)); }
  static double to_double(std::uint16_t v) { return bf16_to_f32(v); }
};

template <typename Fn>
decltype(auto) with_type(DataType t, Fn&& fn) {
  switch (t) {
    case DataType::f32:
      return fn(Native<float>{}, true);
    case DataType::f64:
      return fn(Native<double>{}, true);
    case DataType::f16:
      return fn(F16{}, true);
    case DataType::bf16:
      return fn(BF16{}, true);
    case DataType::i32:
      return fn(Native<std::int32_t>{}, false);
    case DataType::i64:
      return fn(Native<std::int64_t>{}, false);
    case DataType::u8:
      return fn(Native<std::uint8_t>{}, false);
    case DataType::i8:
      return fn(Native<std::int8_t>{}, false);
    case DataType::u32:
      return fn(Native<std::uint32_t>{}, false);
    case DataType::u64:
      return fn(Native<std::uint64_t>{}, false);
  }
  return fn(Native<float>{}, true);
}

// Compare output elements with their exact (integer) expected values, plus avg's division.
template <typename Tr, bool kFloat>
struct Checker {
  const Spec& s;
  const typename Tr::storage* out;
  double tol;
  Result r;
  void expect(std::size_t i, long long exact, bool divide) {
    if constexpr (kFloat) {
      const double ref = divide ? static_cast<double>(exact) / s.nranks : static_cast<double>(exact);
      const double got = Tr::to_double(out[i]);
      if (!(std::fabs(got - ref) <= tol * std::max(1.0, std::fabs(ref)))) miss(i, ref, got);
    } else {
      auto want = Tr::from_int(exact);
      if (divide) want = static_cast<typename Tr::storage>(want / s.nranks);
      if (out[i] != want) miss(i, static_cast<double>(want), static_cast<double>(out[i]));
    }
  }
  void miss(std::size_t i, double want, double got) {
    if (r.wrong++ == 0) r = Result{1, i, want, got};
  }
};

}  // namespace

std::size_t send_elements(const Spec& s) {
  switch (s.coll) {
    case Collective::reducescatter:
    case Collective::alltoall:
    case Collective::scatter:
      return s.count * static_cast<std::size_t>(s.nranks);
    default:
      return s.count;
  }
}

std::size_t recv_elements(const Spec& s) {
  switch (s.coll) {
    case Collective::allgather:
    case Collective::alltoall:
    case Collective::gather:
      return s.count * static_cast<std::size_t>(s.nranks);
    default:
      return s.count;
  }
}

std::size_t alltoallv_share(std::size_t total, int nranks, int distance) {
  if (distance < 0 || distance >= std::max(nranks, 1))
    throw InvalidArgument("alltoallv_share: distance " + std::to_string(distance) + " out of range for " +
                          std::to_string(nranks) + " ranks");
  if (nranks == 1) return total;
  // floor(total * C(d) / W), W = C(n-1) = n(n-1)/2, without overflow: total = qW + rem.
  __extension__ typedef unsigned __int128 u128;
  const auto n = static_cast<std::uint64_t>(nranks);
  const std::uint64_t w = n * (n - 1) / 2, q = total / w, rem = total % w;
  auto upto = [&](std::uint64_t d) {
    const std::uint64_t c = d * (d + 1) / 2;
    return q * c + static_cast<std::uint64_t>(static_cast<u128>(rem) * c / w);
  };
  const auto d = static_cast<std::uint64_t>(distance);
  return d == 0 ? 0 : upto(d) - upto(d - 1);
}

AlltoallvLayout peer_layout(const Spec& s, int rank) {
  return s.coll == Collective::alltoallv ? alltoallv_layout(s.count, s.nranks, rank) : AlltoallvLayout{};
}

void AlltoallvLayout::apply(CollArgs& args) const {
  args.send_counts = send_counts;
  args.send_displs = send_displs;
  args.recv_counts = recv_counts;
  args.recv_displs = recv_displs;
}

AlltoallvLayout alltoallv_layout(std::size_t total, int nranks, int rank) {
  AlltoallvLayout l;
  std::size_t soff = 0, roff = 0;
  for (int j = 0; j < nranks; ++j) {
    l.send_counts.push_back(alltoallv_share(total, nranks, (j - rank + nranks) % nranks));
    l.send_displs.push_back(soff);
    soff += l.send_counts.back();
    l.recv_counts.push_back(alltoallv_share(total, nranks, (rank - j + nranks) % nranks));
    l.recv_displs.push_back(roff);
    roff += l.recv_counts.back();
  }
  return l;
}

double tolerance(DataType t) {
  switch (t) {
    case DataType::f32:
      return 0x1p-23;
    case DataType::f64:
      return 0x1p-52;
    case DataType::f16:
      return 0x1p-10;
    case DataType::bf16:
      return 0x1p-7;
    default:
      return 0;
  }
}

void fill_send(const Spec& s, int rank, void* send) {
  const Gen gen(s);
  const std::size_t n = send_elements(s);
  with_type(s.type, [&](auto tr, bool) {
    using Tr = decltype(tr);
    auto* p = static_cast<typename Tr::storage*>(send);
    if (!gen.reducing) {
      for (std::size_t g = 0; g < n; ++g) p[g] = Tr::from_int(gen.input(rank, g));
      return;
    }
    // start(g) of the comment on Gen, advanced element by element: no division in the loop.
    const auto q = static_cast<std::uint64_t>(rank), w = static_cast<std::uint64_t>(gen.window);
    const std::uint64_t tiles = gen.tiles();
    std::uint64_t tile = 0, shift = gen.s.seed % gen.n;
    for (std::size_t g = 0; g < n; ++g) {
      std::uint64_t st = tile * w + shift;
      if (st >= gen.n) st -= gen.n;
      const std::uint64_t j = q >= st ? q - st : q + gen.n - st;
      p[g] = Tr::from_int(gen.reduced_input(j < w ? static_cast<int>(j) : -1, g));
      if (++tile == tiles) {
        tile = 0;
        if (++shift == gen.n) shift = 0;
      }
    }
  });
}

std::size_t check_send_unchanged(const Spec& s, int rank, const void* send) {
  const std::size_t es = type_size(s.type), bytes = send_elements(s) * es;
  const auto expect = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(bytes, 1));
  fill_send(s, rank, expect.get());
  const auto* got = static_cast<const std::byte*>(send);
  if (std::memcmp(expect.get(), got, bytes) == 0) return 0;
  std::size_t wrong = 0;
  for (std::size_t off = 0; off < bytes; off += es) wrong += std::memcmp(expect.get() + off, got + off, es) != 0;
  return wrong;
}

Result check_recv(const Spec& s, int rank, const void* recv) {
  if ((s.coll == Collective::reduce || s.coll == Collective::gather) && rank != s.root) return {};
  return with_type(s.type, [&](auto tr, bool floating) {
    using Tr = decltype(tr);
    const Gen gen(s);
    const std::size_t n = s.count;
    const bool avg = s.op == ReduceOp::avg;
    const auto* out = static_cast<const typename Tr::storage*>(recv);
    auto run = [&](auto c) {
      switch (s.coll) {
        case Collective::reduce:
        case Collective::allreduce:
        case Collective::reducescatter: {
          const Reference ref(gen);
          const std::size_t off = s.coll == Collective::reducescatter ? n * static_cast<std::size_t>(rank) : 0;
          for (std::size_t i = 0; i < n; ++i) c.expect(i, ref.combined(off + i), avg);
          break;
        }
        case Collective::broadcast:
          for (std::size_t i = 0; i < n; ++i) c.expect(i, gen.input(s.root, i), false);
          break;
        case Collective::allgather:
        case Collective::gather:
          for (int q = 0; q < s.nranks; ++q)
            for (std::size_t i = 0; i < n; ++i) c.expect(static_cast<std::size_t>(q) * n + i, gen.input(q, i), false);
          break;
        case Collective::scatter:
          for (std::size_t i = 0; i < n; ++i)
            c.expect(i, gen.input(s.root, static_cast<std::size_t>(rank) * n + i), false);
          break;
        case Collective::sendrecv:
          for (std::size_t i = 0; i < n; ++i) c.expect(i, gen.input((rank - 1 + s.nranks) % s.nranks, i), false);
          break;
        case Collective::alltoallv: {
          // Rank q's block for this rank starts where q's blocks for the ranks before it end.
          const AlltoallvLayout mine = alltoallv_layout(n, s.nranks, rank);
          for (int q = 0; q < s.nranks; ++q) {
            const std::size_t from = alltoallv_layout(n, s.nranks, q).send_displs[static_cast<std::size_t>(rank)];
            const std::size_t at = mine.recv_displs[static_cast<std::size_t>(q)];
            for (std::size_t i = 0; i < mine.recv_counts[static_cast<std::size_t>(q)]; ++i)
              c.expect(at + i, gen.input(q, from + i), false);
          }
          break;
        }
        case Collective::alltoall:
          for (int q = 0; q < s.nranks; ++q)
            for (std::size_t i = 0; i < n; ++i)
              c.expect(static_cast<std::size_t>(q) * n + i, gen.input(q, static_cast<std::size_t>(rank) * n + i),
                       false);
          break;
      }
      return c.r;
    };
    return floating ? run(Checker<Tr, true>{s, out, tolerance(s.type), {}}) : run(Checker<Tr, false>{s, out, 0.0, {}});
  });
}

}  // namespace commscope::check
