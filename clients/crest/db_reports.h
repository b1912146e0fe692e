// Internal to the crest CLI: what `crest db export|merge|check|stats|import`
// report, one type each, printed by the printers (printer.h) like the
// answers of results.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "crest/store/admin.h"

namespace crest::cli {

// `crest db export`
struct DbExportReport {
  std::string from;      // the database, or "crestd at …"
  std::string snapshot;  // the file written
};

// `crest db merge`
struct DbMergeReport {
  std::string into;
  std::vector<std::pair<std::string, store::MergeReport>> merged;  // per snapshot
};

// `crest db check`
struct DbCheckReport {
  std::string db;
  store::CheckReport check;
};

// `crest db stats`
struct DbStatsReport {
  std::string db;
  store::DbStats stats;
};

// `crest db import`
struct DbImportReport {
  std::string db;
  std::string file;
  std::string gpu_model;
  std::string device;
  std::string tool;
  int64_t rows = 0;
  int64_t added = 0;
};

}  // namespace crest::cli
