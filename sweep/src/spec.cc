#include "crest/sweep/spec.h"

#include <set>
#include <string_view>

#include "crest/common/str_cat.h"
#include "crest/tuner/limits.h"
#include "nlohmann/json.hpp"
#include "spec_fields.h"
#include "spec_items.h"

namespace crest::sweep {
namespace {

using internal::Bad;
using internal::Bounded;
using internal::ExpandDff;
using internal::ExpandGemm;
using internal::ExpandModel;
using internal::Flag;
using internal::Int;
using internal::Name;
using internal::OnlyKnownFields;
using internal::ParseStrict;
using internal::Plan;
using internal::Text;
using nlohmann::json;

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
      const auto choice = a.is_string() ? tuner::ParseAlgoChoice(a.get<std::string>())
                                        : std::optional<tuner::AlgoChoice>();
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
  auto cache = Text(m, "cache", path, std::string(tuner::CacheModeName(o.mode.cache)));
  if (!cache.ok()) return cache.status();
  auto cache_mode = tuner::ParseCacheMode(*cache);
  if (!cache_mode) return Bad(path + ".cache", "must be cold or warm");
  o.mode.cache = *cache_mode;
  auto clocks = Text(m, "clocks", path, std::string(tuner::ClockPolicyName(o.mode.clocks)));
  if (!clocks.ok()) return clocks.status();
  auto policy = tuner::ParseClockPolicy(*clocks);
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

// "shard": {"index": I, "count": N}: keep the plan's GEMMs I, I+N, I+2N, …
// (one task of an array of N shares the plan with the others: together they
// hold every GEMM once). The shard is part of the job's identity.
absl::Status TakeShard(const json& shard, std::vector<tuner::GemmShape>& gemms, json& canonical) {
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
  std::vector<tuner::GemmShape> mine;
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
  auto dtype = tuner::ParseDType(*dtype_text);
  if (!dtype.ok()) return Bad("spec", std::string(dtype.status().message()));
  spec.name = *name;
  spec.gpu = *gpu;

  json canonical = {{"version", kSweepSpecVersion}, {"dtype", tuner::DTypeName(*dtype)}};
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

nlohmann::json AlgoNames(const std::vector<tuner::AlgoChoice>& algos) {
  nlohmann::json out = nlohmann::json::array();
  for (tuner::AlgoChoice a : algos) out.push_back(tuner::AlgoChoiceName(a));
  return out;
}

}  // namespace

nlohmann::json MeasureJson(const measure::MeasureOptions& o) {
  return {{"cache", tuner::CacheModeName(o.mode.cache)},
          {"clocks", tuner::ClockPolicyName(o.mode.clocks)},
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
