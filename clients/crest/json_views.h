// Internal to the crest CLI: the JSON form of the tuner's results. Every
// top-level document carries "schema_version" (kJsonSchemaVersion).
#pragma once

#include "crest/store/records.h"
#include "crest/tuner/device_info.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "nlohmann/json.hpp"

namespace crest::v1 {
class Job;       // crest.pb.h
class JobEvent;  // crest.pb.h
}  // namespace crest::v1

namespace crest::cli {

inline constexpr int kJsonSchemaVersion = 1;

nlohmann::json GemmJson(const tuner::GemmShape& g);
nlohmann::json GpuJson(const tuner::GpuSpec& gpu);
nlohmann::json TileJson(const tuner::TileEstimate& e);
nlohmann::json PredictionJson(const tuner::GemmShape& g, const tuner::GpuSpec& gpu,
                              const tuner::Prediction& p);
// A candidate row as the dff document lists it (DffRowFields' fields, the
// race nested, the device and software of a measured row); `rank`: its place.
nlohmann::json DffRowJson(const tuner::DffRow& row, int64_t rank);
nlohmann::json DeviceJson(const tuner::DeviceInfo& device);
nlohmann::json SoftwareJson(const tuner::SoftwareInfo& software);
// A job as every document shows one: numbers as numbers, the state by its
// name ("done"), times in µs since the epoch (null when not yet), the spec
// as a JSON object. The same from a database (local sweeps) or a crestd.
nlohmann::json JobJson(const store::JobRecord& job);
nlohmann::json JobJson(const v1::Job& job);
// A crestd's progress event of a job: the job and this run's figures.
nlohmann::json JobEventJson(const v1::JobEvent& event);
// `fields` as a top-level document: "schema_version" first, then the fields;
// as JSON (DocumentJson), or as the text every --json prints (Document).
nlohmann::ordered_json DocumentJson(const nlohmann::json& fields);
nlohmann::ordered_json DocumentJson(const nlohmann::ordered_json& fields);
std::string Document(const nlohmann::json& fields);
std::string Document(const nlohmann::ordered_json& fields);

}  // namespace crest::cli
