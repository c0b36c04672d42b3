#include "backends/backend.hpp"

#include <algorithm>

namespace commscope::bench {

Layout buffer_layout(const Case& c, int rank, std::size_t unalign) {
  const check::Spec s = c.spec(0);
  const std::size_t es = type_size(c.type);
  const std::size_t sn = check::send_elements(s) * es, rn = check::recv_elements(s) * es;
  const std::size_t rank_block = static_cast<std::size_t>(rank) * c.count * es;
  const std::size_t shift = unalign * es;
  Layout l;
  l.send_offset = l.recv_offset = shift;
  if (!c.in_place) {
    l.a_bytes = shift + sn;
    l.b_bytes = shift + rn;
    return l;
  }
  l.recv_in_b = false;
  l.a_bytes = shift + std::max(sn, rn);
  if (c.coll == Collective::allgather || c.coll == Collective::gather) l.send_offset += rank_block;
  if (c.coll == Collective::reducescatter || c.coll == Collective::scatter) l.recv_offset += rank_block;
  return l;
}

std::uint64_t count_wrong(const Case& c, std::uint64_t seed, int rank, void* out, const void* in, bool corrupt) {
  const check::Spec s = c.spec(seed);
  const bool has_output = !((c.coll == Collective::reduce || c.coll == Collective::gather) && rank != c.root);
  if (corrupt && rank == 0 && has_output && check::recv_elements(s) > 0) {
    auto* p = static_cast<unsigned char*>(out);
    for (std::size_t b = 0; b < type_size(c.type); ++b) p[b] = static_cast<unsigned char>(~p[b]);
  }
  std::uint64_t wrong = check::check_recv(s, rank, out).wrong;
  if (!c.in_place) wrong += check::check_send_unchanged(s, rank, in);
  return wrong;
}

}  // namespace commscope::bench
