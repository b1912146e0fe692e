// Test and bench support: a seeded, structure-aware fuzzer of crestd's gRPC
// API from outside. It sends requests as raw bytes (so that anything, valid
// or not, reaches the daemon) to every method: random bytes, valid requests
// with bytes flipped, cut or appended, and valid requests with one field set
// by reflection to an extreme or absurd value. It records the status of
// every answer; the caller judges them.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace crest::testing {

struct FuzzAnswer {
  std::string method;  // e.g. "QueryDff"
  std::string kind;    // "random", "flipped", "cut", "appended", "field"
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
};

class RequestFuzzer {
 public:
  RequestFuzzer(std::shared_ptr<grpc::Channel> channel, uint64_t seed);

  // Sends one request to a method chosen at random and returns its answer.
  // Streams are read to their end; every call has a deadline of `deadline_s`.
  FuzzAnswer SendOne(double deadline_s = 10);

  // Sends `bytes` to /crest.v1.Crest/<method> (a server stream when
  // `streaming`) and returns the final status.
  static grpc::Status Send(grpc::Channel& channel, const std::string& method, bool streaming,
                           const std::string& bytes, double deadline_s);

 private:
  struct Target {
    std::string method;
    bool streaming;
    std::vector<std::string> seeds;  // valid requests, serialized
    std::string type;                // the request's full message name
  };
  std::string Mutate(const Target& target, std::string* kind);
  std::string MutateField(const Target& target);

  std::shared_ptr<grpc::Channel> channel_;
  std::mt19937_64 rng_;
  std::vector<Target> targets_;
};

// "OK: 123, INVALID_ARGUMENT: 456, …" for a summary line.
std::string CountCodes(const std::vector<FuzzAnswer>& answers);

}  // namespace crest::testing
