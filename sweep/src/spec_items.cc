#include "spec_items.h"

#include <map>
#include <string_view>

#include "crest/tuner/candidates.h"
#include "crest/tuner/limits.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/shapes.h"

namespace crest::sweep::internal {
namespace {

using nlohmann::json;

// An item's pass ("fwd" or "train"), fuse_gate_up and dtype.
struct PassFields {
  std::string pass;
  tuner::ShapeOptions options;
  tuner::DType dtype = tuner::DType::kBf16;
};

absl::StatusOr<PassFields> ReadPass(const json& item, const std::string& path,
                                    tuner::DType default_dtype) {
  PassFields out;
  auto pass = Text(item, "pass", path, "fwd");
  if (!pass.ok()) return pass.status();
  if (*pass != "fwd" && *pass != "train") return Bad(path + ".pass", "must be fwd or train");
  auto fuse = Flag(item, "fuse_gate_up", path, true);
  if (!fuse.ok()) return fuse.status();
  auto dtype_text = Text(item, "dtype", path, std::string(tuner::DTypeName(default_dtype)));
  if (!dtype_text.ok()) return dtype_text.status();
  auto dtype = tuner::ParseDType(*dtype_text);
  if (!dtype.ok()) return Bad(path, std::string(dtype.status().message()));
  out.pass = *pass;
  out.options.include_backward = *pass == "train";
  out.options.fuse_gate_up = *fuse;
  out.dtype = *dtype;
  return out;
}

using ModelDims = std::map<std::string_view, std::vector<int64_t>>;
constexpr std::string_view kModelDims[] = {"hidden", "heads", "kv_heads", "d_ff",
                                           "vocab",  "seq",   "batch",    "tp"};
// Each dimension's largest value (limits.h), in kModelDims' order.
constexpr int64_t kModelDimMax[] = {tuner::kMaxHidden,     tuner::kMaxHeads, tuner::kMaxHeads,
                                    tuner::kMaxDff,        tuner::kMaxVocab, tuner::kMaxSeq,
                                    tuner::kMaxMicroBatch, tuner::kMaxTp};

// Each dimension's values (kv_heads defaults to 0 = heads, batch and tp to
// 1; the others are required) and vocab_pad's ({0}: the vocab as given).
absl::StatusOr<ModelDims> ReadModelDims(const json& item, const std::string& path) {
  ModelDims dims;
  for (size_t d = 0; d < std::size(kModelDims); ++d) {
    const std::string_view dim = kModelDims[d];
    const std::string key(dim);
    if (!item.contains(key)) {
      if (dim == "kv_heads") {
        dims[dim] = {0};
      } else if (dim == "batch" || dim == "tp") {
        dims[dim] = {1};
      } else {
        return Bad(path, StrCat(key, " is required"));
      }
      continue;
    }
    auto values = Values(item[key], StrCat(path, ".", key), kModelDimMax[d]);
    if (!values.ok()) return values.status();
    dims[dim] = *values;
  }
  dims["vocab_pad"] = {0};
  if (item.contains("vocab_pad")) {
    auto values = Values(item["vocab_pad"], path + ".vocab_pad", tuner::kMaxVocab);
    if (!values.ok()) return values.status();
    dims["vocab_pad"] = *values;
  }
  return dims;
}

// The configuration at one position of the odometer over `dims`.
tuner::ModelConfig ConfigAt(const ModelDims& dims, const std::vector<size_t>& index,
                            tuner::DType dtype) {
  tuner::ModelConfig c;
  int64_t* fields[] = {&c.hidden, &c.heads, &c.kv_heads,    &c.d_ff,
                       &c.vocab,  &c.seq,   &c.micro_batch, &c.tp};
  for (size_t d = 0; d < std::size(kModelDims); ++d) {
    *fields[d] = dims.at(kModelDims[d])[index[d]];
  }
  c.dtype = dtype;
  const int64_t pad = dims.at("vocab_pad")[index.back()];
  if (pad > 0 && c.tp > 0 && c.vocab > 0) {
    c.vocab = (c.vocab + pad * c.tp - 1) / (pad * c.tp) * pad * c.tp;
  }
  return c;
}

// Advances the odometer; false once every position has been visited.
bool Advance(const ModelDims& dims, std::vector<size_t>& index) {
  for (size_t d = 0; d < index.size(); ++d) {
    const std::string_view dim = d < std::size(kModelDims) ? kModelDims[d] : "vocab_pad";
    if (++index[d] < dims.at(dim).size()) return true;
    index[d] = 0;
  }
  return false;
}

}  // namespace

absl::Status Plan::Add(const tuner::GemmShape& g, const std::string& path) {
  if (auto s = tuner::ValidateGemmSizes(g.m, g.n, g.k, g.batch); !s.ok()) {
    return Bad(path, std::string(s.message()));
  }
  if (seen_.insert(store::GemmKey::Of(g)).second) gemms_.push_back(g);
  if (gemms_.size() > static_cast<size_t>(limit_.max_gemms)) {
    return Bad(path, StrCat("the plan exceeds ", Limit(), "; split the spec"));
  }
  return absl::OkStatus();
}

absl::Status ExpandDff(const json& item, const std::string& path, tuner::DType default_dtype,
                       Plan& plan, json& canonical, std::vector<tuner::DffQuery>& studies) {
  if (auto s = OnlyKnownFields(
          item, path,
          {"hidden", "ratio", "window", "align", "tokens", "tp", "pass", "fuse_gate_up", "dtype"});
      !s.ok()) {
    return s;
  }
  if (!item.contains("hidden")) return Bad(path, "hidden is required");
  auto hidden = Bounded(item["hidden"], path + ".hidden", tuner::kMaxHidden);
  if (!hidden.ok()) return hidden.status();
  auto ratio_text = Text(item, "ratio", path, std::string(tuner::kDefaultRatio));
  if (!ratio_text.ok()) return ratio_text.status();
  auto ratio = tuner::ParseRatio(*ratio_text);
  if (!ratio.ok()) return Bad(path, std::string(ratio.status().message()));
  const auto int_or = [&](const char* key, int64_t fallback,
                          int64_t max) -> absl::StatusOr<int64_t> {
    return item.contains(key) ? Bounded(item[key], StrCat(path, ".", key), max) : fallback;
  };
  auto window = int_or("window", tuner::kDefaultWindow, tuner::kMaxDffWindow);
  auto align = int_or("align", tuner::kDefaultAlign, tuner::kMaxDff);
  auto tokens = int_or("tokens", tuner::kDefaultTokens, tuner::kMaxTokens);
  auto tp = int_or("tp", tuner::kDefaultTp, tuner::kMaxTp);
  for (auto* v : {&window, &align, &tokens, &tp}) {
    if (!v->ok()) return v->status();
  }
  auto pass = ReadPass(item, path, default_dtype);
  if (!pass.ok()) return pass.status();

  auto candidates = tuner::GenerateDffCandidates({*hidden, *ratio, *window, *align, *tp});
  if (!candidates.ok()) return Bad(path, std::string(candidates.status().message()));
  for (int64_t d_ff : candidates->values) {
    auto gemms = tuner::MlpGemms(*tokens, *hidden, d_ff, *tp, pass->dtype, pass->options);
    if (!gemms.ok()) return Bad(path, std::string(gemms.status().message()));
    for (const auto& g : *gemms) {
      if (auto s = plan.Add(g, path); !s.ok()) return s;
    }
  }
  tuner::DffQuery study;
  study.dff = {*hidden, *ratio, *window, *align, *tp};
  study.tokens = *tokens;
  study.dtype = pass->dtype;
  study.train = pass->options.include_backward;
  study.fuse_gate_up = pass->options.fuse_gate_up;
  studies.push_back(std::move(study));
  canonical = {{"hidden", *hidden},
               {"ratio", ratio->text},
               {"window", *window},
               {"align", *align},
               {"tokens", *tokens},
               {"tp", *tp},
               {"pass", pass->pass},
               {"fuse_gate_up", pass->options.fuse_gate_up},
               {"dtype", tuner::DTypeName(pass->dtype)}};
  return absl::OkStatus();
}

absl::Status ExpandModel(const json& item, const std::string& path, tuner::DType default_dtype,
                         Plan& plan, std::vector<std::string>& notes, json& canonical) {
  if (auto s = OnlyKnownFields(item, path,
                               {"name", "hidden", "heads", "kv_heads", "d_ff", "vocab", "seq",
                                "batch", "tp", "pass", "fuse_gate_up", "dtype", "vocab_pad"});
      !s.ok()) {
    return s;
  }
  auto dims = ReadModelDims(item, path);
  if (!dims.ok()) return dims.status();
  auto name = Name(item, path, "");
  if (!name.ok()) return name.status();
  auto pass = ReadPass(item, path, default_dtype);
  if (!pass.ok()) return pass.status();

  double combinations = 1;
  for (const auto& [dim, values] : *dims) combinations *= static_cast<double>(values.size());
  if (combinations > static_cast<double>(tuner::kMaxCandidates)) {
    return Bad(path,
               StrCat("expands to more than ", tuner::kMaxCandidates, " model configurations"));
  }
  std::vector<size_t> index(std::size(kModelDims) + 1, 0);
  int64_t skipped = 0;
  std::string first_reason;
  do {
    auto gemms = tuner::TransformerGemms(ConfigAt(*dims, index, pass->dtype), pass->options);
    if (!gemms.ok()) {
      if (skipped++ == 0) first_reason = std::string(gemms.status().message());
      continue;
    }
    for (const auto& g : *gemms) {
      if (auto s = plan.Add(g, path); !s.ok()) return s;
    }
  } while (Advance(*dims, index));
  if (skipped > 0) {
    notes.push_back(StrCat(path, ": skipped ", skipped, " of ", static_cast<int64_t>(combinations),
                           " configurations that break a rule (first: ", first_reason, ")"));
    if (static_cast<double>(skipped) == combinations) {
      return Bad(path, StrCat("no valid configuration (", first_reason, ")"));
    }
  }
  canonical = item;
  canonical["pass"] = pass->pass;
  canonical["fuse_gate_up"] = pass->options.fuse_gate_up;
  canonical["dtype"] = tuner::DTypeName(pass->dtype);
  return absl::OkStatus();
}

absl::Status ExpandGemm(const json& item, const std::string& path, tuner::DType default_dtype,
                        Plan& plan, json& canonical) {
  if (auto s = OnlyKnownFields(item, path, {"name", "m", "n", "k", "batch", "layout", "dtype"});
      !s.ok()) {
    return s;
  }
  std::vector<int64_t> m, n, k, batch = {1};
  for (auto [key, out] :
       {std::pair{"m", &m}, std::pair{"n", &n}, std::pair{"k", &k}, std::pair{"batch", &batch}}) {
    if (!item.contains(key)) {
      if (std::string_view(key) == "batch") continue;
      return Bad(path, StrCat(key, " is required"));
    }
    const bool is_batch = std::string_view(key) == "batch";
    auto values = Values(item[key], StrCat(path, ".", key),
                         is_batch ? tuner::kMaxGemmBatch : tuner::kMaxGemmDim);
    if (!values.ok()) return values.status();
    *out = *values;
  }
  auto layout = Text(item, "layout", path, "NT");
  if (!layout.ok()) return layout.status();
  tuner::GemmShape g;
  if (!tuner::ParseLayout(*layout, &g.a_transposed, &g.b_transposed)) {
    return Bad(path + ".layout", "must be NT, NN, TN or TT");
  }
  auto dtype_text = Text(item, "dtype", path, std::string(tuner::DTypeName(default_dtype)));
  if (!dtype_text.ok()) return dtype_text.status();
  auto dtype = tuner::ParseDType(*dtype_text);
  if (!dtype.ok()) return Bad(path, std::string(dtype.status().message()));
  auto name = Name(item, path, "gemm");
  if (!name.ok()) return name.status();
  g.dtype = *dtype;
  g.name = *name;
  // Counted before any is made, stopping once past the limit (no overflow).
  int64_t count = 1;
  for (size_t values : {m.size(), n.size(), k.size(), batch.size()}) {
    const auto factor = static_cast<int64_t>(values);
    count = count > plan.max_gemms() / factor ? plan.max_gemms() + 1 : count * factor;
  }
  if (count > plan.max_gemms()) {
    return Bad(path, StrCat("expands to more than ", plan.Limit()));
  }
  for (int64_t b : batch) {
    for (int64_t mm : m) {
      for (int64_t nn : n) {
        for (int64_t kk : k) {
          g.batch = b;
          g.m = mm;
          g.n = nn;
          g.k = kk;
          if (auto s = plan.Add(g, path); !s.ok()) return s;
        }
      }
    }
  }
  canonical = item;
  canonical["layout"] = *layout;
  canonical["dtype"] = tuner::DTypeName(*dtype);
  return absl::OkStatus();
}

}  // namespace crest::sweep::internal
