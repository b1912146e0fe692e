// `crest doctor`'s checks as text, JSON and CSV.
#include "catalogue_reports.h"
#include "crest/common/str_cat.h"
#include "json_views.h"
#include "outputs.h"

namespace crest::cli {

const char* VerdictText(DoctorReport::Verdict v) {
  switch (v) {
    case DoctorReport::Verdict::kOk:
      return "ok";
    case DoctorReport::Verdict::kWarn:
      return "warn";
    case DoctorReport::Verdict::kFail:
      return "FAIL";
  }
  return "?";
}

size_t DoctorReport::Failed() const {
  size_t n = 0;
  for (const Check& c : checks) n += c.verdict == Verdict::kFail ? 1 : 0;
  return n;
}

size_t DoctorReport::Warned() const {
  size_t n = 0;
  for (const Check& c : checks) n += c.verdict == Verdict::kWarn ? 1 : 0;
  return n;
}

namespace {
// What the checks were for: a node that only predicts (--no-gpu) is never
// told it cannot measure, nor that it can.
const char* Purpose(const DoctorReport& r) {
  return r.no_gpu ? "predict (GPU checks skipped: --no-gpu)" : "measure";
}
}  // namespace

void Text(const DoctorReport& r, std::ostream& out) {
  for (const auto& c : r.checks) {
    const std::string verdict = VerdictText(c.verdict);
    out << verdict << std::string(6 - verdict.size(), ' ') << c.name
        << std::string(c.name.size() < 11 ? 11 - c.name.size() : 1, ' ') << c.detail << '\n';
  }
  const size_t failed = r.Failed();
  const size_t warned = r.Warned();
  out << r.checks.size() << " checks: " << r.checks.size() - failed - warned << " ok, " << warned
      << " warn, " << failed << " failed; "
      << (failed == 0 ? "this node is ready to " : "this node is not ready to ") << Purpose(r)
      << "\n";
}

nlohmann::json Json(const DoctorReport& r) {
  nlohmann::json out{{"purpose", r.no_gpu ? "predict" : "measure"},
                     {"ready", r.Failed() == 0},
                     {"checks", nlohmann::json::array()}};
  for (const auto& c : r.checks) {
    out["checks"].push_back(
        {{"name", c.name}, {"verdict", VerdictText(c.verdict)}, {"detail", c.detail}});
  }
  return out;
}

Table Csv(const DoctorReport& r) {
  Table table({{"check", Table::Align::kLeft},
               {"verdict", Table::Align::kLeft},
               {"detail", Table::Align::kLeft}});
  for (const auto& c : r.checks) table.AddRow({c.name, VerdictText(c.verdict), c.detail});
  return table;
}

std::string DoctorFailure(const DoctorReport& r) {
  return StrCat(r.Failed(), " check(s) failed; this node cannot ", Purpose(r), " yet");
}

}  // namespace crest::cli
