// Internal to crestd: the Crest gRPC service. Thin: it checks who calls,
// translates requests into calls on the tuner, the store and the job queue,
// and their errors into grpc::Status in one place (ToGrpc, client_view.h).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "answer_cache.h"
#include "answer_pool.h"
#include "auth.h"
#include "client_view.h"
#include "crest/common/env.h"
#include "crest/v1/crest.grpc.pb.h"
#include "job_queue.h"
#include "metrics.h"
#include "queued_calls.h"
#include "result_counts.h"
#include "store_pool.h"
#include "write_watchdog.h"

namespace crest::service {

// GEMMs one TimeGemms request may time together (a design config has ~20).
inline constexpr int kMaxTimedGemms = 4096;
// A Compare answer lists at most this many GEMMs (its summaries count every
// one); each side reads at most kMaxComparedGemmsRead GEMMs (more is
// RESOURCE_EXHAUSTED naming the selector), and a spec limiting it expands to
// at most kMaxCompareSpecGemms.
inline constexpr size_t kMaxComparedGemms = 20'000;
inline constexpr int64_t kMaxComparedGemmsRead = 200'000;
inline constexpr int64_t kMaxCompareSpecGemms = 200'000;

// Sweep runs at this priority: ahead of nightly batches (0).
inline constexpr int kInteractivePriority = 100;
// SubmitJob's priority band: a client's, and an operator's (an operator
// token, or every caller of a crestd without tokens).
inline constexpr int kMaxClientPriority = 100;
inline constexpr int kMaxOperatorPriority = 10'000;
// Stream slots kept for operator tokens (ServiceOptions::max_streams_per_caller).
inline constexpr int kOperatorStreams = 4;

struct ServiceOptions {
  std::string db_path;
  std::string state_dir;  // snapshots for ExportResults are written here
  int max_streams = 64;   // WatchJob + Sweep + ExportResults open at once
  // Of those, with tokens on, how many callers without a valid token may
  // hold, so that they can never starve authorised ones.
  int max_anonymous_streams = 16;
  // Streams one caller (token, or address without one) may hold; operator
  // tokens are not counted, and with tokens on the last quarter of
  // max_streams (at most kOperatorStreams) is theirs alone.
  int max_streams_per_caller = 8;
  double stream_write_timeout_s = 30;   // a write waiting longer ends its stream
  double stream_idle_timeout_s = 3600;  // a stream with nothing written this long ends; 0: never
  // Costly answers (QueryDff, TimeGemms, Compare): answer_pool.h.
  AnswerPoolOptions answers;
  // An answer larger than this is refused, naming the limit (gRPC clients
  // refuse more than 4 MiB by default).
  size_t max_answer_bytes = size_t{4} << 20;
  // A QueryDff ranks at most this many GEMMs (candidates × GEMMs of each).
  int64_t max_query_gemms = 50'000;
  int max_list = 1000;                      // ListJobs rows at most
  size_t max_list_bytes = size_t{1} << 20;  // a ListJobs page's size at most
  std::string host;                         // this node's name, as GetNodeInfo reports it
  Env* env = nullptr;                       // the filesystem for snapshots; never null once running
  // Cached answers at most (entries, bytes); 0 entries: no cache.
  size_t cache_entries = 4096;
  size_t cache_bytes = size_t{64} << 20;
};

// Every method of the generated completion-queue API, raw (bytes in, bytes
// out): requests are parsed after the caller is authorized, and bytes that
// do not parse are answered INVALID_ARGUMENT naming the message type.
using RawCrestService = v1::Crest::WithRawMethod_GetNodeInfo<v1::Crest::WithRawMethod_QueryDff<
    v1::Crest::WithRawMethod_LookupGemm<v1::Crest::WithRawMethod_TimeGemms<
        v1::Crest::WithRawMethod_Predict<v1::Crest::WithRawMethod_Compare<
            v1::Crest::WithRawMethod_Sweep<v1::Crest::WithRawMethod_SubmitJob<
                v1::Crest::WithRawMethod_GetJob<v1::Crest::WithRawMethod_ListJobs<
                    v1::Crest::WithRawMethod_CancelJob<v1::Crest::WithRawMethod_WatchJob<
                        v1::Crest::WithRawMethod_ExportResults<v1::Crest::Service>>>>>>>>>>>>>;

// The answers (QueryDff, LookupGemm, TimeGemms, Predict) come from the
// node's database through answers::StoreAnswers, and are cached by results
// generation (answer_cache.h). Calls are served from a completion queue
// (queued_calls.h).
class CrestService final : public RawCrestService {
 public:
  CrestService(ServiceOptions options, StorePool& pool, JobQueue& queue, const Authorizer& auth,
               Metrics& metrics);

  // What the cache has served, for metrics and tests.
  const AnswerCache& cache() const { return cache_; }

  // Asks for the first call of every method on `queue` (each call asks for
  // the next); the service outlives the queue's calls.
  void Serve(CallQueue& queue);
  // Finishes every answer still waiting for the answer pool uncomputed
  // (UNAVAILABLE) and joins the pool's threads: after the server's
  // Shutdown, before the queue stops.
  void StopAnswers() { answer_pool_.Stop(); }

 private:
  template <typename Request, typename Response>
  using UnaryHandler = absl::Status (CrestService::*)(const Caller& caller, const Request&,
                                                      Response*);
  template <typename Request>
  using StreamStarter = StreamReactor* (CrestService::*)(grpc::ServerContext*, const Caller& caller,
                                                         const Request&);
  struct MethodTraits {
    const char* name;
    Access access;  // what token it needs
    bool cached;    // answers are kept by results generation
    // Computed on the answer pool, not on the serving thread; `smaller` says
    // how to ask for a smaller answer when one is over max_answer_bytes.
    bool costly = false;
    const char* smaller = "";
  };

  // The calls of each method (queued_calls.h), made once (Serve).
  template <typename Request, typename Response>
  UnaryCall::Method UnaryMethod(UnaryCall::Ask ask, MethodTraits traits,
                                UnaryHandler<Request, Response> handler);
  template <typename Request>
  StreamCall::Method StreamMethod(StreamCall::Ask ask, MethodTraits traits,
                                  StreamStarter<Request> start);
  template <typename Request, typename Response>
  void AnswerUnary(UnaryCall& call, MethodTraits traits, UnaryHandler<Request, Response> handler);
  template <typename Request>
  StreamReactor* StartStream(StreamCall& call, MethodTraits traits, StreamStarter<Request> start);

  // What a unary call does once its caller is known: either it is answered
  // at once (the status: a refusal, a cheap answer, a cached one), or it
  // needs a computation, which a costly method runs on the answer pool, or
  // a small one (SmallComputation), which a costly method computes on the
  // serving thread while the pool and the job lanes are idle
  // (AnswerPool::TryRunHere).
  using Computation = std::function<absl::Status()>;
  struct SmallComputation {
    Computation run;
  };
  using FirstStep = std::variant<absl::Status, Computation, SmallComputation>;
  // The request's size counts against the answer pool's bounds while its
  // computation waits.
  void Answer(UnaryCall& call, MethodTraits traits,
              const std::function<FirstStep(const Caller&)>& begin);
  // Logs and counts how the call went, and finishes it (the call may be
  // gone once this returns).
  void Conclude(UnaryCall& call, const char* method, std::chrono::steady_clock::time_point start,
                const absl::Status& status);
  // A request read: its bytes (the cache's key), parsed, and the answer
  // when the cache has it (hits and misses counted here, once a call).
  template <typename Request>
  struct ReadRequest {
    std::string bytes;
    Request request;
    std::optional<store::ResultsGeneration> generation;  // set when the answer may be kept
    std::optional<std::string> cached;
  };
  template <typename Request>
  absl::StatusOr<ReadRequest<Request>> Read(MethodTraits traits, const grpc::ByteBuffer& in);
  // The answer's bytes, computed (and then kept when it may be), or
  // refused over max_answer_bytes.
  template <typename Request, typename Response>
  absl::StatusOr<std::string> Compute(MethodTraits traits, const Caller& caller,
                                      const ReadRequest<Request>& read,
                                      UnaryHandler<Request, Response> handler);
  // A stream slot for `caller` (from the anonymous budget too when tokens are
  // on and it has none), or RESOURCE_EXHAUSTED naming the limit; the
  // function gives it back.
  absl::StatusOr<std::function<void()>> TakeStream(const char* method, const Caller& caller);
  StreamReactor* Refuse(const char* method, const absl::Status& status);

  absl::Status NodeInfo(const Caller& caller, const v1::GetNodeInfoRequest& request,
                        v1::GetNodeInfoResponse* response);
  absl::Status Dff(const Caller& caller, const v1::QueryDffRequest& request,
                   v1::QueryDffResponse* response);
  absl::Status Lookup(const Caller& caller, const v1::LookupGemmRequest& request,
                      v1::LookupGemmResponse* response);
  absl::Status TimeSet(const Caller& caller, const v1::TimeGemmsRequest& request,
                       v1::TimeGemmsResponse* response);
  absl::Status PredictOne(const Caller& caller, const v1::PredictRequest& request,
                          v1::PredictResponse* response);
  absl::Status CompareRuns(const Caller& caller, const v1::CompareRequest& request,
                           v1::CompareResponse* response);
  absl::Status Submit(const Caller& caller, const v1::SubmitJobRequest& request,
                      v1::SubmitJobResponse* response);
  absl::Status GetOneJob(const Caller& caller, const v1::GetJobRequest& request, v1::Job* response);
  absl::Status List(const Caller& caller, const v1::ListJobsRequest& request,
                    v1::ListJobsResponse* response);
  absl::Status Cancel(const Caller& caller, const v1::CancelJobRequest& request, v1::Job* response);
  StreamReactor* Watch(grpc::ServerContext* context, const Caller& caller,
                       const v1::WatchJobRequest& request);
  StreamReactor* StartSweep(grpc::ServerContext* context, const Caller& caller,
                            const v1::SweepRequest& request);
  StreamReactor* Export(grpc::ServerContext* context, const Caller& caller,
                        const v1::ExportResultsRequest& request);

  ServiceOptions options_;
  StorePool& pool_;
  JobQueue& queue_;
  const Authorizer& auth_;
  Metrics& metrics_;
  AnswerCache cache_;
  ResultCounts counts_;
  std::mutex streams_mutex_;
  int streams_ = 0;                               // GUARDED_BY(streams_mutex_)
  int anonymous_streams_ = 0;                     // GUARDED_BY(streams_mutex_)
  std::map<std::string, int> streams_by_caller_;  // GUARDED_BY(streams_mutex_)
  WriteWatchdog watchdog_;
  std::vector<UnaryCall::Method> unary_methods_;    // Serve's: the calls hold them
  std::vector<StreamCall::Method> stream_methods_;  // Serve's
  AnswerPool answer_pool_;           // last: its threads finish calls that use the rest
  std::atomic<int64_t> exports_{0};  // snapshots started (names them)
  std::atomic<int> exporting_{0};    // snapshots being written now
  static constexpr int kMaxExports = 1;
};

}  // namespace crest::service
