// Internal to the crest CLI: the results a command can print, declared only.
// A command includes the header of the result it builds (results.h,
// info_report.h or a *_reports.h) and no other's, so that it does not parse
// every other command's (the job reports' protobuf messages, the store, the
// sweeps); printer.h and outputs.h name them all through this header.
#pragma once

#include <variant>

namespace crest::cli {

struct InfoReport;              // info_report.h
struct DffResult;               // results.h
struct VocabResult;             // timed_results.h
struct DesignResult;            // timed_results.h
struct LookupResult;            // results.h
struct ExplainResult;           // results.h
struct GpusReport;              // catalogue_reports.h
struct ShapesReport;            // shapes_report.h
struct CalibrateReport;         // catalogue_reports.h
struct CalibrationCheckReport;  // catalogue_reports.h
struct DoctorReport;            // catalogue_reports.h
struct JobReport;               // job_reports.h
struct JobListReport;           // job_reports.h
struct JobEventReport;          // job_reports.h
struct SweepReport;             // job_reports.h
struct FleetReport;             // job_reports.h
struct DbExportReport;          // db_reports.h
struct DbMergeReport;           // db_reports.h
struct DbCheckReport;           // db_reports.h
struct DbStatsReport;           // db_reports.h
struct DbImportReport;          // db_reports.h
struct CompareResult;           // compare_reports.h
struct FleetHealthResult;       // compare_reports.h

// Everything a command can print.
using Printable =
    std::variant<const InfoReport*, const DffResult*, const VocabResult*, const DesignResult*,
                 const LookupResult*, const ExplainResult*, const GpusReport*, const ShapesReport*,
                 const JobReport*, const JobListReport*, const JobEventReport*, const SweepReport*,
                 const DbExportReport*, const DbMergeReport*, const DbCheckReport*,
                 const DbStatsReport*, const DbImportReport*, const FleetReport*,
                 const CalibrateReport*, const CalibrationCheckReport*, const DoctorReport*,
                 const CompareResult*, const FleetHealthResult*>;

}  // namespace crest::cli
