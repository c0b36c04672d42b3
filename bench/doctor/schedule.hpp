// The doctor's pair schedule: a round-robin tournament (the circle method), so that in every
// round each rank is in at most one pair and over all rounds every pair meets exactly once.
#pragma once

namespace commscope::doctor {

// Players: p ranks, plus a dummy when p is odd (its partner sits the round out).
constexpr int players(int p) {
  return p % 2 ? p + 1 : p;
}

// Rounds for p ranks: p - 1 for even p, p for odd p (none for a single rank).
constexpr int rounds(int p) {
  return p < 2 ? 0 : players(p) - 1;
}

// Rank x's partner in round r (0 <= r < rounds(p)), or -1 when x sits this round out. Players
// 0..m-2 pair up as x + y = 2r (mod m-1); the one left over (x = r) meets player m-1.
constexpr int partner(int x, int r, int p) {
  const int m = players(p), k = m - 1;
  int y = 0;
  if (x == m - 1) {
    y = r;
  } else if (x == r % k) {
    y = m - 1;
  } else {
    y = ((2 * r - x) % k + k) % k;
  }
  return y < p ? y : -1;
}

}  // namespace commscope::doctor
