// ApplyRace: a stored race orders the leading measured rows of a d_ff
// ranking (dff_ranking.h).
#include <algorithm>
#include <map>
#include <utility>

#include "crest/common/str_cat.h"
#include "crest/tuner/dff_ranking.h"

namespace crest::tuner {

bool MeasuredByRun(const DffRow& row, const RunInfo& run) {
  return FromRuns(row.source) && !row.pooled && row.runs.size() == 1 &&
         row.runs.front().job_id == run.job_id && row.runs.front().device_uuid == run.device_uuid;
}

namespace {

// Why the race cannot order these rows; "" when it can.
std::string Misfit(const DffRace& race, const std::vector<DffRow>& rows,
                   const std::map<int64_t, size_t>& raced) {
  const std::string which =
      StrCat("race ", race.info.race_id, " (of job ", race.info.run.job_id, ")");
  for (const RaceStanding& s : race.standings) {
    const auto row =
        std::find_if(rows.begin(), rows.end(), [&](const DffRow& r) { return r.d_ff == s.value; });
    if (row == rows.end()) {
      return StrCat(which, " timed d_ff ", s.value, ", which this answer does not hold");
    }
    if (!MeasuredByRun(*row, race.info.run)) {
      return StrCat(which, " timed d_ff ", s.value,
                    ", which this answer takes from another run (or predicts)");
    }
  }
  for (const DffRow& r : rows) {
    if (r.tie_group == 1 && FromRuns(r.source) && !raced.contains(r.d_ff)) {
      return StrCat(which, " did not time d_ff ", r.d_ff, ", which is tied with the best here");
    }
  }
  return "";
}

}  // namespace

std::string ApplyRace(const DffRace& race, std::vector<DffRow>& rows) {
  std::map<int64_t, size_t> raced;  // d_ff → place in the race
  for (size_t i = 0; i < race.standings.size(); ++i) raced[race.standings[i].value] = i;
  if (std::string why = Misfit(race, rows, raced); !why.empty()) return why;

  // The measured block: where the ranking lists measured rows.
  const auto first =
      std::find_if(rows.begin(), rows.end(), [](const DffRow& r) { return FromRuns(r.source); });
  const auto last =
      std::find_if(first, rows.end(), [](const DffRow& r) { return !FromRuns(r.source); });
  std::stable_partition(first, last, [&](const DffRow& r) { return raced.contains(r.d_ff); });
  const auto raced_end = first + static_cast<std::ptrdiff_t>(raced.size());
  std::stable_sort(first, raced_end, [&](const DffRow& a, const DffRow& b) {
    return raced.at(a.d_ff) < raced.at(b.d_ff);
  });
  // Groups in listing order: a raced row by the race's group, any other by
  // its own; rows left out of the ranking (group 0) stay out.
  int next = 0;
  std::pair<bool, int> current{false, -1};
  for (DffRow& r : rows) {
    if (r.tie_group == 0) continue;
    const auto place = raced.find(r.d_ff);
    const bool in_race = place != raced.end() && FromRuns(r.source);
    std::pair<bool, int> key{in_race, r.tie_group};
    if (in_race) {
      const RaceStanding& s = race.standings[place->second];
      key.second = s.tie_group;
      r.race_verdict = std::string(RaceVerdictName(s.verdict));
      r.race_ratio = s.ratio;
      r.race_ratio_low = s.ratio_low;
      r.race_ratio_high = s.ratio_high;
    }
    if (key != current) {
      current = key;
      ++next;
    }
    r.tie_group = next;
  }
  return "";
}

}  // namespace crest::tuner
