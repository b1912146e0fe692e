// Internal to the crest CLI: progress of long work on stderr. On a terminal
// a bar redrawn in place; otherwise one line at most every few seconds.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace crest::cli {

class ProgressReporter final {
 public:
  ProgressReporter(std::ostream& err, bool is_terminal, std::string label);
  // `done` of `total`, and `detail` (e.g. the sweep's accounting) after the
  // rate and ETA when not empty.
  void Update(int64_t done, int64_t total, double elapsed_s, const std::string& detail = "");
  void Finish();
  // A line of news (a race starting, its standings) above the bar.
  void Note(const std::string& line);

 private:
  std::ostream& err_;
  bool terminal_;
  std::string label_;
  double last_print_s_ = -1;
  int64_t first_done_ = -1;
  bool drew_ = false;
};

// "3m07s", "42s", "1h02m".
std::string Duration(double seconds);

}  // namespace crest::cli
