#include "crest/tuner/model_config.h"

#include <string_view>

#include "crest/common/str_cat.h"
#include "crest/tuner/limits.h"
#include "sizes.h"

namespace crest::tuner {
namespace {

absl::Status MustDivide(std::string_view field, int64_t value, std::string_view by_name,
                        int64_t by) {
  if (value % by == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat(field, " (", value, ") must be divisible by ", by_name, " (", by, ")"));
}

}  // namespace

absl::Status ValidateModelConfig(const ModelConfig& c) {
  using internal::CheckSize;
  if (auto s = CheckSize("hidden", c.hidden, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("heads", c.heads, kMaxHeads); !s.ok()) return s;
  if (c.kv_heads != 0) {
    if (auto s = CheckSize("kv-heads", c.kv_heads, kMaxHeads); !s.ok()) return s;
  }
  if (auto s = CheckSize("d-ff", c.d_ff, kMaxDff); !s.ok()) return s;
  if (auto s = CheckSize("vocab", c.vocab, kMaxVocab); !s.ok()) return s;
  if (auto s = CheckSize("seq", c.seq, kMaxSeq); !s.ok()) return s;
  if (auto s = CheckSize("batch", c.micro_batch, kMaxMicroBatch); !s.ok()) return s;
  if (auto s = CheckSize("tp", c.tp, kMaxTp); !s.ok()) return s;
  if (c.Tokens() > kMaxTokens) {
    return absl::InvalidArgumentError(
        StrCat("batch·seq (", c.Tokens(), " tokens) must be at most ", kMaxTokens));
  }
  if (auto s = MustDivide("hidden", c.hidden, "heads", c.heads); !s.ok()) return s;
  if (c.KvHeads() > c.heads) {
    return absl::InvalidArgumentError(
        StrCat("kv-heads (", c.KvHeads(), ") must be at most heads (", c.heads, ")"));
  }
  if (auto s = MustDivide("heads", c.heads, "kv-heads", c.KvHeads()); !s.ok()) return s;
  if (auto s = MustDivide("heads", c.heads, "tp", c.tp); !s.ok()) return s;
  if (auto s = MustDivide("kv-heads", c.KvHeads(), "tp", c.tp); !s.ok()) return s;
  if (auto s = MustDivide("d-ff", c.d_ff, "tp", c.tp); !s.ok()) return s;
  if (c.vocab % c.tp != 0) {
    const int64_t padded = (c.vocab + 128 * c.tp - 1) / (128 * c.tp) * (128 * c.tp);
    return absl::InvalidArgumentError(
        StrCat("vocab (", c.vocab, ") must be divisible by tp (", c.tp, "): pad it, e.g. to ",
               padded, " (a multiple of 128*tp, as Megatron does); `crest vocab --vocab ", c.vocab,
               " --tp ", c.tp, "` ranks the paddings"));
  }
  return absl::OkStatus();
}

std::vector<std::string> HeadDimWarnings(const ModelConfig& c) {
  std::vector<std::string> out;
  const int64_t d = c.HeadDim();
  if (d % 8 != 0) {
    out.push_back(StrCat("head dim ", d,
                         " is not a multiple of 8: tensor cores want multiples "
                         "of 8 and fused attention kernels (FlashAttention) require it"));
  }
  if (d > 256) {
    out.push_back(StrCat("head dim ", d,
                         " is above 256: fused attention kernels "
                         "(FlashAttention 2 and 3) stop at 256, so attention would run unfused"));
  }
  if (d < 32) {
    out.push_back(StrCat("head dim ", d, " is below 32: attention's GEMMs have K = ", d,
                         " and leave tensor cores mostly idle"));
  }
  return out;
}

}  // namespace crest::tuner
