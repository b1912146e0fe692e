// CrestService's TimeGemms handler, apart from crest_service.cc: the one
// handler that holds times (tuner::Timing), so that the other handlers do not
// depend on the times' types.
#include <utility>
#include <vector>

#include "crest/answers/answers.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/timing.h"
#include "crest/wire/convert.h"
#include "crest_service.h"

namespace crest::service {
using wire::Fill;
using wire::GemmOf;
using wire::GpuOf;
using wire::OptionsOf;

absl::Status CrestService::TimeSet(const Caller&, const v1::TimeGemmsRequest& request,
                                   v1::TimeGemmsResponse* response) {
  auto gpu = GpuOf(request.gpu());
  if (!gpu.ok()) return gpu.status();
  auto options = OptionsOf(request.pin(), request.mode(), request.runs(), request.algo());
  if (!options.ok()) return options.status();
  if (request.gemms_size() < 1 || request.gemms_size() > kMaxTimedGemms) {
    return absl::InvalidArgumentError(StrCat("gemms: between 1 and ", kMaxTimedGemms,
                                             " GEMMs per request (got ", request.gemms_size(),
                                             ")"));
  }
  std::vector<tuner::GemmShape> gemms;
  gemms.reserve(static_cast<size_t>(request.gemms_size()));
  for (int i = 0; i < request.gemms_size(); ++i) {
    auto g = GemmOf(request.gemms(i));
    if (!g.ok()) return absl::InvalidArgumentError(StrCat("gemms[", i, "].", g.status().message()));
    gemms.push_back(*std::move(g));
  }
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  auto timings = answers::TimeGemmSet(**db, **gpu, *options, gemms, request.predict_only());
  if (!timings.ok()) return timings.status();
  Fill(*timings, response);
  return absl::OkStatus();
}

}  // namespace crest::service
