// Internal to the crest CLI: the JSON form of the tuner's results. Every
// top-level document carries "schema_version" (kJsonSchemaVersion).
#pragma once

#include "crest/tuner/device_info.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "nlohmann/json.hpp"

namespace crest::cli {

inline constexpr int kJsonSchemaVersion = 1;

nlohmann::json GemmJson(const GemmShape& g);
nlohmann::json GpuJson(const GpuSpec& gpu);
nlohmann::json TileJson(const TileEstimate& e);
nlohmann::json PredictionJson(const GemmShape& g, const GpuSpec& gpu, const Prediction& p);
nlohmann::json DffRowJson(const DffRow& row);
nlohmann::json DeviceJson(const DeviceInfo& device);
nlohmann::json SoftwareJson(const SoftwareInfo& software);

}  // namespace crest::cli
