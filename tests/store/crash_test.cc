// A sweep killed with SIGKILL at random points loses no committed row, leaves
// a database that passes its check and whose job counts exactly the rows
// committed (predictions commit in batches), and a re-run completes the same
// job with no duplicates. Runs the real `crest sweep` in a child process.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <thread>

#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "gtest/gtest.h"
#include "temp_dir.h"

namespace crest {
namespace {

// About 197,000 GEMMs (several seconds with batched commits): long enough
// that every kill lands mid-sweep.
const char* const kSweepArgs[] = {"sweep",    "--hidden", "16384",  "--gpu", "h100",
                                  "--window", "16384",    "--pass", "train"};

pid_t StartSweep(const std::string& db) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<const char*> argv = {CREST_BIN};
    for (const char* a : kSweepArgs) argv.push_back(a);
    argv.push_back("--db");
    argv.push_back(db.c_str());
    argv.push_back(nullptr);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execv(CREST_BIN, const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  return pid;
}

int64_t Count(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  const int64_t n = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  return n;
}

// uid → time_us of a sample of committed rows.
std::map<std::string, double> Sample(sqlite3* db) {
  std::map<std::string, double> out;
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT uid, time_us FROM predictions WHERE id % 97 = 0", -1, &stmt,
                     nullptr);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    out[reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))] =
        sqlite3_column_double(stmt, 1);
  }
  sqlite3_finalize(stmt);
  return out;
}

void WaitForRowsBeyond(const std::string& path, int64_t rows, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      const int64_t now = Count(raw, "SELECT count(*) FROM predictions");
      sqlite3_close(raw);
      if (now > rows) return;
    } else {
      sqlite3_close(raw);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

TEST(SweepCrash, KilledAtRandomPointsLosesNothingAndResumesWithoutDuplicates) {
  testing::TempDir dir;
  const std::string path = dir.File("crash.db");
  std::mt19937 rng(20261122);  // fixed: the same kill points every run
  std::uniform_int_distribution<int> delay_ms(0, 150);
  std::map<std::string, double> committed;
  int64_t previous = 0;
  int kills_with_progress = 0;
  for (int round = 0; round < 15; ++round) {
    const pid_t pid = StartSweep(path);
    ASSERT_GT(pid, 0);
    // Kill at a random point after the child has committed something new, so
    // that every kill lands mid-sweep however loaded the machine is.
    WaitForRowsBeyond(path, previous, std::chrono::seconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);

    {  // Recovery happens on the next open; then the file must check clean.
      auto store = store::Store::Open(path);
      ASSERT_TRUE(store.ok()) << "round " << round << ": " << store.status();
      auto check = store::Check(**store);
      ASSERT_TRUE(check.ok());
      ASSERT_TRUE(check->ok) << "round " << round << ": " << check->problems.front();
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    const int64_t rows = Count(raw, "SELECT count(*) FROM predictions");
    EXPECT_GE(rows, previous) << "round " << round << ": committed rows disappeared";
    if (rows > previous) ++kills_with_progress;
    previous = rows;
    const auto now = Sample(raw);
    for (const auto& [uid, time_us] : committed) {
      auto it = now.find(uid);
      ASSERT_NE(it, now.end()) << "round " << round << ": lost row " << uid;
      EXPECT_EQ(it->second, time_us) << "round " << round << ": row " << uid << " changed";
    }
    committed.insert(now.begin(), now.end());
    EXPECT_EQ(Count(raw, "SELECT count(*) FROM jobs"), 1) << "a resumed sweep reuses its job";
    // Predictions commit in batches, each with the job's progress: a kill
    // lands between batches, never inside one.
    EXPECT_EQ(Count(raw, "SELECT done FROM jobs"), rows) << "round " << round;
    sqlite3_close(raw);
  }
  EXPECT_GE(kills_with_progress, 10) << "too few kills landed mid-sweep to prove anything";

  const pid_t pid = StartSweep(path);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const int64_t rows = Count(raw, "SELECT count(*) FROM predictions");
  EXPECT_EQ(rows, Count(raw,
                        "SELECT count(*) FROM (SELECT DISTINCT gpu_model, model_version, "
                        "dtype, trans_a, trans_b, batch, m, n, k FROM predictions)"));
  EXPECT_EQ(rows, Count(raw, "SELECT total FROM jobs"));
  EXPECT_EQ(rows, Count(raw, "SELECT done FROM jobs"));
  EXPECT_EQ(Count(raw, "SELECT count(*) FROM jobs WHERE state = 'done'"), 1);
  for (const auto& [uid, time_us] : committed) {
    EXPECT_EQ(Count(raw, ("SELECT count(*) FROM predictions WHERE uid = '" + uid + "'").c_str()),
              1);
  }
  sqlite3_close(raw);
}

}  // namespace
}  // namespace crest
