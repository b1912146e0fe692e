// Internal to crestd: structured logs, one line per event on stderr:
//   ts=2026-11-22T03:40:01.123Z level=info event=listening address=127.0.0.1:50051
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace crest::service {

enum class Level { kDebug, kInfo, kWarn, kError };

// Events below this level are dropped. Thread-safe.
void SetLogLevel(Level level);
bool ParseLogLevel(std::string_view text, Level* level);
// True when events at `level` are written: lets a hot path skip building
// fields that would be dropped.
bool LogEnabled(Level level);

// Where lines go instead of stderr (each ends in a newline); an empty sink
// restores stderr. Called with the log's lock held: must not log.
using LogSink = std::function<void(std::string_view line)>;
void SetLogSink(LogSink sink);

void Log(Level level, std::string_view event,
         std::initializer_list<std::pair<std::string_view, std::string>> fields = {});

}  // namespace crest::service
