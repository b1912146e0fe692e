#include "server_paths.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace crest::service {
namespace {

struct Hidden {
  std::mutex mutex;
  std::vector<std::pair<std::string, std::string>> paths;  // longest first
};

Hidden& Registry() {
  static Hidden* hidden = new Hidden;  // never destroyed: used until exit
  return *hidden;
}

}  // namespace

void HideServerPath(const std::string& path, std::string name) {
  if (path.size() < 3 || path.find('/') == std::string::npos) return;
  Hidden& h = Registry();
  std::lock_guard<std::mutex> lock(h.mutex);
  for (const auto& [known, _] : h.paths) {
    if (known == path) return;
  }
  h.paths.emplace_back(path, std::move(name));
  std::stable_sort(h.paths.begin(), h.paths.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::string WithoutServerPaths(std::string_view text) {
  std::string message(text);
  Hidden& h = Registry();
  std::lock_guard<std::mutex> lock(h.mutex);
  for (const auto& [path, name] : h.paths) {
    for (size_t at = message.find(path); at != std::string::npos;
         at = message.find(path, at + name.size())) {
      message.replace(at, path.size(), name);
    }
  }
  return message;
}

}  // namespace crest::service
