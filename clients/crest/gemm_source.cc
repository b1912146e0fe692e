#include "gemm_source.h"

#include "crest/answers/store_answers.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/predictor.h"
#include "crest/wire/convert.h"
#include "read_only_db.h"
#include "remote.h"

namespace crest::cli {
namespace {

// A store's or a crestd's answer as one GEMM's Timing.
absl::StatusOr<Timing> TimingOf(const answers::GemmAnswer& a, const GemmShape& g) {
  Timing t;
  if (a.measured) {
    const auto& m = *a.measured;
    t.time_us = m.result.stats.median_us;
    t.low_us = m.result.stats.ci_low_us > 0 ? m.result.stats.ci_low_us : t.time_us;
    t.high_us = m.result.stats.ci_high_us > 0 ? m.result.stats.ci_high_us : t.time_us;
    t.source = Source::kMeasured;
    t.device = m.device;
    t.software = m.software;
    t.provenance = StrCat(answers::DescribeProvenance(m.device, m.software), "; ",
                          CacheModeName(m.mode.cache), " L2, ", ClockPolicyName(m.mode.clocks),
                          " clocks");
    return t;
  }
  if (a.predicted) {
    const auto& p = *a.predicted;
    t.time_us = p.time_us;
    t.low_us = p.time_us * (1 - p.expected_error / 2);
    t.high_us = p.time_us * (1 + p.expected_error / 2);
    t.source = Source::kPredicted;
    t.provenance = p.model_version;
    return t;
  }
  return absl::NotFoundError(StrCat("nothing answers ", g.name, " (", DTypeName(g.dtype),
                                    " M=", g.m, " N=", g.n, " K=", g.k, ")"));
}

class ModelSource final : public GemmSource {
 public:
  ModelSource(const GpuSpec& gpu, DType dtype)
      : gpu_(gpu), dtype_(dtype), timer_(PredictorTimer(gpu)) {}
  std::string Describe() const override {
    return StrCat("predicted by ", DescribeModel(gpu_, dtype_), "; not measured");
  }

 protected:
  absl::StatusOr<Timing> Answer(const GemmShape& g) override {
    auto t = timer_(g);
    if (!t.ok()) return absl::NotFoundError(t.status().message());
    return t;
  }

 private:
  const GpuSpec& gpu_;
  DType dtype_;
  GemmTimer timer_;
};

class DbSource final : public GemmSource {
 public:
  DbSource(std::string path, ReadOnlyDb db, const GpuSpec& gpu, MeasureMode mode)
      : path_(std::move(path)), db_(std::move(db)), gpu_(gpu), mode_(mode) {}
  std::string Describe() const override { return path_; }

 protected:
  absl::StatusOr<Timing> Answer(const GemmShape& g) override {
    auto a = answers::LookupGemm(g, gpu_, *db_.db, db_.pin, mode_);
    if (!a.ok()) return a.status();
    return TimingOf(*a, g);
  }

 private:
  std::string path_;
  ReadOnlyDb db_;
  const GpuSpec& gpu_;
  MeasureMode mode_;
};

class DaemonSource final : public GemmSource {
 public:
  DaemonSource(DaemonChannel channel, const GpuSpec& gpu, const AnswerFlags& flags)
      : channel_(std::move(channel)), gpu_(gpu), flags_(flags) {}
  std::string Describe() const override { return StrCat("crestd at ", channel_.server()); }

 protected:
  absl::StatusOr<Timing> Answer(const GemmShape& g) override {
    v1::LookupGemmRequest request;
    wire::Fill(g, request.mutable_gemm());
    request.set_gpu(std::string(gpu_.name));
    request.mutable_pin()->set_cublaslt(flags_.cublaslt);
    wire::Fill(ToMode(flags_.mode), request.mutable_mode());
    v1::LookupGemmResponse response;
    if (auto s = CallUnary(channel_, &v1::Crest::Stub::LookupGemm, request, &response); !s.ok()) {
      return s;
    }
    return TimingOf(wire::AnswerOf(response, g, std::string(gpu_.name)), g);
  }

 private:
  DaemonChannel channel_;
  const GpuSpec& gpu_;
  AnswerFlags flags_;
};

}  // namespace

void AddAnswerFlags(CLI::App& app, AnswerFlags& flags) {
  app.add_option("--db", flags.db,
                 "answer from this database: measured where it has measurements, else predicted "
                 "(default: this build's model; --server asks a crestd)");
  app.add_option("--cublaslt", flags.cublaslt,
                 "only measurements with this cuBLASLt version (e.g. 130100); default: newest");
  AddModeFlags(app, flags.mode);
}

std::string CountKinds(const std::vector<Source>& sources) {
  std::map<int, std::pair<Source, int>> by_order;
  for (Source s : sources) {
    auto& [source, n] = by_order[KindOrder(s)];
    source = s;
    ++n;
  }
  std::string out;
  for (const auto& [order, count] : by_order) {
    out += StrCat(out.empty() ? "" : ", ", count.second, " ", SourceName(count.first));
  }
  return out;
}

absl::StatusOr<Timing> GemmSource::Time(const GemmShape& gemm) {
  const store::GemmKey key = store::GemmKey::Of(gemm);
  if (auto it = answered_.find(key); it != answered_.end()) return it->second;
  auto t = Answer(gemm);
  if (!t.ok()) return t.status();
  return answered_.emplace(key, *std::move(t)).first->second;
}

absl::StatusOr<std::unique_ptr<GemmSource>> OpenGemmSource(const AnswerFlags& flags,
                                                           const GpuSpec& gpu, DType dtype) {
  if (!Remote().server.empty()) {
    if (!flags.db.empty()) return absl::InvalidArgumentError("db: give --db or --server, not both");
    auto channel = DaemonChannel::Open(Remote());
    if (!channel.ok()) return channel.status();
    return std::make_unique<DaemonSource>(*std::move(channel), gpu, flags);
  }
  if (flags.db.empty()) {
    if (flags.cublaslt != 0) {
      return absl::InvalidArgumentError("cublaslt: --cublaslt is for --db or --server");
    }
    return std::make_unique<ModelSource>(gpu, dtype);
  }
  auto db = OpenForReading(flags.db, flags.cublaslt);
  if (!db.ok()) return db.status();
  return std::make_unique<DbSource>(flags.db, *std::move(db), gpu, ToMode(flags.mode));
}

}  // namespace crest::cli
