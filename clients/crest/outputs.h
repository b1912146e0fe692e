// Internal to the crest CLI: each answering command's layout in each format,
// called by the printers (printer.h) and nowhere else. The results are
// declared only (printable.h): each *_output.cc includes the headers of the
// results it lays out.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "crest/tuner/device_info.h"
#include "crest/tuner/source.h"
#include "nlohmann/json.hpp"
#include "printable.h"
#include "table.h"

namespace crest::v1 {
class Job;  // crest.pb.h
}  // namespace crest::v1
namespace crest::answers {
struct AnswerOptions;  // answers.h
struct AnswerOrigin;   // answers.h
struct FleetHealth;    // fleet_health.h
}  // namespace crest::answers
namespace crest::tuner {
enum class AlgoChoice;  // measurement.h
struct Timing;          // timing.h
}  // namespace crest::tuner

namespace crest::cli {

// The text a person reads, the JSON document (with schema_version) and the
// CSV table of each answer.
void Text(const DffResult& r, std::ostream& out);
nlohmann::json Json(const DffResult& r);
// kKeptApart: "candidates" is left empty; the caller takes the rows
// themselves (Io::dff_rows).
enum class DffRowsIn { kDocument, kKeptApart };
nlohmann::json Json(const DffResult& r, DffRowsIn rows);
Table Csv(const DffResult& r);

void Text(const VocabResult& r, std::ostream& out);
nlohmann::json Json(const VocabResult& r);
Table Csv(const VocabResult& r);

void Text(const DesignResult& r, std::ostream& out);
nlohmann::json Json(const DesignResult& r);
Table Csv(const DesignResult& r);

void Text(const LookupResult& r, std::ostream& out);
nlohmann::json Json(const LookupResult& r);
Table Csv(const LookupResult& r);

void Text(const ExplainResult& r, std::ostream& out);
nlohmann::json Json(const ExplainResult& r);
Table Csv(const ExplainResult& r);

nlohmann::ordered_json Json(const InfoReport& r);
void Text(const InfoReport& r, std::ostream& out);
Table Csv(const InfoReport& r);

void Text(const GpusReport& r, std::ostream& out);
nlohmann::json Json(const GpusReport& r);
Table Csv(const GpusReport& r);
void Text(const ShapesReport& r, std::ostream& out);
nlohmann::json Json(const ShapesReport& r);
Table Csv(const ShapesReport& r);

void Text(const JobReport& r, std::ostream& out);
nlohmann::json Json(const JobReport& r);
Table Csv(const JobReport& r);
void Text(const JobListReport& r, std::ostream& out);
nlohmann::json Json(const JobListReport& r);
Table Csv(const JobListReport& r);
void Text(const JobEventReport& r, std::ostream& out);
nlohmann::json Json(const JobEventReport& r);
Table Csv(const JobEventReport& r);
void Text(const SweepReport& r, std::ostream& out);
nlohmann::json Json(const SweepReport& r);
Table Csv(const SweepReport& r);

void Text(const DbExportReport& r, std::ostream& out);
nlohmann::json Json(const DbExportReport& r);
Table Csv(const DbExportReport& r);
void Text(const DbMergeReport& r, std::ostream& out);
nlohmann::json Json(const DbMergeReport& r);
Table Csv(const DbMergeReport& r);
void Text(const DbCheckReport& r, std::ostream& out);
nlohmann::json Json(const DbCheckReport& r);
Table Csv(const DbCheckReport& r);
void Text(const DbStatsReport& r, std::ostream& out);
nlohmann::json Json(const DbStatsReport& r);
Table Csv(const DbStatsReport& r);
void Text(const DbImportReport& r, std::ostream& out);
nlohmann::json Json(const DbImportReport& r);
Table Csv(const DbImportReport& r);

void Text(const CompareResult& r, std::ostream& out);
nlohmann::json Json(const CompareResult& r);
Table Csv(const CompareResult& r);

void Text(const FleetHealthResult& r, std::ostream& out);
nlohmann::json Json(const FleetHealthResult& r);
Table Csv(const FleetHealthResult& r);
// The devices' table and the slower devices' GEMMs (text), or every device
// with its slowest GEMMs (JSON): what both fleet reports print.
void FleetHealthText(const answers::FleetHealth& h, std::ostream& out);
nlohmann::json FleetHealthJson(const answers::FleetHealth& h);

void Text(const FleetReport& r, std::ostream& out);
nlohmann::json Json(const FleetReport& r);
Table Csv(const FleetReport& r);

void Text(const CalibrateReport& r, std::ostream& out);
nlohmann::json Json(const CalibrateReport& r);
Table Csv(const CalibrateReport& r);

void Text(const CalibrationCheckReport& r, std::ostream& out);
nlohmann::json Json(const CalibrationCheckReport& r);
Table Csv(const CalibrationCheckReport& r);

void Text(const DoctorReport& r, std::ostream& out);
nlohmann::json Json(const DoctorReport& r);
Table Csv(const DoctorReport& r);
// The error a failed check ends `crest doctor` with.
std::string DoctorFailure(const DoctorReport& r);

// One job as a line: "job 7: running, 120/514 GEMMs, model H100-SXM, priority 100".
std::string JobLine(const v1::Job& job);
// A measuring sweep's accounting in words: "12.3 GEMMs/min, GPU busy 85.1%,
// host 14.2 ms/GEMM".
std::string Accounting(double gemms_per_minute, double gpu_busy_fraction,
                       double host_overhead_per_gemm_s);

// The runs of an answer, as its text and JSON say them (answer_text.cc).
std::string RunColumn(const std::vector<tuner::RunInfo>& runs, bool pooled);
nlohmann::json RunsJson(const std::vector<tuner::RunInfo>& runs);
// Where a ranking came from, as every ranking's JSON says it: "answered_by",
// and the "run_choice" and "algo_choice" that picked among stored figures
// (null when no database or crestd answered); `doc` gains the three fields.
void AddOriginJson(const answers::AnswerOrigin& origin, nlohmann::json& doc);
// A time with its interval, kind, provenance and runs (vocab's and design's parts).
nlohmann::json TimingJson(const tuner::Timing& t);
// "each candidate from the most recent run that measured all of its GEMMs:
// job 1 'x' (…), job 3 …", or the pooled wording, and a second line saying
// which algorithm answered (AlgoChoiceText); empty without runs.
std::string RunsLine(const std::vector<tuner::RunInfo>& runs,
                     const answers::AnswerOptions& options);
// Which algorithm answered for each measured GEMM, in words with its flag.
std::string AlgoChoiceText(tuner::AlgoChoice choice);
// "2.774x", with "^" when the speed-up is against a baseline of another kind.
std::string SpeedupCell(double speedup, tuner::Source row, tuner::Source basis, bool plain);
// "2 measured, 5 predicted": how many answers of each kind, measured first.
std::string CountKinds(const std::vector<tuner::Source>& sources);
// What answers print under a table about speed-ups against a predicted baseline.
inline constexpr const char* kPredictedBasisNote =
    "^ = against the predicted baseline: the baseline was not measured in this row's kind";

}  // namespace crest::cli
