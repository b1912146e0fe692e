#include "log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <optional>

#include "crest/common/name_table.h"

namespace crest::service {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::mutex g_mutex;
LogSink g_sink;  // GUARDED_BY(g_mutex); empty: stderr

constexpr NameTable<Level, 4> kLevels = {{{Level::kDebug, "debug"},
                                          {Level::kInfo, "info"},
                                          {Level::kWarn, "warn"},
                                          {Level::kError, "error"}}};

// Quotes values with spaces or quotes so each line stays parseable.
std::string Value(const std::string& v) {
  if (v.find_first_of(" \"=") == std::string::npos && !v.empty()) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c == '\n' ? ' ' : c);
  }
  return out + "\"";
}

}  // namespace

void SetLogLevel(Level level) { g_level = static_cast<int>(level); }

void SetLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_sink = std::move(sink);
}

bool ParseLogLevel(std::string_view text, Level* level) {
  const std::optional<Level> named = ValueNamed(kLevels, text);
  if (named) *level = *named;
  return named.has_value();
}

bool LogEnabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

void Log(Level level, std::string_view event,
         std::initializer_list<std::pair<std::string_view, std::string>> fields) {
  if (!LogEnabled(level)) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string line = std::string("ts=") + ts + "." + (ms < 100 ? (ms < 10 ? "00" : "0") : "") +
                     std::to_string(ms) + "Z level=" + std::string(NameOf(kLevels, level)) +
                     " event=" + std::string(event);
  for (const auto& [key, value] : fields) line += " " + std::string(key) + "=" + Value(value);
  line += "\n";
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sink) {
    g_sink(line);
    return;
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace crest::service
