#include "commscope/collectives/transport.hpp"

#include <string>

namespace commscope {

std::string CallContext::describe() const {
  if (algo.empty()) return "?";
  std::string s;
  s.append(to_string(coll)).append(" ").append(algo).append(" ").append(to_string(type));
  if (is_reducing(coll)) s.append(" ").append(to_string(op));
  if (is_rooted(coll)) s.append(" root ").append(std::to_string(root));
  s.append(" ").append(std::to_string(collective_bytes(coll, count, type, nranks))).append(" B");
  return s;
}

}  // namespace commscope
