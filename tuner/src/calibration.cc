#include "crest/tuner/calibration.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

#include "crest/common/env.h"
#include "crest/common/fnv1a.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/calibration_transfer.h"
#include "crest/tuner/predictor.h"
#include "nlohmann/json.hpp"
#include "text.h"

namespace crest::tuner {
namespace {

using nlohmann::json;

// tuner/calibrations/*.json, as the build found them (then a terminator).
constexpr const char* kShipped[] = {
#include "shipped_calibrations.inc"
    nullptr};

constexpr std::array<int, 4> kFastClasses = {16, 32, 64, 128};
constexpr std::array<int, 3> kFallbackClasses = {2, 4, 8};

template <size_t N>
json ByClass(const std::array<double, N>& values, const std::array<int, N>& classes) {
  json out = json::object();
  for (size_t i = 0; i < N; ++i) out[std::to_string(classes[i])] = values[i];
  return out;
}

// The residues a K-residue factor can apply to (K mod 128 not a multiple of 8).
bool MisalignedResidue(int r) { return r >= 0 && r < kKResiduePeriod && r % 8 != 0; }

json ByResidue(const std::array<double, kKResiduePeriod>& factors) {
  json out = json::object();
  for (int r = 0; r < kKResiduePeriod; ++r) {
    if (MisalignedResidue(r)) out[std::to_string(r)] = factors[static_cast<size_t>(r)];
  }
  return out;
}

}  // namespace

json ErrorsJson(const ModelParams& p) {
  json out = json::object();
  for (size_t i = 0; i < kErrorClasses.size(); ++i) {
    out[std::string(kErrorClasses[i])] = p.expected_error[i];
  }
  return out;
}

std::pair<double, double> ErrorRange(const ModelParams& p, bool fallback) {
  std::pair<double, double> range = {1e300, 0};
  for (size_t i = 0; i < kErrorClasses.size(); ++i) {
    if (IsFallbackClass(i) != fallback) continue;
    range = {std::min(range.first, p.expected_error[i]),
             std::max(range.second, p.expected_error[i])};
  }
  return range;
}

std::string DescribeErrors(const ModelParams& p) {
  const auto range = [&](bool fallback) {
    const auto [low, high] = ErrorRange(p, fallback);
    return StrCat("+/-", Decimals(100 * low, 1),
                  high == low ? "%" : StrCat(" to ", Decimals(100 * high, 1), "%"));
  };
  return StrCat(range(false), " (fast kernels), ", range(true), " (fallback)");
}

namespace {

json ParamsJson(const ModelParams& p) {
  return {{"fast_tflops", p.fast_tflops},
          {"fast_align", ByClass(p.fast_align, kFastClasses)},
          {"fast_full_rate_intensity", p.fast_full_rate_intensity},
          {"fallback_tflops", p.fallback_tflops},
          {"fallback_input", ByClass(p.fallback_input, kFallbackClasses)},
          {"fallback_k_residue", ByResidue(p.fallback_k_residue)},
          {"fallback_full_rate_intensity", p.fallback_full_rate_intensity},
          {"memory_efficiency", p.memory_efficiency},
          {"launch_us", p.launch_us},
          {"expected_error", ErrorsJson(p)}};
}

// One error for every fast class and one for every fallback class: what a
// schema 1 or 2 file can say.
bool TwoErrors(const ModelParams& p) {
  const auto [fast_low, fast_high] = ErrorRange(p, false);
  const auto [fallback_low, fallback_high] = ErrorRange(p, true);
  return fast_low == fast_high && fallback_low == fallback_high;
}

}  // namespace

json FitMetricsJson(const FitMetrics& m) {
  json studies = json::array();
  for (const StudyFit& s : m.studies) {
    studies.push_back(
        {{"tokens", s.tokens},
         {"hidden", s.hidden},
         {"candidates", s.candidates},
         {"measured_best", s.measured_best},
         {"predicted_best", s.predicted_best},
         {"best_gap", s.best_gap},
         {"spearman", s.spearman},
         {"median_error", s.median_error},
         {"coverage", s.coverage},
         {"multiples_of_8", s.multiples_of_8},
         {"coverage_multiples_of_8",
          s.coverage_multiples_of_8 < 0 ? json(nullptr) : json(s.coverage_multiples_of_8)}});
  }
  return {{"rows", m.rows},
          {"spearman", m.spearman},
          {"median_error", m.median_error},
          {"studies", studies}};
}

namespace {

json KResidueJson(const std::vector<KResidueFit>& fits) {
  json out = json::array();
  for (const KResidueFit& f : fits) {
    out.push_back({{"class_bytes", f.class_bytes},
                   {"rows", f.rows},
                   {"residues", f.residues},
                   {"agreement", f.agreement},
                   {"fitted", f.fitted},
                   {"shrink", f.shrink},
                   {"low", f.low},
                   {"high", f.high}});
  }
  return out;
}

void ParseKResidue(const json& fits, std::vector<KResidueFit>* out) {
  if (!fits.is_array()) return;
  for (const json& f : fits) {
    if (!f.is_object()) continue;
    out->push_back({f.value("class_bytes", 0), f.value("rows", int64_t{0}), f.value("residues", 0),
                    f.value("agreement", 0.0), f.value("fitted", false), f.value("shrink", 0.0),
                    f.value("low", 1.0), f.value("high", 1.0)});
  }
}

// Reads a number at `key` of `object` into *out; InvalidArgument names the path.
absl::Status Number(const json& object, const char* key, const std::string& path, double* out) {
  if (!object.contains(key) || !object[key].is_number()) {
    return absl::InvalidArgumentError(StrCat(path, ".", key, ": must be a number"));
  }
  *out = object[key].get<double>();
  return absl::OkStatus();
}

template <size_t N>
absl::Status Classes(const json& object, const char* key, const std::string& path,
                     const std::array<int, N>& classes, std::array<double, N>* out) {
  if (!object.contains(key) || !object[key].is_object()) {
    return absl::InvalidArgumentError(StrCat(path, ".", key, ": must be an object by class"));
  }
  for (size_t i = 0; i < N; ++i) {
    const std::string c = std::to_string(classes[i]);
    if (auto s = Number(object[key], c.c_str(), StrCat(path, ".", key), &(*out)[i]); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// Optional (schema 1 files have none: every factor 1); each key a residue
// 1..127 that is not a multiple of 8, each value a positive number.
absl::Status ParseResidues(const json& p, const std::string& path, ModelParams* out) {
  out->fallback_k_residue = OnesByResidue();
  if (!p.contains("fallback_k_residue")) return absl::OkStatus();
  const json& residues = p["fallback_k_residue"];
  const std::string where = path + ".fallback_k_residue";
  if (!residues.is_object())
    return absl::InvalidArgumentError(where + ": must be an object by K mod 128");
  for (const auto& [key, value] : residues.items()) {
    int r = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), r);
    if (ec != std::errc() || end != key.data() + key.size() || !MisalignedResidue(r)) {
      return absl::InvalidArgumentError(
          StrCat(where, ": key \"", key.substr(0, 16),
                 "\" is not a residue 1..127 that is not a multiple of 8"));
    }
    if (!value.is_number() || value.get<double>() <= 0) {
      return absl::InvalidArgumentError(StrCat(where, ".", key, ": must be a positive number"));
    }
    out->fallback_k_residue[static_cast<size_t>(r)] = value.get<double>();
  }
  return absl::OkStatus();
}

// Schema 3: one number per error class, each in [0, 1); schema 1 and 2
// files give {fast, fallback}, each for every class of its family.
absl::Status ParseErrors(const json& p, const std::string& path, ModelParams* out) {
  const std::string where = path + ".expected_error";
  if (!p.contains("expected_error") || !p["expected_error"].is_object()) {
    return absl::InvalidArgumentError(where + ": must be an object by error class");
  }
  const json& errors = p["expected_error"];
  if (errors.contains("fast") && errors["fast"].is_number()) {
    double fast = 0, fallback = 0;
    if (auto s = Number(errors, "fast", where, &fast); !s.ok()) return s;
    if (auto s = Number(errors, "fallback", where, &fallback); !s.ok()) return s;
    for (size_t i = 0; i < kErrorClasses.size(); ++i) {
      out->expected_error[i] = IsFallbackClass(i) ? fallback : fast;
    }
    return absl::OkStatus();
  }
  for (size_t i = 0; i < kErrorClasses.size(); ++i) {
    const std::string key(kErrorClasses[i]);
    if (auto s = Number(errors, key.c_str(), where, &out->expected_error[i]); !s.ok()) return s;
    if (out->expected_error[i] < 0 || out->expected_error[i] >= 1) {
      return absl::InvalidArgumentError(StrCat(where, ".", key, ": must lie in [0, 1)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseParams(const json& p, const std::string& path, ModelParams* out) {
  const std::pair<const char*, double*> numbers[] = {
      {"fast_tflops", &out->fast_tflops},
      {"fast_full_rate_intensity", &out->fast_full_rate_intensity},
      {"fallback_tflops", &out->fallback_tflops},
      {"fallback_full_rate_intensity", &out->fallback_full_rate_intensity},
      {"memory_efficiency", &out->memory_efficiency},
      {"launch_us", &out->launch_us}};
  for (const auto& [key, field] : numbers) {
    if (auto s = Number(p, key, path, field); !s.ok()) return s;
  }
  if (auto s = Classes(p, "fast_align", path, kFastClasses, &out->fast_align); !s.ok()) return s;
  if (auto s = ParseErrors(p, path, out); !s.ok()) return s;
  if (out->fast_tflops <= 0 || out->fallback_tflops <= 0) {
    return absl::InvalidArgumentError(
        StrCat(path, ": fast_tflops and fallback_tflops must be positive"));
  }
  if (auto s = ParseResidues(p, path, out); !s.ok()) return s;
  return Classes(p, "fallback_input", path, kFallbackClasses, &out->fallback_input);
}

double NumberOr(const json& object, const char* key, double otherwise) {
  return object.contains(key) && object[key].is_number() ? object[key].get<double>() : otherwise;
}

void ParseMetrics(const json& m, FitMetrics* out) {
  out->rows = m.value("rows", int64_t{0});
  out->spearman = m.value("spearman", 0.0);
  out->median_error = m.value("median_error", 0.0);
  for (const json& s : m.value("studies", json::array())) {
    out->studies.push_back({s.value("tokens", int64_t{0}), s.value("hidden", int64_t{0}),
                            s.value("candidates", int64_t{0}), s.value("measured_best", int64_t{0}),
                            s.value("predicted_best", int64_t{0}), s.value("best_gap", 0.0),
                            s.value("spearman", 0.0), s.value("median_error", 0.0),
                            s.value("coverage", 0.0), s.value("multiples_of_8", int64_t{0}),
                            NumberOr(s, "coverage_multiples_of_8", -1)});
  }
}

json IntervalJson(const IntervalFit& f) {
  return {{"basis", f.basis},
          {"windows", f.windows},
          {"gemms", f.gemms},
          {"quantile", f.quantile},
          {"candidates", f.candidates},
          {"coverage", f.coverage},
          {"multiples_of_8", f.multiples_of_8},
          {"coverage_multiples_of_8", f.coverage_multiples_of_8}};
}

IntervalFit ParseInterval(const json& f) {
  if (!f.is_object()) return {};
  return {f.value("basis", std::string()),       f.value("windows", int64_t{0}),
          f.value("gemms", int64_t{0}),          f.value("quantile", 0.0),
          f.value("candidates", int64_t{0}),     f.value("coverage", 0.0),
          f.value("multiples_of_8", int64_t{0}), f.value("coverage_multiples_of_8", 0.0)};
}

absl::StatusOr<Calibration> Parse(const json& doc, std::string_view origin) {
  const std::string where(origin);
  if (!doc.is_object()) return absl::InvalidArgumentError(StrCat(where, ": not a JSON object"));
  const int version = doc.value("schema_version", 0);
  if (version < 1 || version > kCalibrationSchemaVersion) {
    return absl::InvalidArgumentError(StrCat(where, ": calibration schema_version ", version,
                                             " (this crest reads ", kCalibrationSchemaVersion,
                                             ")"));
  }
  if (doc.value("model", std::string()) != kPredictorVersion) {
    return absl::InvalidArgumentError(StrCat(where, ": a calibration of model '",
                                             doc.value("model", std::string()),
                                             "'; this crest runs ", kPredictorVersion));
  }
  auto gpu = FindGpu(doc.value("gpu", std::string()));
  if (!gpu.ok()) return absl::InvalidArgumentError(StrCat(where, ": ", gpu.status().message()));
  auto dtype = ParseDType(doc.value("dtype", std::string()));
  if (!dtype.ok()) return absl::InvalidArgumentError(StrCat(where, ": ", dtype.status().message()));
  Calibration c;
  c.gpu = std::string((*gpu)->name);
  c.dtype = *dtype;
  c.params = (*gpu)->model;
  if (!doc.contains("parameters")) {
    return absl::InvalidArgumentError(StrCat(where, ": parameters: missing"));
  }
  if (auto s = ParseParams(doc["parameters"], where + ": parameters", &c.params); !s.ok()) return s;
  for (const json& f : doc.value("fitted", json::array())) c.fitted.push_back(f.get<std::string>());
  const json fit = doc.value("fit", json::object());
  ParseMetrics(fit.value("before", json::object()), &c.before);
  ParseMetrics(fit.value("after", json::object()), &c.after);
  ParseKResidue(fit.value("k_residue", json::array()), &c.k_residue);
  c.interval = ParseInterval(fit.value("interval", json::object()));
  const json prov = doc.value("provenance", json::object());
  c.provenance = {prov.value("source", std::string()), prov.value("tool", std::string()),
                  prov.value("device", std::string()), prov.value("software", std::string()),
                  prov.value("date", std::string()),   prov.value("database", std::string()),
                  prov.value("rows", int64_t{0})};
  NameCalibration(c);
  return c;
}

// The process's calibrations by (GPU, dtype).
class Registry {
 public:
  Registry() {
    for (const char* text : kShipped) {
      if (text == nullptr) break;
      auto c = ParseCalibration(text, "a shipped calibration");
      if (c.ok()) Put(*std::move(c));  // a broken shipped file fails its test, not the process
    }
  }
  void Put(Calibration c) {
    auto shared = Share(std::move(c));
    std::lock_guard<std::mutex> lock(mutex_);
    by_key_[{shared->gpu, shared->dtype}] = std::move(shared);
    transferred_.clear();  // a new calibration may be a better source
  }
  // The GPU's own calibration, else one moved from a sibling's (kept).
  std::shared_ptr<const Calibration> Get(std::string_view gpu, DType dtype) {
    const std::pair<std::string, DType> key{std::string(gpu), dtype};
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = by_key_.find(key); it != by_key_.end()) return it->second;
    if (auto it = transferred_.find(key); it != transferred_.end()) return it->second;
    auto moved = Transfer(gpu, dtype);
    transferred_.emplace(key, moved);  // none is remembered too
    return moved;
  }
  std::vector<std::shared_ptr<const Calibration>> All() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::shared_ptr<const Calibration>> out;
    for (const auto& [key, c] : by_key_) out.push_back(c);
    // By GPU, then dtype name: the order every listing shows.
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::pair(a->gpu, DTypeName(a->dtype)) < std::pair(b->gpu, DTypeName(b->dtype));
    });
    return out;
  }

 private:
  static std::shared_ptr<const Calibration> Share(Calibration c) {
    auto shared = std::make_shared<Calibration>(std::move(c));
    shared->params.calibration = shared->label;  // points into the object it belongs to
    return shared;
  }
  // A sibling's calibration moved to `gpu`: one with the same SMs, clock
  // and power first, else the first sibling in catalogue order. mutex_ held.
  std::shared_ptr<const Calibration> Transfer(std::string_view gpu, DType dtype) {
    auto target = FindGpu(gpu);
    if (!target.ok()) return nullptr;
    const GpuSpec* best = nullptr;
    std::shared_ptr<const Calibration> from;
    for (const GpuSpec& source : GpuCatalogue()) {
      if (source.name == (*target)->name || !CalibrationSiblings(source, **target)) continue;
      auto it = by_key_.find({std::string(source.name), dtype});
      if (it == by_key_.end()) continue;
      const bool same_die = SameDie(source, **target);
      if (best == nullptr || same_die) {
        best = &source;
        from = it->second;
        if (same_die) break;
      }
    }
    if (from == nullptr) return nullptr;
    return Share(TransferCalibration(*from, *best, **target));
  }

  std::mutex mutex_;
  std::map<std::pair<std::string, DType>, std::shared_ptr<const Calibration>> by_key_;
  std::map<std::pair<std::string, DType>, std::shared_ptr<const Calibration>> transferred_;
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

void NameCalibration(Calibration& c) {
  // Without K-residue factors the hash is the one schema 1 gave, so a
  // calibration's id (and its stored predictions) survive the new field.
  json hashed = ParamsJson(c.params);
  if (c.params.fallback_k_residue == OnesByResidue()) hashed.erase("fallback_k_residue");
  // Errors a schema 1 or 2 file could hold hash as it wrote them.
  if (TwoErrors(c.params)) {
    hashed["expected_error"] = {{"fast", ErrorRange(c.params, false).first},
                                {"fallback", ErrorRange(c.params, true).first}};
  }
  const std::string params = hashed.dump();
  char hash[17];
  std::snprintf(hash, sizeof hash, "%08llx",
                static_cast<unsigned long long>(Fnv1a64(params) & 0xffffffffULL));  // NOLINT
  std::string date = c.provenance.date;
  std::erase(date, '-');
  std::string gpu = c.gpu;
  for (char& ch : gpu) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  c.id = StrCat(gpu, "-", DTypeName(c.dtype), "-", date.empty() ? "undated" : date, "-", hash);
  c.model_version = StrCat(kPredictorVersion, "+", c.id);
  c.label = StrCat("calibrated for ", DTypeName(c.dtype), " from ", c.provenance.rows, " ",
                   c.provenance.source, " rows", c.provenance.device.empty() ? "" : " on ",
                   c.provenance.device, c.provenance.date.empty() ? "" : ", ", c.provenance.date,
                   "; expected error ", DescribeErrors(c.params));
}

absl::StatusOr<Calibration> ParseCalibration(std::string_view text, std::string_view origin) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError(StrCat(origin, ": not valid JSON"));
  }
  try {
    return Parse(doc, origin);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(StrCat(origin, ": ", e.what()));
  }
}

std::string CalibrationJson(const Calibration& c) {
  const CalibrationProvenance& p = c.provenance;
  json doc = {{"schema_version", c.schema_version},
              {"model", std::string(kPredictorVersion)},
              {"id", c.id},
              {"gpu", c.gpu},
              {"dtype", std::string(DTypeName(c.dtype))},
              {"parameters", ParamsJson(c.params)},
              {"fitted", c.fitted},
              {"fit",
               {{"before", FitMetricsJson(c.before)},
                {"after", FitMetricsJson(c.after)},
                {"k_residue", KResidueJson(c.k_residue)},
                {"interval", IntervalJson(c.interval)}}},
              {"provenance",
               {{"source", p.source},
                {"tool", p.tool},
                {"device", p.device},
                {"software", p.software},
                {"date", p.date},
                {"database", p.database},
                {"rows", p.rows}}}};
  return doc.dump(2) + "\n";
}

absl::Status LoadCalibrationFile(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(), StrCat("calibration: ", text.status().message()));
  }
  auto c = ParseCalibration(*text, path);
  if (!c.ok()) return c.status();
  TheRegistry().Put(*std::move(c));
  return absl::OkStatus();
}

std::shared_ptr<const Calibration> ActiveCalibration(std::string_view gpu, DType dtype) {
  return TheRegistry().Get(gpu, dtype);
}

std::vector<std::shared_ptr<const Calibration>> ActiveCalibrations() { return TheRegistry().All(); }

std::string DescribeModel(const GpuSpec& gpu, const Calibration* c) {
  return c == nullptr ? StrCat(kPredictorVersion, " (", gpu.model.calibration, ")")
                      : StrCat(c->model_version, " (", c->label, ")");
}

std::string DescribeModel(const GpuSpec& gpu, DType dtype) {
  return DescribeModel(gpu, ActiveCalibration(gpu.name, dtype).get());
}

CalibrationKinds CalibrationKindsOf(const GpuSpec& gpu) {
  CalibrationKinds kinds;
  for (DType dtype : kDTypesByName) {
    const auto c = ActiveCalibration(gpu.name, dtype);
    if (c == nullptr) continue;
    if (c->transferred_from.empty()) {
      kinds.calibrated.emplace_back(DTypeName(dtype));
    } else {
      kinds.transferred.emplace_back(DTypeName(dtype));
      kinds.transferred_from = c->transferred_from;
    }
  }
  return kinds;
}

std::string CalibrationState(const GpuSpec& gpu) {
  const CalibrationKinds kinds = CalibrationKindsOf(gpu);
  if (kinds.calibrated.empty() && kinds.transferred.empty()) {
    return std::string(gpu.model.calibration);
  }
  std::vector<std::string> parts;
  if (!kinds.calibrated.empty()) {
    parts.push_back(StrCat("calibrated (", StrJoin(kinds.calibrated, ", "), ")"));
  }
  if (!kinds.transferred.empty()) {
    parts.push_back(StrCat("transferred (", StrJoin(kinds.transferred, ", "), ") from ",
                           kinds.transferred_from));
  }
  return StrCat(StrJoin(parts, "; "), "; other dtypes: ", gpu.model.calibration);
}

}  // namespace crest::tuner
