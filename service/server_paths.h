// Internal to crestd: where a node keeps its files is none of a client's
// business. The Server registers its database and state directory once it
// knows them; every status a client receives (ToGrpc) and every job
// (FillJob, a stream's event message) goes through WithoutServerPaths,
// which names them in words instead. The log and the database keep the
// whole message.
#pragma once

#include <string>
#include <string_view>

namespace crest::service {

// From now on `path` reads as `name` in client-visible text. A path without
// a slash ("." or "var") is not registered: it would match ordinary words.
// Thread-safe; paths stay registered for the life of the process.
void HideServerPath(const std::string& path, std::string name);

// `message` with every registered path replaced by its name (longer paths
// first, so a file inside a registered directory reads as the file).
std::string WithoutServerPaths(std::string_view message);

}  // namespace crest::service
