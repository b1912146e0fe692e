// crestd under hostile input from outside: bytes that are not a request get
// INVALID_ARGUMENT naming the message type on every method, and a seeded
// fuzzer's requests (random bytes, valid requests mutated) never crash the
// daemon nor get an answer outside the codes a client can act on.
#include <cstdlib>
#include <regex>
#include <set>
#include <thread>

#include "crest/v1/crest.grpc.pb.h"
#include "gtest/gtest.h"
#include "in_process_crestd.h"
#include "request_fuzzer.h"
#include "temp_dir.h"

namespace crest {
namespace {

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(daemon_.Start(dir_.File("state"), {}, &why)) << why;
  }
  testing::TempDir dir_;
  testing::InProcessCrestd daemon_;
};

TEST_F(HostileInput, BytesThatAreNotARequestAreInvalidArgumentNamingTheTypeOnEveryMethod) {
  const auto* service = v1::GetNodeInfoRequest::descriptor()->file()->FindServiceByName("Crest");
  ASSERT_NE(service, nullptr);
  auto channel = daemon_.Channel();
  for (int i = 0; i < service->method_count(); ++i) {
    const auto* method = service->method(i);
    // An invalid tag, and a field that claims more bytes than follow.
    for (const std::string& bytes : {std::string("\xff\xff\xff"), std::string("\x0a\x05"
                                                                              "ab")}) {
      const grpc::Status s = testing::RequestFuzzer::Send(*channel, method->name(),
                                                          method->server_streaming(), bytes, 10);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method->name();
      EXPECT_NE(s.error_message().find(method->input_type()->full_name()), std::string::npos)
          << method->name() << ": " << s.error_message();
    }
  }
}

TEST_F(HostileInput, EmptyBytesAreTheDefaultRequestNotAParseError) {
  // proto3: zero bytes are a valid message with every field unset.
  const grpc::Status s =
      testing::RequestFuzzer::Send(*daemon_.Channel(), "GetNodeInfo", false, "", 10);
  EXPECT_TRUE(s.ok()) << s.error_message();
  const grpc::Status dff =
      testing::RequestFuzzer::Send(*daemon_.Channel(), "QueryDff", false, "", 10);
  EXPECT_EQ(dff.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(HostileInput, AHugeFieldQuotedInAnErrorIsCutAndTheConnectionLivesOn) {
  v1::SubmitJobRequest request;
  request.mutable_spec()->set_json(R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 4096}]})");
  request.set_backend(std::string(100000, 'x'));
  auto stub = daemon_.Stub();
  grpc::ClientContext context;
  v1::SubmitJobResponse response;
  const grpc::Status s = stub->SubmitJob(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(s.error_message().rfind("backend: ", 0), 0u) << s.error_message().substr(0, 200);
  EXPECT_LT(s.error_message().size(), 1200u);
  EXPECT_NE(s.error_message().find("more bytes)"), std::string::npos);
  // Before the cut, the client refused the answer's metadata and the
  // connection's next calls failed with RESOURCE_EXHAUSTED.
  for (int i = 0; i < 5; ++i) {
    grpc::ClientContext again;
    v1::GetNodeInfoResponse info;
    const grpc::Status ok = stub->GetNodeInfo(&again, v1::GetNodeInfoRequest(), &info);
    EXPECT_TRUE(ok.ok()) << ok.error_message();
  }
}

// Every field name of every request message, nested ones included.
void FieldNames(const google::protobuf::Descriptor* d, std::set<std::string>& names) {
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (!names.insert(f->name()).second) continue;
    if (f->message_type() != nullptr) FieldNames(f->message_type(), names);
  }
}

std::set<std::string> RequestFieldNames() {
  std::set<std::string> names = {"request"};
  const auto* service = v1::GetNodeInfoRequest::descriptor()->file()->FindServiceByName("Crest");
  for (int i = 0; i < service->method_count(); ++i) {
    FieldNames(service->method(i)->input_type(), names);
  }
  return names;
}

// What a client may be answered: OK, or a code it can act on with a
// message; an INVALID_ARGUMENT message starts with the request field it is
// about ("gemm.n must be positive", "spec.dff[0]: …", "request: …").
bool Acceptable(const testing::FuzzAnswer& a, std::string* why) {
  static const std::set<grpc::StatusCode> kCodes = {
      grpc::StatusCode::OK,
      grpc::StatusCode::INVALID_ARGUMENT,
      grpc::StatusCode::NOT_FOUND,
      grpc::StatusCode::FAILED_PRECONDITION,  // cancelling a job that has ended
      grpc::StatusCode::RESOURCE_EXHAUSTED,
      grpc::StatusCode::UNAUTHENTICATED,
      grpc::StatusCode::PERMISSION_DENIED,
  };
  static const std::set<std::string> kFields = RequestFieldNames();
  static const std::regex kLeadingField(R"(^([a-z_][a-z0-9_]*)[.\[: ])");
  *why = a.method + " (" + a.kind + "): code " + std::to_string(static_cast<int>(a.code)) + " \"" +
         a.message.substr(0, 300) + "\"";
  if (kCodes.count(a.code) == 0) return false;
  if (a.code == grpc::StatusCode::OK) return true;
  if (a.message.empty() || a.message.size() > 2048) return false;
  if (a.code != grpc::StatusCode::INVALID_ARGUMENT) return true;
  std::smatch m;
  return std::regex_search(a.message, m, kLeadingField) && kFields.count(m[1].str()) > 0;
}

int64_t FuzzCount() {
  const char* n = std::getenv("CREST_FUZZ_REQUESTS");
  return n != nullptr ? std::atoll(n) : 20000;
}

TEST_F(HostileInput, TwentyThousandFuzzedRequestsNeverCrashAndGetActionableAnswers) {
  const int64_t total = FuzzCount();
  constexpr int kClients = 4;
  std::vector<std::vector<testing::FuzzAnswer>> answers(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      testing::RequestFuzzer fuzzer(daemon_.Channel(),
                                    /*seed=*/20261123u + static_cast<uint64_t>(c));
      auto& mine = answers[static_cast<size_t>(c)];
      for (int64_t i = c; i < total; i += kClients) mine.push_back(fuzzer.SendOne());
    });
  }
  for (auto& t : clients) t.join();
  std::vector<testing::FuzzAnswer> all;
  for (auto& a : answers) all.insert(all.end(), a.begin(), a.end());
  ASSERT_EQ(static_cast<int64_t>(all.size()), total);
  int64_t bad = 0;
  for (const auto& a : all) {
    std::string why;
    if (!Acceptable(a, &why) && ++bad <= 10) ADD_FAILURE() << why;
  }
  EXPECT_EQ(bad, 0);
  if (std::getenv("CREST_FUZZ_DUMP") != nullptr) {
    for (const auto& a : all) {
      std::cout << "DUMP " << a.method << " " << a.kind << " " << static_cast<int>(a.code) << " "
                << a.message << "\n";
    }
  }
  std::cout << "fuzzed " << total << " requests: " << testing::CountCodes(all) << "\n";
  // Still serving after all of it.
  const grpc::Status alive =
      testing::RequestFuzzer::Send(*daemon_.Channel(), "GetNodeInfo", false, "", 10);
  EXPECT_TRUE(alive.ok()) << alive.error_message();
}

}  // namespace
}  // namespace crest
