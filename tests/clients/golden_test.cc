// Every answering command in every format (table, --json, --csv), from the
// shipped H100 database (--db) and through a crestd serving the same file
// (--server), against the golden files in tests/clients/golden/: one file per
// command and format, the same for both, so local and remote answers are
// proved identical and any change to an answer's text is a visible diff.
// Where the answer came from (the file's path, "crestd at HOST:PORT") reads
// "<origin>". CREST_UPDATE_GOLDEN=1 rewrites the files from the local run.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "crestd_process.h"
#include "gtest/gtest.h"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

struct Case {
  const char* name;
  const char* args;
  bool answers_from_db;  // takes --db (explain asks the model)
};

constexpr Case kCases[] = {
    {"dff", "dff --hidden 4096 --gpu h100 --window 200 --top 4", true},
    {"dff-pooled", "dff --hidden 4096 --gpu h100 --top 3 --runs all", true},
    {"dff-train", "dff --hidden 4096 --gpu h100 --pass train --top 3", true},
    {"vocab", "vocab --vocab 32000 --hidden 4096 --gpu h100", true},
    {"design",
     "design --hidden 4096 --heads 16,32,64 --kv-heads 8 --d-ff 11008 --vocab 32000 --seq 4096 "
     "--batch 2 --layers 32 --dp 8 --zero 3 --gpu h100",
     true},
    {"lookup", "lookup --m 8192 --n 4096 --k 10816 --gpu h100", true},
    {"lookup-pooled", "lookup --m 8192 --n 4096 --k 10816 --gpu h100 --runs all", true},
    {"explain", "explain --m 8192 --n 4096 --k 10816 --gpu h100", false},
};

constexpr std::pair<const char*, const char*> kFormats[] = {
    {"txt", ""}, {"json", "--json "}, {"csv", "--csv "}};

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// "" when equal; else the first line that differs, both ways.
std::string FirstDifference(const std::string& got, const std::string& want) {
  if (got == want) return "";
  std::istringstream a(got);
  std::istringstream b(want);
  std::string la;
  std::string lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "they differ in line endings";
    if (!more_a || !more_b || la != lb) {
      return "line " + std::to_string(line) + "\n  got:    " + (more_a ? la : "<end>") +
             "\n  golden: " + (more_b ? lb : "<end>");
    }
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class Golden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    db_ = dir_->File("reference.db");
    auto unzip = testing::RunCommand("gzip -dc '" + Shipped() + "' > '" + db_ + "'");
    ASSERT_EQ(unzip.exit_code, 0) << unzip.err;
    const std::string state = dir_->File("state");
    std::filesystem::create_directories(state);
    std::filesystem::copy_file(db_, state + "/crest.db");
    daemon_ = new testing::CrestdProcess();
    std::string why;
    ASSERT_TRUE(daemon_->Start(CRESTD_BIN, state, {}, &why)) << why;
  }
  static void TearDownTestSuite() {
    delete daemon_;
    delete dir_;
  }

  // The command's output with where it came from made "<origin>".
  static std::string Run(const std::string& args, bool remote) {
    const std::string command = std::string(CREST_BIN) + " " +
                                (remote ? "--server " + daemon_->address() + " " : "") + args;
    auto r = testing::RunCommand(command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    std::string out = Replace(r.out, "crestd at " + daemon_->address(), "<origin>");
    out = Replace(out, dir_->File("state") + "/crest.db", "<origin>");
    out = Replace(out, "this build's model", "<origin>");
    return Replace(out, db_, "<origin>");
  }

  static std::string Shipped() {
    return std::string(CREST_SOURCE_DIR) + "/bench/results/h100/reference.db.gz";
  }

  static testing::TempDir* dir_;
  static testing::CrestdProcess* daemon_;
  static std::string db_;
};

testing::TempDir* Golden::dir_ = nullptr;
testing::CrestdProcess* Golden::daemon_ = nullptr;
std::string Golden::db_;

TEST_F(Golden, EveryAnswerInEveryFormatLocalAndRemoteIsTheGoldenText) {
  const bool update = std::getenv("CREST_UPDATE_GOLDEN") != nullptr;
  const std::string golden_dir = std::string(CREST_SOURCE_DIR) + "/tests/clients/golden/";
  for (const Case& c : kCases) {
    for (const auto& [extension, flag] : kFormats) {
      const std::string args =
          std::string(flag) + c.args + (c.answers_from_db ? " --db " + db_ : std::string());
      const std::string file = golden_dir + c.name + "." + extension;
      const std::string local = Run(args, false);
      if (update) std::ofstream(file) << local;
      const std::string golden = ReadFile(file);
      ASSERT_FALSE(golden.empty()) << file << " is missing: run with CREST_UPDATE_GOLDEN=1";
      EXPECT_EQ(FirstDifference(local, golden), "") << "local: crest " << args;
      const std::string remote_args = std::string(flag) + c.args;
      EXPECT_EQ(FirstDifference(Run(remote_args, true), golden), "")
          << "remote: crest --server … " << remote_args;
    }
  }
}

TEST_F(Golden, AShippedDatabaseAnswersGzippedAsItDoesUnzipped) {
  for (const Case& c : kCases) {
    if (!c.answers_from_db) continue;
    const std::string gzipped =
        Replace(Run(std::string(c.args) + " --db " + Shipped(), false), Shipped(), "<origin>");
    EXPECT_EQ(FirstDifference(gzipped, Run(std::string(c.args) + " --db " + db_, false)), "")
        << c.args;
  }
  // Read-only: changing it is refused, saying how.
  auto upgrade =
      testing::RunCommand(std::string(CREST_BIN) + " db check --upgrade --db " + Shipped());
  EXPECT_EQ(upgrade.exit_code, 1);
  EXPECT_NE(upgrade.err.find("opens read-only; gunzip it to change it"), std::string::npos)
      << upgrade.err;
  // A cut-short file names itself, not a temporary copy.
  const std::string cut = dir_->File("cut.db.gz");
  ASSERT_EQ(testing::RunCommand("head -c 4096 '" + Shipped() + "' > '" + cut + "'").exit_code, 0);
  auto truncated =
      testing::RunCommand(std::string(CREST_BIN) + " dff --hidden 4096 --gpu h100 --db " + cut);
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_NE(truncated.err.find(cut + ": not a whole gzip file"), std::string::npos)
      << truncated.err;
}

}  // namespace
}  // namespace crest
