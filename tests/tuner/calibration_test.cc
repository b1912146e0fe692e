// Calibrations: the file format, the calibrations in force, and the fit,
// checked on data made from known parameters.
#include "crest/tuner/calibration.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <string_view>

#include "crest/tuner/calibration_fit.h"
#include "crest/tuner/predictor.h"
#include "gemm_testing.h"
#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

using crest::testing::Gemm;

// The SwiGLU MLP forward GEMMs of the h=4096 d_ff window, timed by `truth`
// with multiplicative noise.
std::vector<TimedGemm> MlpWindow(const GpuSpec& gpu, const ModelParams& truth, double noise,
                                 DType dtype = DType::kBf16) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> jitter(0, noise);
  std::vector<TimedGemm> rows;
  for (int64_t f = 10794; f <= 11050; ++f) {
    for (const GemmShape& g : {Gemm(8192, 2 * f, 4096, dtype), Gemm(8192, 4096, f, dtype)}) {
      rows.push_back({g, PredictWith(g, gpu, truth)->time_us * std::exp(jitter(rng))});
    }
  }
  return rows;
}

// Whether the fit moved `param` ("fallback_input.8", …) from its default.
bool Fitted(const Calibration& c, std::string_view param) {
  return std::find(c.fitted.begin(), c.fitted.end(), param) != c.fitted.end();
}

ModelParams Truth(const GpuSpec& gpu) {
  ModelParams t = gpu.model;
  t.fast_tflops = 700;
  t.fast_align = {0.96, 0.98, 1.0, 1.0};
  t.fallback_tflops = 290;
  t.fallback_input = {0.66, 0.91, 0.88};
  return t;
}

// The seed bmm case (batch 4, 4096×4096, fp16, NN: A contiguous along K,
// B along N) for K from `from` to `to` by `step`, timed exactly by Truth,
// and the fp16 calibration fitted to those rows.
struct SeedBmmFit {
  std::vector<TimedGemm> rows;
  absl::StatusOr<Calibration> calibration;
};
SeedBmmFit FitSeedBmm(const GpuSpec& gpu, int64_t from, int64_t to, int64_t step) {
  const ModelParams truth = Truth(gpu);
  SeedBmmFit fit;
  for (int64_t k = from; k <= to; k += step) {
    GemmShape g = Gemm(4096, 4096, k, DType::kFp16);
    g.batch = 4;
    g.b_transposed = false;
    fit.rows.push_back({g, PredictWith(g, gpu, truth)->time_us});
  }
  fit.calibration = FitCalibration(fit.rows, {&gpu, DType::kFp16, gpu.model, {}});
  return fit;
}

TEST(FitCalibration, RecoversTheRatesAndFactorsTheDataWereMadeWith) {
  const GpuSpec& h100 = **FindGpu("h100");
  const ModelParams truth = Truth(h100);
  const auto rows = MlpWindow(h100, truth, 0.02);
  auto c = FitCalibration(
      rows,
      {&h100, DType::kBf16, h100.model, {"imported", "script", "", "", "2026-11-22", "t.db", 0}});
  ASSERT_TRUE(c.ok()) << c.status();
  const ModelParams& p = c->params;
  EXPECT_NEAR(p.fast_tflops, 700, 0.02 * 700);
  EXPECT_NEAR(p.fallback_tflops, 290, 0.02 * 290);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(p.fallback_input[i], truth.fallback_input[i], 0.03);
  EXPECT_NEAR(p.fast_align[0], 0.96, 0.03);
  // One window: nothing to leave out, so the intervals are the in-sample
  // errors' 95th percentile, about the noise's: 2% · 1.96.
  EXPECT_EQ(c->interval.basis, "the fit's own rows (no d_ff window to leave out)");
  EXPECT_EQ(c->interval.windows, 0);
  EXPECT_NEAR(p.expected_error[3], 0.039, 0.012) << "nt.fast.128";
  EXPECT_LT(c->after.median_error, c->before.median_error);
  ASSERT_EQ(c->after.studies.size(), 1u);
  EXPECT_EQ(c->after.studies[0].candidates, 257);
  EXPECT_EQ(c->after.studies[0].hidden, 4096);
  EXPECT_GT(c->after.studies[0].spearman, 0.9);
  EXPECT_EQ(c->provenance.rows, 514);
  EXPECT_TRUE(c->id.starts_with("h100-sxm-bf16-20261122-")) << c->id;
  EXPECT_EQ(c->model_version, "tilewave-2+" + c->id);
}

// A second window (h=8192) whose GPU state ran `bias` slower than the
// first's: what a fit to one window cannot know about another.
std::vector<TimedGemm> TwoWindows(const GpuSpec& gpu, const ModelParams& truth, double bias) {
  std::vector<TimedGemm> rows = MlpWindow(gpu, truth, 0.01);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> jitter(0, 0.01);
  for (int64_t f = 21717; f <= 21973; ++f) {
    for (const GemmShape& g : {Gemm(8192, 2 * f, 8192), Gemm(8192, 8192, f)}) {
      rows.push_back({g, PredictWith(g, gpu, truth)->time_us * (1 + bias) * std::exp(jitter(rng))});
    }
  }
  return rows;
}

TEST(FitCalibration, IntervalsComeFromWindowsLeftOutOfTheFitAndCoverThem) {
  // In sample the fit splits the 6% between the windows (errors about 3%);
  // a window left out is off by the whole 6%, and so are the intervals.
  const GpuSpec& h100 = **FindGpu("h100");
  auto c =
      FitCalibration(TwoWindows(h100, Truth(h100), 0.06), {&h100, DType::kBf16, h100.model, {}});
  ASSERT_TRUE(c.ok()) << c.status();
  const IntervalFit& f = c->interval;
  EXPECT_EQ(f.basis, "held-out d_ff windows");
  EXPECT_EQ(f.windows, 2);
  EXPECT_EQ(f.gemms, 4 * 257);
  EXPECT_DOUBLE_EQ(f.quantile, kIntervalQuantile);
  for (size_t cls = 0; cls < kErrorKinds; ++cls) {  // the forward (NT) classes
    EXPECT_GE(c->params.expected_error[cls], 0.05) << kErrorClasses[cls];
    EXPECT_LE(c->params.expected_error[cls], 0.10) << kErrorClasses[cls];
  }
  EXPECT_EQ(f.candidates, 2 * 257);
  EXPECT_GE(f.coverage, 0.8);
  EXPECT_EQ(f.multiples_of_8, 2 * 32);
  EXPECT_GE(f.coverage_multiples_of_8, 0.8);
  // The backward classes had no rows: they keep the defaults' assumption.
  EXPECT_EQ(c->params.expected_error[5], h100.model.expected_error[5]);
  // In sample, the same intervals hold each window's MLP times.
  for (const StudyFit& s : c->after.studies) {
    EXPECT_GE(s.coverage, 0.9) << s.hidden;
    EXPECT_GE(s.coverage_multiples_of_8, 0.9) << s.hidden;
  }
}

TEST(FitCalibration, AStudyIsTheWindowNotTheModelsOtherMlps) {
  // A model sweep beside the window holds the same model's tensor-parallel
  // MLP shards (f/t, same tokens and hidden size): they are far from the
  // window and must not join it (a shard's smaller GEMMs would be its "best").
  const GpuSpec& h100 = **FindGpu("h100");
  const ModelParams truth = Truth(h100);
  auto rows = MlpWindow(h100, truth, 0.02);
  for (const int64_t f : {11008 / 2, 11008 / 4, 11008 / 8, 14336 / 8}) {
    for (const GemmShape& g : {Gemm(8192, 2 * f, 4096), Gemm(8192, 4096, f)}) {
      rows.push_back({g, PredictWith(g, h100, truth)->time_us});
    }
  }
  const FitMetrics m = Evaluate(rows, h100, truth);
  ASSERT_EQ(m.studies.size(), 1u);
  EXPECT_EQ(m.studies[0].candidates, 257);
  EXPECT_GE(m.studies[0].measured_best, 10794);
}

TEST(FitCalibration, KeepsWhatTheRowsCannotSeparate) {
  // Only one input misaligned, always at 8 B, and no fallback row with
  // aligned inputs: the fallback rate and the 8-byte factor are one number.
  const GpuSpec& h100 = **FindGpu("h100");
  const SeedBmmFit fit = FitSeedBmm(h100, 10820, 11020, 4);
  const absl::StatusOr<Calibration>& c = fit.calibration;
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(Fitted(*c, "fallback_tflops"));
  EXPECT_FALSE(Fitted(*c, "fallback_input.8"));
  EXPECT_DOUBLE_EQ(c->params.fallback_input[2], h100.model.fallback_input[2]) << "moved";
  // The rate absorbs it: the misaligned rows are still predicted right.
  EXPECT_NEAR(c->params.fallback_tflops * c->params.fallback_input[2], 290 * 0.88, 3);
  EXPECT_LT(c->after.median_error, 0.01);
}

TEST(FitCalibration, FitsEachMisalignedClassAgainstTheWidestOne) {
  // The seed bmm over every K: one input misaligned at 2 (odd K), 4 or 8 B,
  // never both aligned. The 8-byte factor stays; the rate takes its
  // correction and the 2- and 4-byte factors are fitted against it, so every
  // class is predicted right (one rate for three classes was not).
  const GpuSpec& h100 = **FindGpu("h100");
  const SeedBmmFit fit = FitSeedBmm(h100, 10822, 11022, 1);
  const absl::StatusOr<Calibration>& c = fit.calibration;
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(Fitted(*c, "fallback_input.2"));
  EXPECT_TRUE(Fitted(*c, "fallback_input.4"));
  EXPECT_FALSE(Fitted(*c, "fallback_input.8"));
  const ModelParams& p = c->params;
  EXPECT_NEAR(p.fallback_input[0] / p.fallback_input[2], 0.66 / 0.88, 0.02);
  double worst = 0;
  for (const TimedGemm& row : fit.rows) {
    worst = std::max(worst, std::abs(PredictWith(row.gemm, h100, p)->time_us / row.time_us - 1));
  }
  EXPECT_LT(worst, 0.03) << "every class predicted within 3%";
}

TEST(FitCalibration, RefusesTooFewUsableRowsSayingWhy) {
  const GpuSpec& h100 = **FindGpu("h100");
  const std::vector<TimedGemm> rows = {{Gemm(1, 16384, 16384), 200},
                                       {Gemm(64, 64, 64), 5},
                                       {Gemm(8192, 8192, 8192, DType::kFp16), 2000}};
  auto c = FitCalibration(rows, {&h100, DType::kBf16, h100.model, {}});
  ASSERT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c.status().message(),
            "calibrate: 0 usable bf16 GEMMs on H100-SXM; at least 8 are needed (left out: 1 "
            "memory-bound, 1 too short against the launch cost, 1 of other dtypes)");
}

// A rate pattern by K mod 128 like the H100's (a V over the period, a bump
// near 64) for the residues a factor applies to.
ModelParams WithResiduePattern(ModelParams t) {
  for (int r = 0; r < kKResiduePeriod; ++r) {
    if (r % 8 == 0) continue;
    const double v = std::abs(r - 64) / 64.0;  // 1 at the ends, 0 in the middle
    t.fallback_k_residue[static_cast<size_t>(r)] = 0.92 + 0.08 * v + (r % 32 == 31 ? 0.1 : 0);
  }
  return t;
}

TEST(FitCalibration, FitsTheRateByKResidueWhereItReplicates) {
  const GpuSpec& h100 = **FindGpu("h100");
  const ModelParams truth = WithResiduePattern(Truth(h100));
  auto c = FitCalibration(MlpWindow(h100, truth, 0.005), {&h100, DType::kBf16, h100.model, {}});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->k_residue.size(), 3u) << "classes 2, 4 and 8 B";
  for (const KResidueFit& k : c->k_residue) {
    EXPECT_TRUE(k.fitted) << k.class_bytes;
    EXPECT_GE(k.agreement, 0.9) << k.class_bytes;
    EXPECT_TRUE(Fitted(*c, "fallback_k_residue." + std::to_string(k.class_bytes)));
  }
  // Every down projection of the window predicted within 2% of the truth:
  // without the factors the pattern's ±9% would remain.
  for (int64_t f = 10794; f <= 11050; ++f) {
    const double want = PredictWith(Gemm(8192, 4096, f), h100, truth)->time_us;
    EXPECT_NEAR(PredictWith(Gemm(8192, 4096, f), h100, c->params)->time_us / want, 1.0, 0.02) << f;
  }
  EXPECT_GE(c->after.studies[0].spearman, 0.98);
}

TEST(FitCalibration, KeepsKResidueFactorsThatDoNotReplicate) {
  const GpuSpec& h100 = **FindGpu("h100");
  // No pattern by residue, only 3% noise per GEMM: the halves disagree.
  auto c =
      FitCalibration(MlpWindow(h100, Truth(h100), 0.03), {&h100, DType::kBf16, h100.model, {}});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->k_residue.size(), 3u);
  for (const KResidueFit& k : c->k_residue) {
    EXPECT_FALSE(k.fitted) << k.class_bytes << " agreement " << k.agreement;
    EXPECT_LT(k.agreement, 0.6) << k.class_bytes;
    EXPECT_FALSE(Fitted(*c, "fallback_k_residue." + std::to_string(k.class_bytes)));
  }
  EXPECT_EQ(c->params.fallback_k_residue, OnesByResidue());
}

TEST(CalibrationFile, KResidueFactorsRoundTripAndAnOlderFileKeepsItsId) {
  const GpuSpec& h100 = **FindGpu("h100");
  auto c = FitCalibration(MlpWindow(h100, WithResiduePattern(Truth(h100)), 0.005),
                          {&h100, DType::kBf16, h100.model, {}});
  ASSERT_TRUE(c.ok());
  auto back = ParseCalibration(CalibrationJson(*c), "round trip");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->params.fallback_k_residue, c->params.fallback_k_residue);
  EXPECT_EQ(back->id, c->id);
  ASSERT_EQ(back->k_residue.size(), 3u);
  EXPECT_DOUBLE_EQ(back->k_residue[0].agreement, c->k_residue[0].agreement);

  // A schema 1 file (no fallback_k_residue) reads with every factor 1 and
  // the id it was written with: the new field does not rename it.
  Calibration flat = *c;
  flat.params.fallback_k_residue = OnesByResidue();
  NameCalibration(flat);
  EXPECT_NE(flat.id, c->id);
  {
    std::string text = CalibrationJson(flat);
    const size_t at = text.find("\"fallback_k_residue\"");
    ASSERT_NE(at, std::string::npos);
    text.erase(at, text.find('}', at) + 2 - at);  // the object and its comma
    const size_t version = text.find("\"schema_version\": 3");
    ASSERT_NE(version, std::string::npos);
    text.replace(version, 19, "\"schema_version\": 1");
    auto old = ParseCalibration(text, "schema 1");
    ASSERT_TRUE(old.ok()) << old.status() << "\n" << text;
    EXPECT_EQ(old->params.fallback_k_residue, OnesByResidue());
    EXPECT_EQ(old->id, flat.id);
  }
}

TEST(CalibrationFile, RoundTripsEveryField) {
  const GpuSpec& h100 = **FindGpu("h100");
  auto c =
      FitCalibration(MlpWindow(h100, Truth(h100), 0.01),
                     {&h100,
                      DType::kBf16,
                      h100.model,
                      {"imported", "torch", "NVIDIA H100 80GB HBM3", "", "2026-11-22", "x.db", 0}});
  ASSERT_TRUE(c.ok());
  auto back = ParseCalibration(CalibrationJson(*c), "round trip");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->id, c->id);
  EXPECT_EQ(back->model_version, c->model_version);
  EXPECT_EQ(back->fitted, c->fitted);
  EXPECT_DOUBLE_EQ(back->params.fast_tflops, c->params.fast_tflops);
  EXPECT_DOUBLE_EQ(back->params.fallback_input[1], c->params.fallback_input[1]);
  EXPECT_DOUBLE_EQ(back->params.expected_error[0], c->params.expected_error[0]);
  EXPECT_EQ(back->provenance.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back->after.studies.size(), 1u);
  EXPECT_DOUBLE_EQ(back->after.studies[0].best_gap, c->after.studies[0].best_gap);
  EXPECT_DOUBLE_EQ(back->after.studies[0].coverage, c->after.studies[0].coverage);
  EXPECT_EQ(back->params.expected_error, c->params.expected_error);
  EXPECT_EQ(back->interval.basis, c->interval.basis);
  EXPECT_EQ(back->interval.quantile, c->interval.quantile);
}

TEST(CalibrationFile, AnOlderFilesTwoErrorsReadForEveryClassOfTheirFamily) {
  const GpuSpec& h100 = **FindGpu("h100");
  auto c =
      FitCalibration(MlpWindow(h100, Truth(h100), 0.01), {&h100, DType::kBf16, h100.model, {}});
  ASSERT_TRUE(c.ok());
  std::string text = CalibrationJson(*c);
  const size_t at = text.find("\"expected_error\": {");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, text.find('}', at) + 1 - at,
               R"("expected_error": {"fast": 0.02, "fallback": 0.03})");
  text.replace(text.find("\"schema_version\": 3"), 19, "\"schema_version\": 2");
  auto old = ParseCalibration(text, "schema 2");
  ASSERT_TRUE(old.ok()) << old.status();
  for (size_t i = 0; i < kErrorClasses.size(); ++i) {
    EXPECT_EQ(old->params.expected_error[i], IsFallbackClass(i) ? 0.03 : 0.02) << kErrorClasses[i];
  }
  EXPECT_EQ(DescribeErrors(old->params), "+/-2.0% (fast kernels), +/-3.0% (fallback)");
  // Written again, it keeps the id it had (its errors hash as it wrote them).
  auto again = ParseCalibration(CalibrationJson(*old), "schema 3");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, old->id);
  EXPECT_NE(CalibrationJson(*old).find("\"nt.fast.16\": 0.02"), std::string::npos);
}

TEST(CalibrationFile, ABadFileNamesItselfAndTheField) {
  const auto message = [](const std::string& text) {
    return std::string(ParseCalibration(text, "cal.json").status().message());
  };
  EXPECT_EQ(message("not json"), "cal.json: not valid JSON");
  EXPECT_EQ(message(R"({"schema_version": 9})"),
            "cal.json: calibration schema_version 9 (this crest reads 3)");
  EXPECT_EQ(message(R"({"schema_version": 1, "model": "tilewave-1"})"),
            "cal.json: a calibration of model 'tilewave-1'; this crest runs tilewave-2");
  EXPECT_NE(
      message(R"({"schema_version": 1, "model": "tilewave-2", "gpu": "tpu", "dtype": "bf16"})")
          .find("unknown GPU 'tpu'"),
      std::string::npos);
  EXPECT_EQ(message(R"({"schema_version": 1, "model": "tilewave-2", "gpu": "h100",
                        "dtype": "bf16", "parameters": {"fast_tflops": 700}})"),
            "cal.json: parameters.fast_full_rate_intensity: must be a number");
  const GpuSpec& h100 = **FindGpu("h100");
  Calibration c;
  c.gpu = "H100-SXM";
  c.params = ExplicitRates(h100.model, h100, DType::kBf16);
  std::string text = CalibrationJson(c);
  const size_t at = text.find("\"fallback_k_residue\": {");
  ASSERT_NE(at, std::string::npos);
  const auto with_residues = [&](const std::string& object) {
    std::string t = text;
    return t.replace(at, t.find('}', at) + 1 - at, "\"fallback_k_residue\": " + object);
  };
  EXPECT_EQ(message(with_residues(R"({"64": 1.0})")),
            "cal.json: parameters.fallback_k_residue: key \"64\" is not a residue 1..127 that is "
            "not a multiple of 8");
  EXPECT_EQ(message(with_residues(R"([1, 2])")),
            "cal.json: parameters.fallback_k_residue: must be an object by K mod 128");
  const std::string bad_value = with_residues(R"({"3": -1})");
  EXPECT_EQ(message(bad_value),
            "cal.json: parameters.fallback_k_residue.3: must be a positive number");
  std::string errors = text;
  const size_t e = errors.find("\"nt.fast.64\": ");
  ASSERT_NE(e, std::string::npos);
  errors.replace(e, errors.find(',', e) - e, "\"nt.fast.64\": 1.5");
  EXPECT_EQ(message(errors), "cal.json: parameters.expected_error.nt.fast.64: must lie in [0, 1)");
}

TEST(Calibrations, TheShippedH100OnesAreInForceAndMeetTheirTargets) {
  const GpuSpec& h100 = **FindGpu("h100");
  for (DType d : {DType::kBf16, DType::kFp16}) {
    const auto c = ActiveCalibration("H100-SXM", d);
    ASSERT_NE(c, nullptr) << DTypeName(d);
    // Fitted to Crest's own sustained-clock measurements (bench/results/h100/).
    EXPECT_EQ(c->provenance.source, "measured");
    EXPECT_LE(c->after.median_error, 0.10) << DTypeName(d);
    auto p = Predict(Gemm(8192, 4096, 11008, d), h100);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->model_version, c->model_version);
    EXPECT_NE(std::string(p->calibration).find("calibrated for"), std::string::npos);
  }
  const auto bf16 = ActiveCalibration("H100-SXM", DType::kBf16);
  ASSERT_EQ(bf16->after.studies.size(), 2u) << "the h=4096 and h=8192 d_ff windows";
  for (const StudyFit& s : bf16->after.studies) EXPECT_GE(s.spearman, 0.85) << s.hidden;
  EXPECT_EQ(ActiveCalibration("H100-SXM", DType::kFp8E4M3), nullptr) << "fp8 runs on defaults";
  EXPECT_EQ(ModelVersionFor(h100, DType::kFp8E4M3), kPredictorVersion);
  EXPECT_NE(CalibrationState(h100).find("calibrated (bf16, fp16)"), std::string::npos)
      << CalibrationState(h100);
  EXPECT_EQ(CalibrationState(**FindGpu("a100")), "uncalibrated Ampere defaults");
}

TEST(Calibrations, ALoadedFileReplacesTheOneForItsGpuAndDtypeOnly) {
  // L40S fp8: a GPU and dtype no other test predicts.
  const GpuSpec& l40s = **FindGpu("l40s");
  auto fit = FitCalibration(
      MlpWindow(l40s, Truth(l40s), 0.01, DType::kFp8E4M3),
      {&l40s, DType::kFp8E4M3, l40s.model, {"imported", "t", "", "", "2026-11-22", "", 0}});
  ASSERT_TRUE(fit.ok()) << fit.status();
  const std::string path = ::testing::TempDir() + "/l40s-fp8.json";
  std::ofstream(path) << CalibrationJson(*fit);
  EXPECT_EQ(ActiveCalibration("L40S", DType::kFp8E4M3), nullptr);
  ASSERT_TRUE(LoadCalibrationFile(path).ok());
  auto p = Predict(Gemm(8192, 8192, 8192, DType::kFp8E4M3), l40s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->model_version, fit->model_version);
  EXPECT_NEAR(p->family_tflops, fit->params.fast_tflops, 1e-9);
  EXPECT_EQ(Predict(Gemm(8192, 8192, 8192, DType::kBf16), l40s)->model_version, kPredictorVersion);
  EXPECT_EQ(LoadCalibrationFile(::testing::TempDir() + "/missing.json").code(),
            absl::StatusCode::kNotFound);
}

TEST(Spearman, RanksWithTies) {
  const std::vector<double> x = {1, 2, 3, 4};
  const std::vector<double> reversed = {4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(SpearmanCorrelation(x, x), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation(x, reversed), -1.0);
  const std::vector<double> tied = {1, 1, 2, 2};
  EXPECT_NEAR(SpearmanCorrelation(x, tied), 0.894427, 1e-6);
  EXPECT_EQ(SpearmanCorrelation(std::vector<double>{1}, std::vector<double>{1}), 0);
}

}  // namespace
}  // namespace crest::tuner
