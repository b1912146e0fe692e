#include "crest/sweep/spec.h"

#include <map>
#include <set>
#include <string_view>

#include "crest/common/str_cat.h"
#include "crest/store/records.h"
#include "crest/tuner/candidates.h"
#include "crest/tuner/limits.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/shapes.h"
#include "nlohmann/json.hpp"

namespace crest::sweep {
namespace {

using nlohmann::json;

absl::Status Bad(const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(StrCat(path, ": ", why));
}

absl::Status OnlyKnownFields(const json& object, const std::string& path,
                             std::initializer_list<std::string_view> known) {
  if (!object.is_object()) return Bad(path, "must be an object");
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (auto k : known) found = found || k == key;
    if (!found) return Bad(path, StrCat("unknown field '", key, "'"));
  }
  return absl::OkStatus();
}

// A value as the user wrote it, cut to a length an error message can quote.
std::string Quoted(const json& v) {
  constexpr size_t kMaxQuoted = 64;
  std::string text = v.dump();
  if (text.size() > kMaxQuoted) text = StrCat(text.substr(0, kMaxQuoted), "...");
  return text;
}

// A whole number. One beyond int64 is refused as the user wrote it, never wrapped.
absl::StatusOr<int64_t> Int(const json& v, const std::string& path) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
    return Bad(path,
               StrCat("is ", Quoted(v), ", beyond the largest whole number (", INT64_MAX, ")"));
  }
  if (!v.is_number_integer())
    return Bad(path, StrCat("must be a whole number (got ", Quoted(v), ")"));
  return v.get<int64_t>();
}

// A whole number from 0 to `max`.
absl::StatusOr<int64_t> Bounded(const json& v, const std::string& path, int64_t max) {
  auto x = Int(v, path);
  if (!x.ok()) return x.status();
  if (*x < 0 || *x > max) return Bad(path, StrCat("is ", *x, "; it must be from 0 to ", max));
  return *x;
}

// A dimension: a number, a list of numbers, or {"from","to","step"}; every
// value from 0 to `max`, and at most kMaxCandidates of them, counted before
// any is made.
absl::StatusOr<std::vector<int64_t>> Values(const json& v, const std::string& path, int64_t max) {
  std::vector<int64_t> out;
  if (v.is_number()) {
    auto x = Bounded(v, path, max);
    if (!x.ok()) return x.status();
    out.push_back(*x);
  } else if (v.is_array()) {
    if (v.empty()) return Bad(path, "must not be empty");
    if (v.size() > static_cast<size_t>(kMaxCandidates)) {
      return Bad(path, StrCat("holds ", v.size(), " values; at most ", kMaxCandidates));
    }
    for (size_t i = 0; i < v.size(); ++i) {
      auto x = Bounded(v[i], StrCat(path, "[", i, "]"), max);
      if (!x.ok()) return x.status();
      out.push_back(*x);
    }
  } else if (v.is_object()) {
    if (auto s = OnlyKnownFields(v, path, {"from", "to", "step"}); !s.ok()) return s;
    if (!v.contains("from") || !v.contains("to")) return Bad(path, "a range needs from and to");
    auto from = Bounded(v["from"], path + ".from", max);
    auto to = Bounded(v["to"], path + ".to", max);
    auto step = v.contains("step") ? Int(v["step"], path + ".step") : absl::StatusOr<int64_t>(1);
    if (!from.ok()) return from.status();
    if (!to.ok()) return to.status();
    if (!step.ok()) return step.status();
    if (*step < 1) return Bad(path + ".step", StrCat("is ", *step, "; it must be positive"));
    if (*to < *from) return Bad(path, StrCat("to (", *to, ") must be at least from (", *from, ")"));
    // from and to are bounded, so neither the difference nor from + i·step
    // (at most to) can overflow, whatever the step.
    const int64_t count = (*to - *from) / *step + 1;
    if (count > kMaxCandidates) {
      return Bad(path, StrCat("gives ", count, " values; at most ", kMaxCandidates));
    }
    for (int64_t i = 0; i < count; ++i) out.push_back(*from + i * *step);
  } else {
    return Bad(path, "must be a number, a list of numbers or {\"from\", \"to\", \"step\"}");
  }
  return out;
}

absl::StatusOr<std::string> Text(const json& object, const char* key, const std::string& path,
                                 const std::string& fallback) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_string()) return Bad(StrCat(path, ".", key), "must be a string");
  return object[key].get<std::string>();
}

absl::StatusOr<bool> Flag(const json& object, const char* key, const std::string& path,
                          bool fallback) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_boolean()) return Bad(StrCat(path, ".", key), "must be true or false");
  return object[key].get<bool>();
}

// A name the spec gives (the spec's, a model's, a GEMM's): bounded, since
// names travel in every job listing.
absl::StatusOr<std::string> Name(const json& object, const std::string& path,
                                 const std::string& fallback) {
  auto name = Text(object, "name", path, fallback);
  if (!name.ok()) return name.status();
  if (name->size() > kMaxSpecNameBytes) {
    return Bad(path + ".name",
               StrCat("is ", name->size(), " bytes long; at most ", kMaxSpecNameBytes));
  }
  return name;
}

// Collects GEMMs, dropping repeats of the same key, up to a limit.
class Plan {
 public:
  explicit Plan(PlanLimit limit) : limit_(limit) {}
  int64_t max_gemms() const { return limit_.max_gemms; }
  // "N GEMMs, the limit (--flag)".
  std::string Limit() const {
    return StrCat(limit_.max_gemms, " GEMMs, the limit",
                  limit_.named_by.empty() ? "" : StrCat(" (", limit_.named_by, ")"));
  }

  absl::Status Add(const GemmShape& g, const std::string& path) {
    if (auto s = ValidateGemmSizes(g.m, g.n, g.k, g.batch); !s.ok()) {
      return Bad(path, std::string(s.message()));
    }
    if (seen_.insert(store::GemmKey::Of(g)).second) gemms_.push_back(g);
    if (gemms_.size() > static_cast<size_t>(limit_.max_gemms)) {
      return Bad(path, StrCat("the plan exceeds ", Limit(), "; split the spec"));
    }
    return absl::OkStatus();
  }
  std::vector<GemmShape> Take() { return std::move(gemms_); }

 private:
  PlanLimit limit_;
  std::set<store::GemmKey> seen_;
  std::vector<GemmShape> gemms_;
};

// An item's pass ("fwd" or "train"), fuse_gate_up and dtype.
struct PassFields {
  std::string pass;
  ShapeOptions options;
  DType dtype = DType::kBf16;
};

absl::StatusOr<PassFields> ReadPass(const json& item, const std::string& path,
                                    DType default_dtype) {
  PassFields out;
  auto pass = Text(item, "pass", path, "fwd");
  if (!pass.ok()) return pass.status();
  if (*pass != "fwd" && *pass != "train") return Bad(path + ".pass", "must be fwd or train");
  auto fuse = Flag(item, "fuse_gate_up", path, true);
  if (!fuse.ok()) return fuse.status();
  auto dtype_text = Text(item, "dtype", path, std::string(DTypeName(default_dtype)));
  if (!dtype_text.ok()) return dtype_text.status();
  auto dtype = ParseDType(*dtype_text);
  if (!dtype.ok()) return Bad(path, std::string(dtype.status().message()));
  out.pass = *pass;
  out.options.include_backward = *pass == "train";
  out.options.fuse_gate_up = *fuse;
  out.dtype = *dtype;
  return out;
}

absl::Status ExpandDff(const json& item, const std::string& path, DType default_dtype, Plan& plan,
                       json& canonical, std::vector<DffQuery>& studies) {
  if (auto s = OnlyKnownFields(
          item, path,
          {"hidden", "ratio", "window", "align", "tokens", "tp", "pass", "fuse_gate_up", "dtype"});
      !s.ok()) {
    return s;
  }
  if (!item.contains("hidden")) return Bad(path, "hidden is required");
  auto hidden = Bounded(item["hidden"], path + ".hidden", kMaxHidden);
  if (!hidden.ok()) return hidden.status();
  auto ratio_text = Text(item, "ratio", path, std::string(kDefaultRatio));
  if (!ratio_text.ok()) return ratio_text.status();
  auto ratio = ParseRatio(*ratio_text);
  if (!ratio.ok()) return Bad(path, std::string(ratio.status().message()));
  const auto int_or = [&](const char* key, int64_t fallback,
                          int64_t max) -> absl::StatusOr<int64_t> {
    return item.contains(key) ? Bounded(item[key], StrCat(path, ".", key), max) : fallback;
  };
  auto window = int_or("window", kDefaultWindow, kMaxDffWindow);
  auto align = int_or("align", kDefaultAlign, kMaxDff);
  auto tokens = int_or("tokens", kDefaultTokens, kMaxTokens);
  auto tp = int_or("tp", kDefaultTp, kMaxTp);
  for (auto* v : {&window, &align, &tokens, &tp}) {
    if (!v->ok()) return v->status();
  }
  auto pass = ReadPass(item, path, default_dtype);
  if (!pass.ok()) return pass.status();

  auto candidates = GenerateDffCandidates({*hidden, *ratio, *window, *align, *tp});
  if (!candidates.ok()) return Bad(path, std::string(candidates.status().message()));
  for (int64_t d_ff : candidates->values) {
    auto gemms = MlpGemms(*tokens, *hidden, d_ff, *tp, pass->dtype, pass->options);
    if (!gemms.ok()) return Bad(path, std::string(gemms.status().message()));
    for (const auto& g : *gemms) {
      if (auto s = plan.Add(g, path); !s.ok()) return s;
    }
  }
  DffQuery study;
  study.dff = {*hidden, *ratio, *window, *align, *tp};
  study.tokens = *tokens;
  study.dtype = pass->dtype;
  study.train = pass->options.include_backward;
  study.fuse_gate_up = pass->options.fuse_gate_up;
  studies.push_back(std::move(study));
  canonical = {{"hidden", *hidden},
               {"ratio", ratio->text},
               {"window", *window},
               {"align", *align},
               {"tokens", *tokens},
               {"tp", *tp},
               {"pass", pass->pass},
               {"fuse_gate_up", pass->options.fuse_gate_up},
               {"dtype", DTypeName(pass->dtype)}};
  return absl::OkStatus();
}

using ModelDims = std::map<std::string_view, std::vector<int64_t>>;
constexpr std::string_view kModelDims[] = {"hidden", "heads", "kv_heads", "d_ff",
                                           "vocab",  "seq",   "batch",    "tp"};
// Each dimension's largest value (limits.h), in kModelDims' order.
constexpr int64_t kModelDimMax[] = {kMaxHidden, kMaxHeads, kMaxHeads,      kMaxDff,
                                    kMaxVocab,  kMaxSeq,   kMaxMicroBatch, kMaxTp};

// Each dimension's values (kv_heads defaults to 0 = heads, batch and tp to
// 1; the others are required) and vocab_pad's ({0}: the vocab as given).
absl::StatusOr<ModelDims> ReadModelDims(const json& item, const std::string& path) {
  ModelDims dims;
  for (size_t d = 0; d < std::size(kModelDims); ++d) {
    const std::string_view dim = kModelDims[d];
    const std::string key(dim);
    if (!item.contains(key)) {
      if (dim == "kv_heads") {
        dims[dim] = {0};
      } else if (dim == "batch" || dim == "tp") {
        dims[dim] = {1};
      } else {
        return Bad(path, StrCat(key, " is required"));
      }
      continue;
    }
    auto values = Values(item[key], StrCat(path, ".", key), kModelDimMax[d]);
    if (!values.ok()) return values.status();
    dims[dim] = *values;
  }
  dims["vocab_pad"] = {0};
  if (item.contains("vocab_pad")) {
    auto values = Values(item["vocab_pad"], path + ".vocab_pad", kMaxVocab);
    if (!values.ok()) return values.status();
    dims["vocab_pad"] = *values;
  }
  return dims;
}

// The configuration at one position of the odometer over `dims`.
ModelConfig ConfigAt(const ModelDims& dims, const std::vector<size_t>& index, DType dtype) {
  ModelConfig c;
  int64_t* fields[] = {&c.hidden, &c.heads, &c.kv_heads,    &c.d_ff,
                       &c.vocab,  &c.seq,   &c.micro_batch, &c.tp};
  for (size_t d = 0; d < std::size(kModelDims); ++d) {
    *fields[d] = dims.at(kModelDims[d])[index[d]];
  }
  c.dtype = dtype;
  const int64_t pad = dims.at("vocab_pad")[index.back()];
  if (pad > 0 && c.tp > 0 && c.vocab > 0) {
    c.vocab = (c.vocab + pad * c.tp - 1) / (pad * c.tp) * pad * c.tp;
  }
  return c;
}

// Advances the odometer; false once every position has been visited.
bool Advance(const ModelDims& dims, std::vector<size_t>& index) {
  for (size_t d = 0; d < index.size(); ++d) {
    const std::string_view dim = d < std::size(kModelDims) ? kModelDims[d] : "vocab_pad";
    if (++index[d] < dims.at(dim).size()) return true;
    index[d] = 0;
  }
  return false;
}

absl::Status ExpandModel(const json& item, const std::string& path, DType default_dtype, Plan& plan,
                         std::vector<std::string>& notes, json& canonical) {
  if (auto s = OnlyKnownFields(item, path,
                               {"name", "hidden", "heads", "kv_heads", "d_ff", "vocab", "seq",
                                "batch", "tp", "pass", "fuse_gate_up", "dtype", "vocab_pad"});
      !s.ok()) {
    return s;
  }
  auto dims = ReadModelDims(item, path);
  if (!dims.ok()) return dims.status();
  auto name = Name(item, path, "");
  if (!name.ok()) return name.status();
  auto pass = ReadPass(item, path, default_dtype);
  if (!pass.ok()) return pass.status();

  double combinations = 1;
  for (const auto& [dim, values] : *dims) combinations *= static_cast<double>(values.size());
  if (combinations > static_cast<double>(kMaxCandidates)) {
    return Bad(path, StrCat("expands to more than ", kMaxCandidates, " model configurations"));
  }
  std::vector<size_t> index(std::size(kModelDims) + 1, 0);
  int64_t skipped = 0;
  std::string first_reason;
  do {
    auto gemms = TransformerGemms(ConfigAt(*dims, index, pass->dtype), pass->options);
    if (!gemms.ok()) {
      if (skipped++ == 0) first_reason = std::string(gemms.status().message());
      continue;
    }
    for (const auto& g : *gemms) {
      if (auto s = plan.Add(g, path); !s.ok()) return s;
    }
  } while (Advance(*dims, index));
  if (skipped > 0) {
    notes.push_back(StrCat(path, ": skipped ", skipped, " of ", static_cast<int64_t>(combinations),
                           " configurations that break a rule (first: ", first_reason, ")"));
    if (static_cast<double>(skipped) == combinations) {
      return Bad(path, StrCat("no valid configuration (", first_reason, ")"));
    }
  }
  canonical = item;
  canonical["pass"] = pass->pass;
  canonical["fuse_gate_up"] = pass->options.fuse_gate_up;
  canonical["dtype"] = DTypeName(pass->dtype);
  return absl::OkStatus();
}

absl::Status ExpandGemm(const json& item, const std::string& path, DType default_dtype, Plan& plan,
                        json& canonical) {
  if (auto s = OnlyKnownFields(item, path, {"name", "m", "n", "k", "batch", "layout", "dtype"});
      !s.ok()) {
    return s;
  }
  std::vector<int64_t> m, n, k, batch = {1};
  for (auto [key, out] :
       {std::pair{"m", &m}, std::pair{"n", &n}, std::pair{"k", &k}, std::pair{"batch", &batch}}) {
    if (!item.contains(key)) {
      if (std::string_view(key) == "batch") continue;
      return Bad(path, StrCat(key, " is required"));
    }
    const bool is_batch = std::string_view(key) == "batch";
    auto values = Values(item[key], StrCat(path, ".", key), is_batch ? kMaxGemmBatch : kMaxGemmDim);
    if (!values.ok()) return values.status();
    *out = *values;
  }
  auto layout = Text(item, "layout", path, "NT");
  if (!layout.ok()) return layout.status();
  GemmShape g;
  if (!ParseLayout(*layout, &g.a_transposed, &g.b_transposed)) {
    return Bad(path + ".layout", "must be NT, NN, TN or TT");
  }
  auto dtype_text = Text(item, "dtype", path, std::string(DTypeName(default_dtype)));
  if (!dtype_text.ok()) return dtype_text.status();
  auto dtype = ParseDType(*dtype_text);
  if (!dtype.ok()) return Bad(path, std::string(dtype.status().message()));
  auto name = Name(item, path, "gemm");
  if (!name.ok()) return name.status();
  g.dtype = *dtype;
  g.name = *name;
  // Counted before any is made, stopping once past the limit (no overflow).
  int64_t count = 1;
  for (size_t values : {m.size(), n.size(), k.size(), batch.size()}) {
    const auto factor = static_cast<int64_t>(values);
    count = count > plan.max_gemms() / factor ? plan.max_gemms() + 1 : count * factor;
  }
  if (count > plan.max_gemms()) {
    return Bad(path, StrCat("expands to more than ", plan.Limit()));
  }
  for (int64_t b : batch) {
    for (int64_t mm : m) {
      for (int64_t nn : n) {
        for (int64_t kk : k) {
          g.batch = b;
          g.m = mm;
          g.n = nn;
          g.k = kk;
          if (auto s = plan.Add(g, path); !s.ok()) return s;
        }
      }
    }
  }
  canonical = item;
  canonical["layout"] = *layout;
  canonical["dtype"] = DTypeName(*dtype);
  return absl::OkStatus();
}

// "measure": {"race": {…}}: the race of each d_ff study's leaders.
absl::Status ExpandRace(const json& r, const std::string& path, measure::RaceSettings& race) {
  if (auto s = OnlyKnownFields(
          r, path, {"enabled", "window", "max_candidates", "resolution", "max_seconds", "algos"});
      !s.ok()) {
    return s;
  }
  auto enabled = Flag(r, "enabled", path, race.enabled);
  if (!enabled.ok()) return enabled.status();
  race.enabled = *enabled;
  if (r.contains("max_candidates")) {
    auto v = Int(r["max_candidates"], path + ".max_candidates");
    if (!v.ok()) return v.status();
    if (*v < 0 || *v > 1'000'000) return Bad(path + ".max_candidates", "is out of range");
    race.max_candidates = static_cast<int>(*v);
  }
  for (auto [key, field] :
       {std::pair{"window", &race.window}, std::pair{"resolution", &race.resolution},
        std::pair{"max_seconds", &race.max_seconds}}) {
    if (!r.contains(key)) continue;
    if (!r[key].is_number()) return Bad(StrCat(path, ".", key), "must be a number");
    *field = r[key].get<double>();
  }
  if (r.contains("algos")) {
    const json& algos = r["algos"];
    const std::string at = path + ".algos";
    if (!algos.is_array()) return Bad(at, "must be a list of \"best\" and/or \"default\"");
    race.algos.clear();
    for (const json& a : algos) {
      const auto choice =
          a.is_string() ? ParseAlgoChoice(a.get<std::string>()) : std::optional<AlgoChoice>();
      if (!choice) return Bad(at, "must be a list of \"best\" and/or \"default\"");
      if (race.algos.size() < 3) race.algos.push_back(*choice);  // validated as a whole later
    }
  }
  return absl::OkStatus();
}

// The "measure" section; `canonical` gets every field, defaults filled.
absl::StatusOr<measure::MeasureOptions> ExpandMeasure(const json& m, json& canonical) {
  const std::string path = "spec.measure";
  if (auto s = OnlyKnownFields(m, path,
                               {"cache", "clocks", "top_k", "exhaustive", "max_algos", "max_noise",
                                "min_samples", "max_seconds", "race"});
      !s.ok()) {
    return s;
  }
  measure::MeasureOptions o;
  auto cache = Text(m, "cache", path, std::string(CacheModeName(o.mode.cache)));
  if (!cache.ok()) return cache.status();
  auto cache_mode = ParseCacheMode(*cache);
  if (!cache_mode) return Bad(path + ".cache", "must be cold or warm");
  o.mode.cache = *cache_mode;
  auto clocks = Text(m, "clocks", path, std::string(ClockPolicyName(o.mode.clocks)));
  if (!clocks.ok()) return clocks.status();
  auto policy = ParseClockPolicy(*clocks);
  if (!policy) return Bad(path + ".clocks", "must be sustained or burst");
  o.mode.clocks = *policy;
  auto exhaustive = Flag(m, "exhaustive", path, o.exhaustive);
  if (!exhaustive.ok()) return exhaustive.status();
  o.exhaustive = *exhaustive;
  for (auto [key, field] : {std::pair{"top_k", &o.top_k}, std::pair{"max_algos", &o.max_algos},
                            std::pair{"min_samples", &o.min_samples}}) {
    if (!m.contains(key)) continue;
    auto v = Int(m[key], StrCat(path, ".", key));
    if (!v.ok()) return v.status();
    if (*v < 0 || *v > 1'000'000) return Bad(StrCat(path, ".", key), "is out of range");
    *field = static_cast<int>(*v);
  }
  for (auto [key, field] :
       {std::pair{"max_noise", &o.max_noise}, std::pair{"max_seconds", &o.max_seconds}}) {
    if (!m.contains(key)) continue;
    if (!m[key].is_number()) return Bad(StrCat(path, ".", key), "must be a number");
    *field = m[key].get<double>();
  }
  if (m.contains("race")) {
    if (auto s = ExpandRace(m["race"], path + ".race", o.race); !s.ok()) return s;
  }
  if (auto s = measure::ValidateMeasureOptions(o); !s.ok()) {
    return absl::InvalidArgumentError(StrCat("spec.", s.message()));
  }
  canonical = MeasureJson(o);
  return o;
}

// The document, refusing what JSON parsers disagree on: a key given twice in
// one object (which value counts?).
absl::StatusOr<json> ParseStrict(const std::string& text) {
  std::vector<std::set<std::string>> keys;  // per open object
  std::string duplicate;
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json doc = json::parse(text, check, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Bad("spec", "is not valid JSON");
  if (!duplicate.empty()) {
    return Bad("spec", StrCat("gives the key \"", duplicate.substr(0, 64),
                              "\" twice in one object; give each key once"));
  }
  return doc;
}

// "shard": {"index": I, "count": N}: keep the plan's GEMMs I, I+N, I+2N, …
// (one task of an array of N shares the plan with the others: together they
// hold every GEMM once). The shard is part of the job's identity.
absl::Status TakeShard(const json& shard, std::vector<GemmShape>& gemms, json& canonical) {
  if (auto s = OnlyKnownFields(shard, "spec.shard", {"index", "count"}); !s.ok()) return s;
  if (!shard.contains("index") || !shard.contains("count")) {
    return Bad("spec.shard", "must give both index and count");
  }
  auto count = Int(shard["count"], "spec.shard.count");
  if (!count.ok()) return count.status();
  if (*count < 1 || *count > kMaxShards) {
    return Bad("spec.shard.count", StrCat("is ", *count, "; it must be from 1 to ", kMaxShards));
  }
  auto index = Bounded(shard["index"], "spec.shard.index", *count - 1);
  if (!index.ok()) return index.status();
  const size_t total = gemms.size();
  if (static_cast<size_t>(*index) >= total) {
    return Bad("spec.shard",
               StrCat("task ", *index, " of ", *count, " has no GEMMs: the plan holds ", total,
                      "; use at most ", total, " tasks"));
  }
  std::vector<GemmShape> mine;
  for (size_t i = static_cast<size_t>(*index); i < total; i += static_cast<size_t>(*count)) {
    mine.push_back(std::move(gemms[i]));
  }
  gemms = std::move(mine);
  canonical["shard"] = {{"index", *index}, {"count", *count}};
  return absl::OkStatus();
}

// "plan": "full" (the default; the canonical text leaves it out) or
// "adaptive", which needs the spec's d_ff studies and no shard.
absl::Status ReadPlan(const json& doc, SweepSpec& spec, json& canonical) {
  if (!doc.contains("plan")) return absl::OkStatus();
  const json& plan = doc["plan"];
  if (!plan.is_string() || (plan != "full" && plan != "adaptive")) {
    return Bad("spec.plan", "must be \"full\" or \"adaptive\"");
  }
  if (plan == "full") return absl::OkStatus();
  if (spec.dff.empty()) {
    return Bad("spec.plan",
               "\"adaptive\" chooses among d_ff candidates; the spec has no \"dff\" study");
  }
  if (doc.contains("shard")) {
    return Bad("spec.plan",
               "\"adaptive\" decides its GEMMs as it times them; it cannot be sharded");
  }
  spec.adaptive = true;
  canonical["plan"] = "adaptive";
  return absl::OkStatus();
}

// "revalidate": true re-times, for each GEMM stored under another software
// version, its stored top algorithms and the library's first choice now
// (runner.h); false (the default) is left out of the canonical text.
absl::Status ReadRevalidate(const json& doc, SweepSpec& spec, json& canonical) {
  if (!doc.contains("revalidate")) return absl::OkStatus();
  if (!doc["revalidate"].is_boolean()) return Bad("spec.revalidate", "must be true or false");
  if (!doc["revalidate"].get<bool>()) return absl::OkStatus();
  if (spec.adaptive) {
    return Bad("spec.revalidate",
               "re-times what is stored; it cannot be combined with \"plan\": \"adaptive\"");
  }
  spec.revalidate = true;
  canonical["revalidate"] = true;
  return absl::OkStatus();
}

absl::StatusOr<SweepSpec> Parse(const std::string& text, PlanLimit limit) {
  if (text.size() > kMaxSpecBytes) {
    return Bad("spec", StrCat("is ", text.size(), " bytes long; at most ", kMaxSpecBytes));
  }
  auto parsed = ParseStrict(text);
  if (!parsed.ok()) return parsed.status();
  const json& doc = *parsed;
  if (auto s = OnlyKnownFields(doc, "spec",
                               {"version", "name", "gpu", "dtype", "dff", "models", "gemms",
                                "measure", "shard", "plan", "revalidate"});
      !s.ok()) {
    return s;
  }
  if (doc.contains("version")) {
    auto v = Int(doc["version"], "spec.version");
    if (!v.ok()) return v.status();
    if (*v != kSweepSpecVersion) {
      return Bad("spec.version",
                 StrCat("is ", *v, "; this crest reads version ", kSweepSpecVersion));
    }
  }
  SweepSpec spec;
  auto name = Name(doc, "spec", "");
  auto gpu = Text(doc, "gpu", "spec", "");
  auto dtype_text = Text(doc, "dtype", "spec", "bf16");
  if (!name.ok()) return name.status();
  if (!gpu.ok()) return gpu.status();
  if (!dtype_text.ok()) return dtype_text.status();
  auto dtype = ParseDType(*dtype_text);
  if (!dtype.ok()) return Bad("spec", std::string(dtype.status().message()));
  spec.name = *name;
  spec.gpu = *gpu;

  json canonical = {{"version", kSweepSpecVersion}, {"dtype", DTypeName(*dtype)}};
  if (!spec.name.empty()) canonical["name"] = spec.name;
  if (!spec.gpu.empty()) canonical["gpu"] = spec.gpu;
  Plan plan(limit);
  for (const char* section : {"dff", "models", "gemms"}) {
    if (!doc.contains(section)) continue;
    const json& list = doc[section];
    const std::string path = StrCat("spec.", section);
    if (!list.is_array()) return Bad(path, "must be a list");
    json out = json::array();
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string item_path = StrCat(path, "[", i, "]");
      json item;
      absl::Status s;
      if (std::string_view(section) == "dff") {
        s = ExpandDff(list[i], item_path, *dtype, plan, item, spec.dff);
      } else if (std::string_view(section) == "models") {
        s = ExpandModel(list[i], item_path, *dtype, plan, spec.notes, item);
      } else {
        s = ExpandGemm(list[i], item_path, *dtype, plan, item);
      }
      if (!s.ok()) return s;
      out.push_back(item);
    }
    canonical[section] = out;
  }
  if (doc.contains("measure")) {
    json measure_json;
    auto measure = ExpandMeasure(doc["measure"], measure_json);
    if (!measure.ok()) return measure.status();
    spec.measure = *measure;
    // Only a method other than the default changes the job's identity.
    if (measure_json != MeasureJson({})) canonical["measure"] = measure_json;
  }
  spec.gemms = plan.Take();
  if (spec.gemms.empty()) return Bad("spec", "is empty: give at least one of dff, models, gemms");
  if (auto s = ReadPlan(doc, spec, canonical); !s.ok()) return s;
  if (auto s = ReadRevalidate(doc, spec, canonical); !s.ok()) return s;
  if (doc.contains("shard")) {
    if (auto s = TakeShard(doc["shard"], spec.gemms, canonical); !s.ok()) return s;
  }
  spec.canonical_json = canonical.dump();
  return spec;
}

nlohmann::json AlgoNames(const std::vector<AlgoChoice>& algos) {
  nlohmann::json out = nlohmann::json::array();
  for (AlgoChoice a : algos) out.push_back(AlgoChoiceName(a));
  return out;
}

}  // namespace

nlohmann::json MeasureJson(const measure::MeasureOptions& o) {
  return {{"cache", CacheModeName(o.mode.cache)},
          {"clocks", ClockPolicyName(o.mode.clocks)},
          {"top_k", o.top_k},
          {"exhaustive", o.exhaustive},
          {"max_algos", o.max_algos},
          {"max_noise", o.max_noise},
          {"min_samples", o.min_samples},
          {"max_seconds", o.max_seconds},
          {"race",
           {{"enabled", o.race.enabled},
            {"window", o.race.window},
            {"max_candidates", o.race.max_candidates},
            {"resolution", o.race.resolution},
            {"max_seconds", o.race.max_seconds},
            {"algos", AlgoNames(o.race.algos)}}}};
}

absl::StatusOr<SweepSpec> ParseSweepSpec(const std::string& json_text, PlanLimit limit) {
  try {
    return Parse(json_text, limit);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(StrCat("spec: ", e.what()));
  }
}

}  // namespace crest::sweep
