// Test support: the shipped H100 MLP table (PyTorch, h 4096) and a copy of
// it slowed as a library upgrade might, for replayed runs to compare.
#pragma once

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace crest::testing {

inline const std::string kMlpTable =
    std::string(CREST_TEST_DATA_DIR) + "/h100-2026-11-22/torch-mlp-h4096.csv";

// The table at `path` with each row's time multiplied by `factor(cells)`
// (the row's CSV cells: name, dtype, m, n, k, …, time in cells[7]).
inline void WriteScaledMlpTable(
    const std::string& path, const std::function<double(const std::vector<std::string>&)>& factor) {
  std::ifstream in(kMlpTable);
  std::ofstream out(path);
  std::string line;
  std::getline(in, line);
  out << line << "\n";
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    cells[7] = std::to_string(std::stod(cells[7]) * factor(cells));
    for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << cells[i];
    out << "\n";
  }
}

// The table at `path` with every down GEMM whose d_ff is a multiple of 64
// slowed by 8%: 4 of them in the window of ±128 around 10923.
inline void WriteSlowedMlpTable(const std::string& path) {
  WriteScaledMlpTable(path, [](const std::vector<std::string>& cells) {
    return cells[0].starts_with("down_") && std::stoll(cells[4]) % 64 == 0 ? 1.08 : 1.0;
  });
}

// `crest` arguments: a replayed sweep of the window of ±128 at h 4096 from
// `table`, labelled cuBLASLt `cublaslt`, into `db`, without races.
inline std::string ReplaySweepArgs(const std::string& db, const std::string& table, long cublaslt) {
  return "sweep --db " + db +
         " --backend replay --gpu h100 --hidden 4096 --window 128 "
         "--no-race --replay " +
         table + " --replay-cublaslt " + std::to_string(cublaslt);
}

}  // namespace crest::testing
