#include "progress.h"

#include <cmath>
#include <cstdio>

#include "table.h"

namespace crest::cli {
namespace {
constexpr double kTerminalPeriodS = 0.1;
constexpr double kLogPeriodS = 5.0;
constexpr int kBarWidth = 30;
}  // namespace

std::string Duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<int64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60));
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  }
  return buf;
}

ProgressReporter::ProgressReporter(std::ostream& err, bool is_terminal, std::string label)
    : err_(err), terminal_(is_terminal), label_(std::move(label)) {}

void ProgressReporter::Update(int64_t done, int64_t total, double elapsed_s,
                              const std::string& detail) {
  if (first_done_ < 0) first_done_ = done;
  const double period = terminal_ ? kTerminalPeriodS : kLogPeriodS;
  if (done < total && last_print_s_ >= 0 && elapsed_s - last_print_s_ < period) return;
  last_print_s_ = elapsed_s;
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1;
  const double rate = elapsed_s > 0 ? static_cast<double>(done - first_done_) / elapsed_s : 0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : -1;
  std::string line = label_ + " " + std::to_string(done) + "/" + std::to_string(total) + " " +
                     Fixed(100 * fraction, 1) + "% " + Fixed(rate, 0) + "/s ETA " + Duration(eta) +
                     (detail.empty() ? "" : ", " + detail);
  if (terminal_) {
    const int filled = static_cast<int>(fraction * kBarWidth);
    err_ << "\r[" << std::string(static_cast<size_t>(filled), '#')
         << std::string(static_cast<size_t>(kBarWidth - filled), ' ') << "] " << line << "\x1b[K"
         << std::flush;
    drew_ = true;
  } else {
    err_ << line << '\n';
  }
}

void ProgressReporter::Note(const std::string& line) {
  if (terminal_ && drew_) {
    err_ << "\r\033[K";  // the bar's line, cleared; the next Update draws it again
    drew_ = false;
  }
  err_ << line << '\n';
}

void ProgressReporter::Finish() {
  if (terminal_ && drew_) err_ << '\n';
}

}  // namespace crest::cli
