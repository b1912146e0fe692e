// crest._native: the crest command's answering commands run in the Python
// process (no subprocess, no binary on PATH). Each call is one invocation of
// `crest ARGS…` (run_cli.h) with its output captured; the GIL is released
// while it runs. Exceptions never cross into Python: RunCli catches them.
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "crest/remote/channel.h"
#include "crest/tuner/dff_ranking.h"
#include "dff_row_fields.h"
#include "nlohmann/json.hpp"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "run_cli.h"

namespace py = pybind11;

namespace {

// A JSON value as Python's json module would read it.
py::object ToPython(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return py::none();
    case nlohmann::ordered_json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case nlohmann::ordered_json::value_t::array: {
      py::list out(j.size());
      for (size_t i = 0; i < j.size(); ++i) out[i] = ToPython(j[i]);
      return out;
    }
    case nlohmann::ordered_json::value_t::object: {
      py::dict out;
      for (auto it = j.begin(); it != j.end(); ++it) out[py::str(it.key())] = ToPython(*it);
      return out;
    }
    default:
      return py::none();  // binary and discarded values: no JSON document has them
  }
}

// A row as a tuple of `fields`, in that order (None where absent).
py::tuple RowTuple(const nlohmann::ordered_json& row, const std::vector<std::string>& fields) {
  py::tuple out(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    auto it = row.find(fields[i]);
    out[i] = it == row.end() ? py::none() : ToPython(*it);
  }
  return out;
}

// A d_ff row's field as Python's DffRow holds it (job ids as a tuple).
py::object ToPython(const crest::cli::DffFieldValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return py::int_(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return py::float_(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          return py::bool_(v);
        } else if constexpr (std::is_same_v<T, std::string_view>) {
          return py::str(v.data(), v.size());
        } else {
          py::tuple ids(v.size());
          for (size_t i = 0; i < v.size(); ++i) ids[i] = py::int_(v[i]);
          return ids;
        }
      },
      value);
}

// The rows as tuples of `fields`, each read from DffRowFields (None for a
// name it lacks).
py::list RowTuples(const std::vector<crest::tuner::DffRow>& rows,
                   const std::vector<std::string>& fields) {
  std::vector<const crest::cli::DffRowField*> table(fields.size(), nullptr);
  for (size_t f = 0; f < fields.size(); ++f) {
    for (const crest::cli::DffRowField& field : crest::cli::DffRowFields()) {
      if (field.name == fields[f]) table[f] = &field;
    }
  }
  py::list out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    py::tuple row(fields.size());
    for (size_t f = 0; f < fields.size(); ++f) {
      row[f] = table[f] == nullptr ? py::none()
                                   : ToPython(table[f]->get(rows[i], static_cast<int64_t>(i + 1)));
    }
    out[i] = std::move(row);
  }
  return out;
}

// One column of `rows` as its kind wants it: a NumPy array of int64,
// float64 (NaN where the row has no value) or bool, else a list (text or
// None; job ids as tuples).
py::object Column(const std::vector<crest::tuner::DffRow>& rows,
                  const crest::cli::DffRowField& field) {
  using crest::cli::DffFieldKind;
  const size_t n = rows.size();
  const auto at = [&](size_t i) { return field.get(rows[i], static_cast<int64_t>(i + 1)); };
  const auto shape = static_cast<py::ssize_t>(n);
  switch (field.kind) {
    case DffFieldKind::kInt: {
      py::array_t<int64_t> out(shape);
      int64_t* v = out.mutable_data();
      for (size_t i = 0; i < n; ++i) v[i] = std::get<int64_t>(at(i));
      return out;
    }
    case DffFieldKind::kReal: {
      py::array_t<double> out(shape);
      double* v = out.mutable_data();
      for (size_t i = 0; i < n; ++i) {
        const auto value = at(i);
        const double* real = std::get_if<double>(&value);
        v[i] = real != nullptr ? *real : std::numeric_limits<double>::quiet_NaN();
      }
      return out;
    }
    case DffFieldKind::kFlag: {
      py::array_t<bool> out(shape);
      bool* v = out.mutable_data();
      for (size_t i = 0; i < n; ++i) v[i] = std::get<bool>(at(i));
      return out;
    }
    case DffFieldKind::kText:
    case DffFieldKind::kJobIds:
      break;
  }
  // Text repeats down a column (one source, one provenance a cell): an
  // equal row reuses the previous row's object, one str a run of equal
  // values instead of one a row (str and tuple are immutable).
  py::list out(n);
  crest::cli::DffFieldValue last_value;
  py::object last;
  for (size_t i = 0; i < n; ++i) {
    crest::cli::DffFieldValue value = at(i);
    if (i == 0 || value != last_value) {
      last = ToPython(value);
      last_value = std::move(value);
    }
    out[i] = last;
  }
  return out;
}

// Every field of DffRowFields as a column, by name.
py::dict Columns(const std::vector<crest::tuner::DffRow>& rows) {
  py::dict out;
  for (const crest::cli::DffRowField& field : crest::cli::DffRowFields()) {
    out[py::str(field.name.data(), field.name.size())] = Column(rows, field);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() =
      "Crest's answering commands (dff, vocab, design, explain, shapes, gpus, lookup, "
      "calibrate) run in process";
  m.def(
      "run",
      [](const std::vector<std::string>& args) {
        std::ostringstream out;
        std::ostringstream err;
        int code = 0;
        {
          py::gil_scoped_release release;
          code = crest::cli::RunCli(args, crest::cli::AnsweringCommands(), out, err);
        }
        return py::make_tuple(code, out.str(), err.str());
      },
      py::arg("args"),
      "Runs `crest ARGS…` (an answering command) in process; returns (exit code, stdout, "
      "stderr). Exit codes as the binary's: 0, 1 failure, 2 bad input.");
  m.def(
      "answer",
      [](const std::vector<std::string>& args,
         const std::optional<std::vector<std::string>>& row_fields, bool columns,
         const std::string& token, const py::bytes& root_certificates, bool with_status) {
        std::ostringstream out;
        std::ostringstream err;
        nlohmann::ordered_json document;
        std::vector<crest::tuner::DffRow> dff_rows;
        const crest::remote::InMemoryCredentials credentials{token, std::string(root_certificates)};
        absl::StatusCode failure = absl::StatusCode::kOk;
        int code = 0;
        {
          py::gil_scoped_release release;
          code = crest::cli::RunCli(args, crest::cli::AnsweringCommands(), out, err, &document,
                                    row_fields || columns ? &dff_rows : nullptr, &credentials,
                                    &failure);
        }
        // (code, doc, err), and with_status the failure's status code by name.
        const auto answer = [&](py::object doc) {
          if (!with_status) return py::make_tuple(code, std::move(doc), err.str());
          return py::make_tuple(code, std::move(doc), err.str(), absl::StatusCodeToString(failure));
        };
        if (code != 0 || document.is_null()) return answer(py::none());
        if (!document.is_object()) return answer(ToPython(document));
        py::dict doc;
        for (auto it = document.begin(); it != document.end(); ++it) {
          const std::string& key = it.key();
          const nlohmann::ordered_json& value = *it;
          if (columns && key == "candidates" && !dff_rows.empty()) {
            doc[py::str(key)] = Columns(dff_rows);
          } else if (row_fields && key == "candidates" && !dff_rows.empty()) {
            doc[py::str(key)] = RowTuples(dff_rows, *row_fields);
          } else if (row_fields && key == "candidates" && value.is_array()) {
            py::list rows(value.size());
            for (size_t i = 0; i < value.size(); ++i) rows[i] = RowTuple(value[i], *row_fields);
            doc[py::str(key)] = std::move(rows);
          } else {
            doc[py::str(key)] = ToPython(value);
          }
        }
        return answer(std::move(doc));
      },
      py::arg("args"), py::arg("row_fields") = py::none(), py::arg("columns") = false,
      py::arg("token") = "", py::arg("root_certificates") = py::bytes(),
      py::arg("with_status") = false,
      "Runs `crest --json ARGS…` in process and returns (exit code, document, stderr): the "
      "document as Python objects (as json.loads would give it; None on failure), never as "
      "text. With row_fields, each of its 'candidates' is a tuple of those fields, in order "
      "(None where a row has none); a d_ff answer's are read from its rows, with no JSON "
      "between: race_verdict and race_ratio flat, runs a tuple of job ids, as DffRow holds "
      "them. With columns, a d_ff answer's 'candidates' is a dict of every field's column "
      "instead: NumPy arrays of int64, float64 (NaN where a row has no value) and bool, "
      "lists of text (None where absent) and of job-id tuples. token and root_certificates "
      "(PEM bytes) reach a --server crestd from memory, over --token-file, CREST_TOKEN and "
      "--tls-ca. with_status adds a fourth element: the failure's status code by name "
      "(\"INVALID_ARGUMENT\", a crestd's gRPC code, …; \"OK\" when none).");
}
