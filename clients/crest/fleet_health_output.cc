// A fleet's devices against the fleet median of their GPU model
// (`crest compare --fleet`, and `crest fleet pull`'s report): text, JSON, CSV.
#include "compare_reports.h"
#include "crest/common/str_cat.h"
#include "outputs.h"

namespace crest::cli {
namespace {

using answers::FleetDevice;
using answers::FleetGemm;
using answers::Verdict;

Table DeviceTable(const answers::FleetHealth& h) {
  Table t({{"host", Table::Align::kLeft},
           {"device", Table::Align::kLeft},
           {"gpu", Table::Align::kLeft},
           {"cuBLASLt"},
           {"GEMMs"},
           {"slower GEMMs"},
           {"median ratio"},
           {"interval"},
           {"verdict", Table::Align::kLeft}});
  for (const FleetDevice& d : h.devices) {
    const bool compared = d.gemms > 0;
    t.AddRow({d.host.empty() ? "-" : d.host, d.uuid, d.gpu_model, StrCat(d.cublaslt),
              Grouped(d.gemms), Grouped(d.slower), compared ? Decimals(d.ratio, 4) : "-",
              compared ? RatioInterval(d.ratio_low, d.ratio_high) : "-",
              compared ? std::string(answers::VerdictName(d.verdict)) : "no fleet"});
  }
  return t;
}

nlohmann::json GemmJson(const FleetGemm& g) {
  return {{"m", g.key.m},
          {"n", g.key.n},
          {"k", g.key.k},
          {"batch", g.key.batch},
          {"dtype", tuner::DTypeName(g.key.dtype)},
          {"layout", g.key.Shape().Layout()},
          {"median_us", g.median_us},
          {"fleet_median_us", g.reference_us},
          {"ratio", g.ratio},
          {"ratio_low", g.ratio_low},
          {"ratio_high", g.ratio_high},
          {"verdict", answers::VerdictName(g.verdict)}};
}

}  // namespace

void FleetHealthText(const answers::FleetHealth& h, std::ostream& out) {
  const auto lines = answers::SummarizeFleet(h);
  out << "fleet: every device's newest run per GEMM (" << tuner::CacheModeName(h.query.mode.cache)
      << " L2, " << tuner::ClockPolicyName(h.query.mode.clocks) << " clocks; "
      << (h.query.algo == tuner::AlgoChoice::kBest ? "each GEMM's fastest verified algorithm"
                                                   : "cuBLASLt's first-choice algorithm")
      << ") against the median of the other devices of its GPU model on its cuBLASLt version\n";
  out << lines[0] << "\n";
  out << "rule: a device is slower when the median of its GEMMs' ratios to the others' median is "
         "beyond the threshold and its interval (confidence 1 - "
      << Decimals(h.query.family_error * 100, 1)
      << "% / devices of the group) lies above 1: a false alarm in at most "
      << Decimals(h.query.family_error * 100, 1)
      << "% of reports per group, if the GEMMs' ratios are independent; a GEMM's own verdict "
         "(slower GEMMs) carries no stated error rate\n";
  if (h.devices.empty()) return;
  DeviceTable(h).Print(out);
  for (size_t i = 1; i < lines.size(); ++i) out << lines[i] << "\n";
}

nlohmann::json FleetHealthJson(const answers::FleetHealth& h) {
  nlohmann::json groups = nlohmann::json::array();
  for (const answers::FleetGroup& g : h.groups) {
    groups.push_back({{"gpu_model", g.gpu_model},
                      {"cublaslt", g.cublaslt},
                      {"devices", g.devices},
                      {"gemms", g.gemms}});
  }
  nlohmann::json devices = nlohmann::json::array();
  for (const FleetDevice& d : h.devices) {
    nlohmann::json slowest = nlohmann::json::array();
    for (const FleetGemm& g : d.slowest) slowest.push_back(GemmJson(g));
    devices.push_back({{"gpu_model", d.gpu_model},
                       {"cublaslt", d.cublaslt},
                       {"device_uuid", d.uuid},
                       {"host", d.host},
                       {"provenance", d.provenance},
                       {"replayed", d.replayed},
                       {"gemms", d.gemms},
                       {"slower_gemms", d.slower},
                       {"faster_gemms", d.faster},
                       {"ratio", d.ratio},
                       {"ratio_low", d.ratio_low},
                       {"ratio_high", d.ratio_high},
                       {"coverage", d.coverage},
                       {"verdict", d.gemms > 0 ? answers::VerdictName(d.verdict) : "no fleet"},
                       {"slowest", slowest}});
  }
  return {{"threshold", h.query.threshold},
          {"family_error", h.query.family_error},
          {"min_devices", answers::kMinFleetDevices},
          {"mode",
           {{"cache", tuner::CacheModeName(h.query.mode.cache)},
            {"clocks", tuner::ClockPolicyName(h.query.mode.clocks)}}},
          {"algo", tuner::AlgoChoiceName(h.query.algo)},
          {"replayed", h.replayed},
          {"groups", groups},
          {"devices", devices}};
}

void Text(const FleetHealthResult& r, std::ostream& out) {
  out << "fleet in " << r.origin << "\n";
  FleetHealthText(r.health, out);
}

nlohmann::json Json(const FleetHealthResult& r) {
  nlohmann::json j = FleetHealthJson(r.health);
  j["origin"] = r.origin;
  return j;
}

Table Csv(const FleetHealthResult& r) {
  Table t({{"gpu_model"},
           {"cublaslt"},
           {"host"},
           {"device_uuid"},
           {"gemms"},
           {"slower_gemms"},
           {"faster_gemms"},
           {"ratio"},
           {"ratio_low"},
           {"ratio_high"},
           {"coverage"},
           {"verdict"},
           {"replayed"}});
  for (const FleetDevice& d : r.health.devices) {
    t.AddRow({d.gpu_model, StrCat(d.cublaslt), d.host, d.uuid, StrCat(d.gemms), StrCat(d.slower),
              StrCat(d.faster), Decimals(d.ratio, 5), Decimals(d.ratio_low, 5),
              Decimals(d.ratio_high, 5), Decimals(d.coverage, 4),
              d.gemms > 0 ? std::string(answers::VerdictName(d.verdict)) : "no fleet",
              d.replayed ? "true" : "false"});
  }
  return t;
}

}  // namespace crest::cli
