#include "measurement_columns.h"

#include <array>

#include "crest/common/str_cat.h"

namespace crest::store::internal {
namespace {

// A column whose value is a field of MeasurementRow reached by `get`.
template <auto Get>
void BindField(Statement& s, int index, const MeasurementRow& r) {
  const auto& value = Get(r);
  using T = std::decay_t<decltype(value)>;
  if constexpr (std::is_same_v<T, bool>) {
    s.Bind(index, static_cast<int64_t>(value));
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    s.Bind(index, static_cast<int64_t>(value));
  } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
    s.BindBlob(index, value);
  } else {
    s.Bind(index, value);
  }
}

template <auto Get>
void ReadField(const Statement& s, std::string_view column, MeasurementRow& r) {
  auto& value = Get(r);
  using T = std::decay_t<decltype(value)>;
  if constexpr (std::is_same_v<T, bool>) {
    value = s.Int(column) != 0;
  } else if constexpr (std::is_same_v<T, double>) {
    value = s.Double(column);
  } else if constexpr (std::is_same_v<T, std::string>) {
    value = s.Text(column);
  } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
    value = s.Blob(column);
  } else {
    value = static_cast<T>(s.Int(column));
  }
}

template <auto Get>
constexpr MeasurementColumn Field(std::string_view name) {
  return {name, &BindField<Get>, &ReadField<Get>};
}

// The measurement mode's two columns, stored by name.
void BindCache(Statement& s, int i, const MeasurementRow& r) {
  s.Bind(i, tuner::CacheModeName(r.mode.cache));
}
void ReadCache(const Statement& s, std::string_view c, MeasurementRow& r) {
  r.mode.cache = tuner::ParseCacheMode(s.Text(c)).value_or(tuner::CacheMode::kCold);
}
void BindClocks(Statement& s, int i, const MeasurementRow& r) {
  s.Bind(i, tuner::ClockPolicyName(r.mode.clocks));
}
void ReadClocks(const Statement& s, std::string_view c, MeasurementRow& r) {
  r.mode.clocks = tuner::ParseClockPolicy(s.Text(c)).value_or(tuner::ClockPolicy::kBurst);
}

#define CREST_FIELD(path) \
  [](auto& r) -> auto& { return r.path; }

const auto kMeasurementColumns = std::to_array<MeasurementColumn>({
    Field<CREST_FIELD(dtype_out)>("dtype_out"),
    Field<CREST_FIELD(compute_type)>("compute_type"),
    Field<CREST_FIELD(lda)>("lda"),
    Field<CREST_FIELD(ldb)>("ldb"),
    Field<CREST_FIELD(ldc)>("ldc"),
    Field<CREST_FIELD(result.algo.algo_id)>("algo_id"),
    Field<CREST_FIELD(result.algo.tile)>("tile"),
    Field<CREST_FIELD(result.algo.tile_m)>("tile_m"),
    Field<CREST_FIELD(result.algo.tile_n)>("tile_n"),
    Field<CREST_FIELD(result.algo.stages)>("stages"),
    Field<CREST_FIELD(result.algo.split_k)>("split_k"),
    Field<CREST_FIELD(result.algo.reduction_scheme)>("reduction_scheme"),
    Field<CREST_FIELD(result.algo.swizzle)>("swizzle"),
    Field<CREST_FIELD(result.algo.custom_option)>("custom_option"),
    Field<CREST_FIELD(result.algo.cluster_shape)>("cluster_shape"),
    Field<CREST_FIELD(result.algo.bytes)>("algo_bytes"),
    Field<CREST_FIELD(result.stats.median_us)>("median_us"),
    Field<CREST_FIELD(result.stats.mean_us)>("mean_us"),
    Field<CREST_FIELD(result.stats.min_us)>("min_us"),
    Field<CREST_FIELD(result.stats.stdev_us)>("stdev_us"),
    Field<CREST_FIELD(result.stats.samples)>("samples"),
    Field<CREST_FIELD(result.stats.sm_clock_mhz)>("sm_clock_mhz"),
    Field<CREST_FIELD(result.tflops)>("tflops"),
    Field<CREST_FIELD(tiles)>("tiles"),
    Field<CREST_FIELD(waves)>("waves"),
    Field<CREST_FIELD(tile_efficiency)>("tile_efficiency"),
    Field<CREST_FIELD(wave_efficiency)>("wave_efficiency"),
    Field<CREST_FIELD(result.verified)>("verified"),
    Field<CREST_FIELD(result.verify_note)>("verify_note"),
    MeasurementColumn{"cache_mode", &BindCache, &ReadCache},
    Field<CREST_FIELD(created_us)>("created_us"),
    MeasurementColumn{"clock_policy", &BindClocks, &ReadClocks},
    Field<CREST_FIELD(result.stats.ci_low_us)>("ci_low_us"),
    Field<CREST_FIELD(result.stats.ci_high_us)>("ci_high_us"),
    Field<CREST_FIELD(result.stats.power_w)>("power_w"),
    Field<CREST_FIELD(result.stats.throttle_reasons)>("throttle_reasons"),
    Field<CREST_FIELD(result.stats.discarded)>("discarded"),
    Field<CREST_FIELD(result.clock_note)>("clock_note"),
    Field<CREST_FIELD(settled_clock_mhz)>("settled_clock_mhz"),
    Field<CREST_FIELD(result.heuristic_rank)>("heuristic_rank"),
});

#undef CREST_FIELD

}  // namespace

std::span<const MeasurementColumn> MeasurementColumns() { return kMeasurementColumns; }

MeasurementRow MeasurementRowOf(const tuner::MeasuredGemm& measured) {
  MeasurementRow row;
  row.key = GemmKey::Of(measured.gemm);
  row.lda = measured.lda;
  row.ldb = measured.ldb;
  row.ldc = measured.ldc;
  row.dtype_out = std::string(tuner::DTypeName(tuner::OutputDType(measured.gemm.dtype)));
  row.compute_type = measured.compute_type;
  row.mode = measured.mode;
  row.settled_clock_mhz = measured.settled_clock_mhz;
  return row;
}

std::string MeasurementColumnList(std::string_view prefix) {
  std::string out;
  for (const MeasurementColumn& c : kMeasurementColumns) {
    out += StrCat(out.empty() ? "" : ", ", prefix, c.name);
  }
  return out;
}

int BindMeasurementColumns(Statement& s, int first, const MeasurementRow& row) {
  for (const MeasurementColumn& c : kMeasurementColumns) c.bind(s, first++, row);
  return first;
}

void ReadMeasurementColumns(const Statement& s, MeasurementRow& row) {
  for (const MeasurementColumn& c : kMeasurementColumns) c.read(s, c.name, row);
}

}  // namespace crest::store::internal
