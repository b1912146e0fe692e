// Internal to crest::store: a measurement's columns, declared once. Each
// value column of the measurements table (everything but its ids, its
// references, its GPU model and its GemmKey, which key_columns.h binds) is
// one entry here: its name, how a row's value is bound and how it is read.
// The insert, the select, the merge and `crest db export`'s text export are
// all made from this table; adding a column touches three files of the
// store: the MeasurementRow's field (records.h), an entry here (and the line
// of MeasurementRowOf that fills it from the MeasuredGemm), and a migration
// (schema.cc).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "crest/store/records.h"
#include "sqlite.h"

namespace crest::store::internal {

struct MeasurementColumn {
  std::string_view name;
  void (*bind)(Statement& s, int index, const MeasurementRow& row);
  void (*read)(const Statement& s, std::string_view column, MeasurementRow& row);
};

// Every value column, in the table's order of declaration.
std::span<const MeasurementColumn> MeasurementColumns();

// "a, b, c" of the value columns, each name preceded by `prefix` ("m.").
std::string MeasurementColumnList(std::string_view prefix);

// The GEMM's row as a measurement records it: its key and every value its
// MeasuredGemm gives (not the algorithm's figures, the tile arithmetic or
// the time it was written, which InsertMeasurement sets per algorithm).
MeasurementRow MeasurementRowOf(const tuner::MeasuredGemm& measured);

// Binds every value column of `row` from parameter `first` on; returns the
// next free index.
int BindMeasurementColumns(Statement& s, int first, const MeasurementRow& row);

// Reads every value column of the current row into `row`.
void ReadMeasurementColumns(const Statement& s, MeasurementRow& row);

}  // namespace crest::store::internal
