#include "crest/store/timing_csv.h"

#include <csv.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "crest/common/env.h"
#include "crest/common/fnv1a.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"

namespace crest::store {
namespace {

using Row = std::vector<std::string>;

// Every record of a CSV text, parsed by libcsv (quotes, embedded commas and
// newlines as RFC 4180 has them).
absl::StatusOr<std::vector<Row>> Records(const std::string& text, const std::string& path) {
  struct Sink {
    std::vector<Row> rows;
    Row current;
  } sink;
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
    return absl::ResourceExhaustedError("import: cannot start the CSV parser");
  }
  const auto field = [](void* data, size_t len, void* out) {
    static_cast<Sink*>(out)->current.emplace_back(static_cast<const char*>(data), len);
  };
  const auto record = [](int, void* out) {
    auto* s = static_cast<Sink*>(out);
    s->rows.push_back(std::move(s->current));
    s->current.clear();
  };
  const size_t parsed = csv_parse(&parser, text.data(), text.size(), field, record, &sink);
  const bool ok = parsed == text.size() && csv_fini(&parser, field, record, &sink) == 0;
  const std::string why = ok ? "" : csv_strerror(csv_error(&parser));
  csv_free(&parser);
  if (!ok) {
    return absl::InvalidArgumentError(
        StrCat(path, ": not valid CSV after ", sink.rows.size() + 1, " lines (", why, ")"));
  }
  return sink.rows;
}

// The columns the importer uses, by header name.
struct Columns {
  std::map<std::string, size_t> index;
  std::optional<size_t> Find(std::initializer_list<const char*> names) const {
    for (const char* name : names) {
      if (auto it = index.find(name); it != index.end()) return it->second;
    }
    return std::nullopt;
  }
};

absl::StatusOr<int64_t> WholeNumber(const std::string& text, const std::string& where) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) {
    return absl::InvalidArgumentError(
        StrCat(where, ": '", text, "' is not a positive whole number"));
  }
  return v;
}

absl::StatusOr<double> Microseconds(const std::string& text, const std::string& where) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v > 0)) {
    return absl::InvalidArgumentError(StrCat(where, ": '", text, "' is not a positive time"));
  }
  return v;
}

// One row's GEMM and time; `where` is "FILE:LINE".
absl::StatusOr<store::ImportedTiming> ParseRow(const Row& row, const Columns& cols, size_t time,
                                               const std::string& where) {
  const auto at = [&](size_t i) { return i < row.size() ? row[i] : std::string(); };
  tuner::GemmShape g;
  const std::pair<const char*, int64_t*> dims[] = {
      {"m", &g.m}, {"n", &g.n}, {"k", &g.k}, {"batch", &g.batch}};
  for (const auto& [name, out] : dims) {
    const auto col = cols.Find({name});
    if (!col) continue;  // batch is optional (1)
    auto v = WholeNumber(at(*col), StrCat(where, ": ", name));
    if (!v.ok()) return v.status();
    *out = *v;
  }
  if (auto s = tuner::ValidateGemmSizes(g.m, g.n, g.k, g.batch); !s.ok()) {
    return absl::InvalidArgumentError(StrCat(where, ": ", s.message()));
  }
  auto dtype = tuner::ParseDType(at(*cols.Find({"dtype"})));
  if (!dtype.ok()) return absl::InvalidArgumentError(StrCat(where, ": ", dtype.status().message()));
  g.dtype = *dtype;
  const auto layout_col = cols.Find({"layout"});
  const std::string layout = layout_col ? at(*layout_col) : "NT";
  if (!tuner::ParseLayout(layout, &g.a_transposed, &g.b_transposed)) {
    return absl::InvalidArgumentError(
        StrCat(where, ": layout: '", layout, "' is not NT, NN, TN or TT"));
  }
  auto us = Microseconds(at(time), StrCat(where, ": time"));
  if (!us.ok()) return us.status();
  return store::ImportedTiming{store::GemmKey::Of(g), *us};
}

// The file's one value of `what` (device or tool): its column if it has one
// (the same in every row), else the option.
absl::StatusOr<std::string> OneValue(const std::vector<Row>& records, std::optional<size_t> col,
                                     const std::string& option, const char* what, const char* flag,
                                     const std::string& path) {
  if (!col) {
    if (option.empty()) {
      return absl::InvalidArgumentError(StrCat(path, ": no ", what, " column; say it with ", flag));
    }
    return option;
  }
  const std::string value = (*col < records[1].size()) ? records[1][*col] : "";
  for (size_t line = 1; line < records.size(); ++line) {
    const std::string v = *col < records[line].size() ? records[line][*col] : "";
    if (v != value) {
      return absl::InvalidArgumentError(StrCat(path, ":", line + 1, ": ", what, " '", v,
                                               "' differs from '", value,
                                               "': import one device and tool per file"));
    }
  }
  return value;
}

}  // namespace

absl::StatusOr<store::ImportBatch> ReadTimingCsv(const std::string& path,
                                                 const TimingCsvOptions& options) {
  auto text = ReadFileToString(path);
  if (!text.ok())
    return absl::Status(text.status().code(), StrCat("import: ", text.status().message()));
  auto records = Records(*text, path);
  if (!records.ok()) return records.status();
  if (records->size() < 2) {
    return absl::InvalidArgumentError(StrCat(path, ": no rows after the header"));
  }
  Columns cols;
  for (size_t i = 0; i < (*records)[0].size(); ++i) cols.index[(*records)[0][i]] = i;
  const auto time = options.time_column.empty() ? cols.Find({"time_us", "median_us"})
                                                : cols.Find({options.time_column.c_str()});
  for (const char* need : {"m", "n", "k", "dtype"}) {
    if (!cols.Find({need})) {
      return absl::InvalidArgumentError(StrCat(path, ": no '", need, "' column"));
    }
  }
  if (!time) {
    return absl::InvalidArgumentError(StrCat(
        path, ": no time column (",
        options.time_column.empty() ? "time_us or median_us" : "'" + options.time_column + "'",
        "); name one with --time-column"));
  }
  store::ImportBatch batch;
  batch.source_file = path.substr(path.find_last_of('/') + 1);
  batch.source_hash = Fnv1a64Hex(*text);
  auto device = OneValue(*records, cols.Find({"device"}), options.device, "device",
                         options.device_flag.c_str(), path);
  if (!device.ok()) return device.status();
  auto tool = OneValue(*records, cols.Find({"tool", "note"}), options.tool, "tool", "--tool", path);
  if (!tool.ok()) return tool.status();
  auto gpu = tuner::FindGpu(*device);
  if (!gpu.ok()) {
    return absl::InvalidArgumentError(
        StrCat(path, ": device '", *device, "' is not a catalogued GPU (crest gpus)"));
  }
  batch.device = *device;
  batch.tool = *tool;
  batch.gpu_model = std::string((*gpu)->name);
  for (size_t line = 1; line < records->size(); ++line) {
    const Row& row = (*records)[line];
    if (row.size() == 1 && row[0].empty()) continue;  // a blank line
    auto timing = ParseRow(row, cols, *time, StrCat(path, ":", line + 1));
    if (!timing.ok()) return timing.status();
    batch.rows.push_back(*timing);
  }
  return batch;
}

}  // namespace crest::store
