// The printers' output, byte for byte, against files under
// tests/data/golden/. A change of format shows up as a diff of those files:
// regenerate them with CREST_UPDATE_GOLDEN=1 and review the diff.
#include "printer.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "info_report.h"
#include "job_reports.h"

namespace crest::cli {
namespace {

std::string Golden(const std::string& name) {
  return std::string(CREST_TEST_DATA_DIR) + "/golden/" + name;
}

void ExpectGolden(const std::string& name, const std::string& actual) {
  const std::string path = Golden(name);
  if (std::getenv("CREST_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path << " is missing (CREST_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "differs from " << path;
}

std::string Print(Format format, const InfoReport& report) {
  std::ostringstream out;
  MakePrinter(format, out)->Print(report);
  return out.str();
}

InfoReport HereWithoutADevice() {
  InfoReport r;
  r.program = "crest";
  r.version = "0.1.0";
  r.predictor = "tilewave-2";
  r.backends = {{"model", true, false, "analytic predictor tilewave-2, predictions only"},
                {"cublaslt", false, true, "built without CUDA"}};
  r.device_error = "this crest was built without CUDA, so it cannot look for devices";
  return r;
}

InfoReport DaemonWithAnH100() {
  InfoReport r;
  r.program = "crestd";
  r.version = "0.1.0";
  r.server = "node7:7878";
  r.host = "node7";
  r.predictor = "tilewave-2";
  r.calibrations = {"tilewave-2+c1a2b3c4: bf16 from node7"};
  r.backends = {{"model", true, false, "analytic predictor"},
                {"cublaslt", true, true, "CUDA 13.0"}};
  tuner::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-0a1b";
  d.gpu_model = "H100-SXM";
  d.host = "node7";
  d.sm_count = 132;
  d.cc_major = 9;
  d.l2_bytes = int64_t{50} << 20;
  d.memory_bytes = int64_t{80} << 30;
  d.sm_clock_mhz = 1980;
  d.memory_clock_mhz = 2619;
  r.devices.push_back({std::nullopt, d, std::nullopt, int64_t{79} << 30});
  r.database = DatabaseEntry{"/var/lib/crestd/crest.db",  9, 1234567, 3300, 3298, 66, 1,
                             {{"done", 3}, {"failed", 1}}};
  return r;
}

TEST(InfoPrinter, TableForThisCrestWithoutADevice) {
  ExpectGolden("info_local.txt", Print(Format::kTable, HereWithoutADevice()));
}

TEST(InfoPrinter, JsonForThisCrestWithoutADevice) {
  ExpectGolden("info_local.json", Print(Format::kJson, HereWithoutADevice()));
}

TEST(InfoPrinter, TableForADaemonWithAnH100AndItsDatabase) {
  ExpectGolden("info_daemon.txt", Print(Format::kTable, DaemonWithAnH100()));
}

TEST(InfoPrinter, JsonForADaemonWithAnH100AndItsDatabase) {
  ExpectGolden("info_daemon.json", Print(Format::kJson, DaemonWithAnH100()));
}

TEST(InfoPrinter, EveryJsonDocumentStartsWithTheSchemaVersion) {
  for (const auto& report : {HereWithoutADevice(), DaemonWithAnH100()}) {
    EXPECT_EQ(Print(Format::kJson, report).rfind("{\n  \"schema_version\": 1,", 0), 0u);
  }
}

}  // namespace
}  // namespace crest::cli

namespace crest::cli {
namespace {

// A measuring sweep's summary says where the host time per GEMM went;
// the steps add up to the host overhead (100 ms/GEMM here) and the
// keep-load that ran beside them (150 ms/GEMM).
TEST(SweepPrinter, AMeasuringSweepBreaksItsHostTimeDownByStep) {
  SweepReport report;
  report.db = "crest.db";
  sweep::SweepReport& r = report.sweep;
  r.backend = "cublaslt";
  r.measures = true;
  sweep::SweepProgress& p = r.outcome.progress;
  p.new_results = 2;
  p.elapsed_s = 1.0;
  p.busy_s = 0.8;
  p.kernel_s = 0.8;
  p.host = {0.02, 0.04, 0.06, 0.08, 0.04};
  p.write_s = 0.1;
  p.keep_load_s = 0.3;
  p.reload_s = 0.02;
  r.device = tuner::DeviceInfo{};
  r.device->name = "NVIDIA H100 80GB HBM3";
  r.device->uuid = "GPU-1";
  r.software = tuner::SoftwareInfo{"580.159.04", 13000, 130100};
  std::ostringstream text;
  MakePrinter(Format::kTable, text)->Print(report);
  EXPECT_NE(text.str().find("measured on NVIDIA H100 80GB HBM3 GPU-1 (driver 580.159.04, CUDA "
                            "runtime 13000, cuBLASLt 130100), cold L2, sustained clocks"),
            std::string::npos)
      << "the measured figures name their device and software:\n"
      << text.str();
  EXPECT_NE(text.str().find("host ms/GEMM: operands 10.0, plan 20.0, graphs 30.0, verification "
                            "40.0, GPU readings 20.0, other engine 30.0, database write 50.0, "
                            "between GEMMs 50.0"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("device ms/GEMM keeping the load while the host works: 150.0, "
                            "reloading after idle gaps: 10.0 (untimed, counted busy)"),
            std::string::npos)
      << text.str();
  std::ostringstream json;
  MakePrinter(Format::kJson, json)->Print(report);
  const auto doc = nlohmann::json::parse(json.str());
  EXPECT_DOUBLE_EQ(doc["host_per_gemm"]["verify_s"].get<double>(), 0.04);
  EXPECT_DOUBLE_EQ(doc["host_per_gemm"]["between_s"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(doc["host_per_gemm"]["keep_load_s"].get<double>(), 0.15);
  EXPECT_DOUBLE_EQ(doc["host_per_gemm"]["readings_s"].get<double>(), 0.02);
  EXPECT_EQ(doc["device"]["uuid"], "GPU-1");
  EXPECT_EQ(doc["software"]["cublaslt"], 130100);
  EXPECT_DOUBLE_EQ(doc["host_per_gemm"]["reload_s"].get<double>(), 0.01);
}

// A sweep's races say whose answer they raced: text after the study, JSON
// in "algo".
TEST(SweepPrinter, ARaceOfTheFirstChoicesSaysSo) {
  SweepReport report;
  report.db = "crest.db";
  sweep::SweepReport& r = report.sweep;
  r.backend = "cublaslt";
  r.measures = true;
  sweep::StudyRaceReport& race = r.outcome.races.emplace_back();
  race.study = "dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused";
  race.algo = tuner::AlgoChoice::kDefault;
  race.why_not = "only the leader (d_ff 10944) lies within 3% of its time";
  std::ostringstream text;
  MakePrinter(Format::kTable, text)->Print(report);
  EXPECT_NE(text.str().find("race of dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused (cuBLASLt's "
                            "first-choice algorithms): not raced: only the leader"),
            std::string::npos)
      << text.str();
  std::ostringstream json;
  MakePrinter(Format::kJson, json)->Print(report);
  const auto doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc["races"][0]["algo"], "default");
  EXPECT_TRUE(doc["races"][0]["race_id"].is_null());
}

}  // namespace
}  // namespace crest::cli
