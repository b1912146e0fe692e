// The real machine's Env and the one POSIX error translator: every failure
// names the path and the system's words, with the errno and a status code a
// caller can act on.
#include "crest/common/env.h"

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "crest/common/posix_error.h"
#include "gtest/gtest.h"
#include "temp_dir.h"

namespace crest {
namespace {

TEST(PosixError, MapsErrnoToACodeAndNamesWhatFailedWithTheSystemsWords) {
  const absl::Status missing = PosixError(ENOENT, "cannot read '/x'");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.message(), "cannot read '/x': No such file or directory (errno 2)");
  EXPECT_EQ(PosixError(EACCES, "w").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(PosixError(ENOSPC, "w").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(PosixError(EEXIST, "w").code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(PosixError(EIO, "w").code(), absl::StatusCode::kUnknown);
}

TEST(PosixError, TheSystemsWordsAloneReadAsInAStatus) {
  EXPECT_EQ(PosixErrorText(EACCES), "Permission denied (errno 13)");
  EXPECT_EQ(PosixError(EACCES, "w").message(), "w: " + PosixErrorText(EACCES));
}

TEST(PosixError, AnErrorCodeTranslatesTheSameWayAndNoErrorIsOk) {
  EXPECT_TRUE(FromErrorCode(std::error_code(), "anything").ok());
  const absl::Status s =
      FromErrorCode(std::make_error_code(std::errc::permission_denied), "cannot list '/root'");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "cannot list '/root': Permission denied (errno 13)");
}

TEST(DefaultEnv, ReadingAMissingFileNamesItAndErrno) {
  testing::TempDir dir;
  const auto text = DefaultEnv().ReadFile(dir.File("absent.json"));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(text.status().message(),
            "cannot read '" + dir.File("absent.json") + "': No such file or directory (errno 2)");
}

TEST(DefaultEnv, WritesAtomicallyAndReadsBackTheBytes) {
  testing::TempDir dir;
  Env& env = DefaultEnv();
  ASSERT_TRUE(env.WriteFileAtomically(dir.File("port"), "50051\n").ok());
  ASSERT_TRUE(env.WriteFileAtomically(dir.File("port"), std::string("a\0b", 3)).ok());
  EXPECT_EQ(*env.ReadFile(dir.File("port")), std::string("a\0b", 3));
  EXPECT_FALSE(*env.Exists(dir.File("port.tmp"))) << "the temporary is renamed away";
}

TEST(DefaultEnv, AWriteIntoAMissingDirectoryFailsNamingTheFile) {
  testing::TempDir dir;
  const absl::Status s = DefaultEnv().WriteFileAtomically(dir.File("no/such/port"), "1");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find(dir.File("no/such/port.tmp")), std::string::npos) << s;
}

TEST(DefaultEnv, ListsOnlyMatchingRegularFilesSortedAndSaysWhenTheDirectoryIsMissing) {
  testing::TempDir dir;
  Env& env = DefaultEnv();
  ASSERT_TRUE(env.CreateDirectories(dir.File("cal/sub.json")).ok());
  ASSERT_TRUE(env.WriteFileAtomically(dir.File("cal/b.json"), "{}").ok());
  ASSERT_TRUE(env.WriteFileAtomically(dir.File("cal/a.json"), "{}").ok());
  ASSERT_TRUE(env.WriteFileAtomically(dir.File("cal/notes.txt"), "").ok());
  const auto files = env.ListFiles(dir.File("cal"), ".json");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, (std::vector<std::string>{dir.File("cal/a.json"), dir.File("cal/b.json")}));
  EXPECT_EQ(env.ListFiles(dir.File("none"), ".json").status().code(), absl::StatusCode::kNotFound);
}

TEST(DefaultEnv, RemovingAFileThatIsNotThereIsFine) {
  testing::TempDir dir;
  EXPECT_TRUE(DefaultEnv().RemoveFile(dir.File("never-made")).ok());
}

TEST(DefaultEnv, HostNameAndClocksAnswer) {
  Env& env = DefaultEnv();
  EXPECT_FALSE(env.HostName().empty());
  EXPECT_GT(env.NowSeconds(), 1.7e9) << "seconds since 1970, after 2023";
  const double a = env.MonotonicSeconds();
  EXPECT_GE(env.MonotonicSeconds(), a);
}

}  // namespace
}  // namespace crest
