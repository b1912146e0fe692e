// Internal to the crest CLI: each answering command's layout in each format,
// called by the printers (printer.h) and nowhere else.
#pragma once

#include <ostream>

#include "nlohmann/json.hpp"
#include "results.h"
#include "table.h"

namespace crest::cli {

// The text a person reads, the JSON document (with schema_version) and the
// CSV table of each answer.
void DffText(const DffResult& r, std::ostream& out);
nlohmann::json DffJson(const DffResult& r);
Table DffCsv(const DffResult& r);

void VocabText(const VocabResult& r, std::ostream& out);
nlohmann::json VocabJson(const VocabResult& r);
Table VocabCsv(const VocabResult& r);

void DesignText(const DesignResult& r, std::ostream& out);
nlohmann::json DesignJson(const DesignResult& r);
Table DesignCsv(const DesignResult& r);

void LookupText(const LookupResult& r, std::ostream& out);
nlohmann::json LookupJson(const LookupResult& r);
Table LookupCsv(const LookupResult& r);

void ExplainText(const ExplainResult& r, std::ostream& out);
nlohmann::json ExplainJson(const ExplainResult& r);
Table ExplainCsv(const ExplainResult& r);

// The runs of an answer, as its text and JSON say them (answer_text.cc).
std::string RunColumn(const std::vector<RunInfo>& runs, bool pooled);
nlohmann::json RunsJson(const std::vector<RunInfo>& runs);
// "each candidate from the most recent run that measured all of its GEMMs:
// job 1 'x' (…), job 3 …", or the pooled wording; empty without runs.
std::string RunsLine(const std::vector<RunInfo>& runs, answers::RunChoice choice);
// "2.774x", with "^" when the speed-up is against a baseline of another kind.
std::string SpeedupCell(double speedup, Source row, Source basis, bool plain);
// "2 measured, 5 predicted": how many answers of each kind, measured first.
std::string CountKinds(const std::vector<Source>& sources);
// What answers print under a table about speed-ups against a predicted baseline.
inline constexpr const char* kPredictedBasisNote =
    "^ = against the predicted baseline: the baseline was not measured in this row's kind";

}  // namespace crest::cli
