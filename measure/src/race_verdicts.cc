#include "race_verdicts.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numeric>

namespace crest::measure::internal {

std::vector<int> LookRounds(int min_rounds, int max_rounds) {
  std::vector<int> out;
  for (int r = min_rounds; r < max_rounds;) {
    out.push_back(r);
    r = std::max(r + 1, static_cast<int>(std::ceil(r * 1.25)));
  }
  out.push_back(max_rounds);
  return out;
}

RaceJudge::RaceJudge(int candidates, double error_rate, int looks, double resolution)
    : log_up_(std::log1p(resolution)), log_down_(std::log1p(-resolution)) {
  const double pairs = candidates * (candidates - 1) / 2.0;
  tail_ = error_rate / (2 * pairs * looks);
}

double RaceJudge::Critical(int n) const {
  if (n < 2) return INFINITY;
  const auto found = critical_.find(n);
  if (found != critical_.end()) return found->second;
  const boost::math::students_t t(n - 1);
  const double c = boost::math::quantile(boost::math::complement(t, tail_));
  critical_.emplace(n, c);
  return c;
}

PairedRatio RaceJudge::Paired(const std::vector<std::vector<double>>& times, int a, int b) const {
  std::vector<double> r;
  for (const auto& round : times) {
    const double ta = round[static_cast<size_t>(a)];
    const double tb = round[static_cast<size_t>(b)];
    if (ta > 0 && tb > 0) r.push_back(std::log(ta / tb));
  }
  PairedRatio out;
  out.n = static_cast<int>(r.size());
  if (r.empty()) return out;
  const double n = static_cast<double>(r.size());
  out.mean = std::accumulate(r.begin(), r.end(), 0.0) / n;
  double ss = 0;
  for (double x : r) ss += (x - out.mean) * (x - out.mean);
  const double half = out.n > 1 ? Critical(out.n) * std::sqrt(ss / (n - 1) / n) : INFINITY;
  out.low = out.mean - half;
  out.high = out.mean + half;
  return out;
}

bool RaceJudge::Slower(const PairedRatio& r) const { return r.n > 1 && r.low > log_up_; }

bool RaceJudge::Tied(const PairedRatio& r) const {
  return r.n > 1 && r.low >= log_down_ && r.high <= log_up_;
}

bool RaceJudge::Precise(const PairedRatio& r) const { return r.n > 1 && r.high - r.low < log_up_; }

}  // namespace crest::measure::internal
