#include "crest_service.h"

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <filesystem>

#include "crest/answers/answers.h"
#include "crest/answers/compare.h"
#include "crest/common/str_cat.h"
#include "crest/measure/node_facts.h"
#include "crest/sweep/spec_studies.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/candidates.h"
#include "crest/tuner/dff_query.h"
#include "crest/wire/convert.h"
#include "export_stream.h"
#include "google/protobuf/arena.h"
#include "job_stream.h"
#include "log.h"
#include "raw_message.h"
#include "server_paths.h"

namespace crest::service {
using wire::DffQueryOf;
using wire::Fill;
using wire::GemmOf;
using wire::GpuOf;
using wire::JobStateOf;
using wire::OptionsOf;

namespace {

// InvalidArgument, naming the window, when ranking `query` would take more
// than `max_gemms` GEMMs (one QueryDff of ±49,999 cost a second of CPU).
absl::Status CheckQueryCost(const tuner::DffQuery& query, int64_t max_gemms) {
  auto candidates = tuner::CountDffCandidates(query.dff);
  if (!candidates.ok()) return candidates.status();
  const int64_t per_candidate = tuner::DffCandidateGemmCount(query);
  const int64_t n = *candidates;
  if (n * per_candidate <= max_gemms) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat("window: ±", query.dff.window, " gives ", n, " candidates of ", per_candidate,
             " GEMMs each (", n * per_candidate, "), over crestd's limit of ", max_gemms,
             " GEMMs for one query (--max-query-gemms); narrow the window or raise align"));
}

// The most GEMMs a QueryDff may rank to be computed on the serving thread
// while the answer pool and the job lanes are idle: the default window (257
// candidates) of a train pass with gate and up apart (2,313 GEMMs) is
// within it: 2.8-3.4 ms of crestd's CPU on the 2-core VM where it is
// predicted (an empty database; bench/crestd_hostile_bench, ONLY=small). A
// second answer waits for the pool as before.
constexpr int64_t kSmallQueryGemms = 2400;

// The block on the stack an answer's messages start in (Compute): an answer
// that fits in it takes no heap block for its messages and strings; a larger
// one's arena adds blocks from the heap.
constexpr size_t kAnswerArenaBytes = 16 * 1024;

// Whether a request's answer is small enough to be computed on the serving
// thread (AnswerPool::TryRunHere): a QueryDff of at most kSmallQueryGemms
// GEMMs; no other method's (a malformed request goes the usual way, and
// its handler says what is wrong).
template <typename Request>
bool IsSmall(const Request&) {
  return false;
}
bool IsSmall(const v1::QueryDffRequest& request) {
  auto query = DffQueryOf(request);
  return query.ok() && CheckQueryCost(*query, kSmallQueryGemms).ok();
}

// Whose budget a call counts against: its token's name, or its address.
std::string BudgetKey(const Caller& caller) {
  return (caller.authenticated ? "token " : "address ") + caller.name;
}

// A stream's reactor when the call is refused before it starts.
class Refused final : public StreamReactor {
 public:
  explicit Refused(grpc::Status status) : status_(std::move(status)) {}
  void Begin() override { Finish(status_); }
  void OnDone() override { delete this; }

 private:
  const grpc::Status status_;
};

// The generated RequestX of a unary or a streaming method, for its calls.
template <auto kRequest>
UnaryCall::Ask AskUnary(RawCrestService* service) {
  return [service](grpc::ServerContext* context, grpc::ByteBuffer* request,
                   grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>* writer,
                   grpc::ServerCompletionQueue* cq,
                   void* tag) { (service->*kRequest)(context, request, writer, cq, cq, tag); };
}
template <auto kRequest>
StreamCall::Ask AskStream(RawCrestService* service) {
  return
      [service](grpc::ServerContext* context, grpc::ByteBuffer* request,
                grpc::ServerAsyncWriter<grpc::ByteBuffer>* writer, grpc::ServerCompletionQueue* cq,
                void* tag) { (service->*kRequest)(context, request, writer, cq, cq, tag); };
}

}  // namespace

CrestService::CrestService(ServiceOptions options, StorePool& pool, JobQueue& queue,
                           const Authorizer& auth, Metrics& metrics)
    : options_(std::move(options)),
      pool_(pool),
      queue_(queue),
      auth_(auth),
      metrics_(metrics),
      cache_(options_.cache_entries, options_.cache_bytes),
      watchdog_(options_.stream_write_timeout_s, options_.stream_idle_timeout_s),
      answer_pool_(options_.answers) {}

void CrestService::Serve(CallQueue& queue) {
  using S = RawCrestService;
  unary_methods_ = {
      UnaryMethod(AskUnary<&S::RequestGetNodeInfo>(this), {"GetNodeInfo", Access::kRead, false},
                  &CrestService::NodeInfo),
      UnaryMethod(AskUnary<&S::RequestQueryDff>(this),
                  {"QueryDff", Access::kRead, true, true, "set top, or a narrower window"},
                  &CrestService::Dff),
      UnaryMethod(AskUnary<&S::RequestLookupGemm>(this), {"LookupGemm", Access::kRead, true},
                  &CrestService::Lookup),
      UnaryMethod(AskUnary<&S::RequestTimeGemms>(this),
                  {"TimeGemms", Access::kRead, true, true, "time fewer GEMMs"},
                  &CrestService::TimeSet),
      UnaryMethod(AskUnary<&S::RequestPredict>(this), {"Predict", Access::kRead, true},
                  &CrestService::PredictOne),
      UnaryMethod(AskUnary<&S::RequestCompare>(this),
                  {"Compare", Access::kRead, false, true, "set limit"}, &CrestService::CompareRuns),
      UnaryMethod(AskUnary<&S::RequestSubmitJob>(this), {"SubmitJob", Access::kMutating, false},
                  &CrestService::Submit),
      UnaryMethod(AskUnary<&S::RequestGetJob>(this), {"GetJob", Access::kRead, false},
                  &CrestService::GetOneJob),
      UnaryMethod(AskUnary<&S::RequestListJobs>(this), {"ListJobs", Access::kRead, false},
                  &CrestService::List),
      UnaryMethod(AskUnary<&S::RequestCancelJob>(this), {"CancelJob", Access::kMutating, false},
                  &CrestService::Cancel),
  };
  stream_methods_ = {
      StreamMethod(AskStream<&S::RequestSweep>(this), {"Sweep", Access::kMutating, false},
                   &CrestService::StartSweep),
      StreamMethod(AskStream<&S::RequestWatchJob>(this), {"WatchJob", Access::kRead, false},
                   &CrestService::Watch),
      StreamMethod(AskStream<&S::RequestExportResults>(this),
                   {"ExportResults", Access::kSensitive, false}, &CrestService::Export),
  };
  // Only now: the calls hold their method, and the vectors are complete.
  for (const UnaryCall::Method& m : unary_methods_) UnaryCall::AskNext(queue, m);
  for (const StreamCall::Method& m : stream_methods_) StreamCall::AskNext(queue, m);
}

template <typename Request, typename Response>
UnaryCall::Method CrestService::UnaryMethod(UnaryCall::Ask ask, MethodTraits traits,
                                            UnaryHandler<Request, Response> handler) {
  return {std::move(ask),
          [this, traits, handler](UnaryCall& call) { AnswerUnary(call, traits, handler); }};
}

template <typename Request>
StreamCall::Method CrestService::StreamMethod(StreamCall::Ask ask, MethodTraits traits,
                                              StreamStarter<Request> start) {
  return {std::move(ask),
          [this, traits, start](StreamCall& call) { return StartStream(call, traits, start); }};
}

template <typename Request, typename Response>
void CrestService::AnswerUnary(UnaryCall& call, MethodTraits traits,
                               UnaryHandler<Request, Response> handler) {
  grpc::ByteBuffer* out = call.response();
  Answer(call, traits, [&](const Caller& caller) -> FirstStep {
    auto read = Read<Request>(traits, call.request());
    if (!read.ok()) return read.status();
    if (read->cached) {
      *out = ByteBufferOf(*std::move(read->cached));
      return absl::OkStatus();
    }
    const bool small = IsSmall(read->request);
    // By value: a costly answer is computed after this frame is gone (out
    // stays the call's until it finishes).
    Computation compute([this, out, traits, handler, caller, read = *std::move(read)] {
      auto answer = Compute(traits, caller, read, handler);
      if (!answer.ok()) return answer.status();
      *out = ByteBufferOf(*std::move(answer));
      return absl::OkStatus();
    });
    if (small) return SmallComputation{std::move(compute)};
    return compute;
  });
}

template <typename Request>
absl::StatusOr<CrestService::ReadRequest<Request>> CrestService::Read(MethodTraits traits,
                                                                      const grpc::ByteBuffer& in) {
  ReadRequest<Request> read;
  auto bytes = BytesOf(in);
  if (!bytes.ok()) return bytes.status();
  read.bytes = *std::move(bytes);
  if (auto s = ParseRequest(read.bytes, &read.request); !s.ok()) return s;
  // Cached per GPU: a request naming none the catalogue knows is answered
  // (refused) by its handler.
  if constexpr (requires { read.request.gpu(); }) {
    auto gpu = GpuOf(read.request.gpu());
    if (traits.cached && gpu.ok()) {
      auto g = pool_.Generation(std::string((*gpu)->name));
      if (!g.ok()) return g.status();
      read.generation = *g;
      read.cached = cache_.Find(traits.name, read.bytes, *g);
      metrics_.AnswerCache(traits.name, read.cached.has_value());
    }
  }
  return read;
}

template <typename Request, typename Response>
absl::StatusOr<std::string> CrestService::Compute(MethodTraits traits, const Caller& caller,
                                                  const ReadRequest<Request>& read,
                                                  UnaryHandler<Request, Response> handler) {
  // A costly answer may have been kept by another call while this one
  // waited for the answer pool (200 equal queries are computed once).
  if (read.generation) {
    if (auto kept = cache_.Find(traits.name, read.bytes, *read.generation)) return *kept;
  }
  // The answer's messages and strings in one arena, its first block on this
  // stack: a d_ff answer's rows are dozens of them, each a heap block made
  // and freed otherwise.
  alignas(std::max_align_t) char first_block[kAnswerArenaBytes];
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = first_block;
  arena_options.initial_block_size = sizeof(first_block);
  google::protobuf::Arena arena(arena_options);
  Response& response = *google::protobuf::Arena::CreateMessage<Response>(&arena);
  if (auto s = (this->*handler)(caller, read.request, &response); !s.ok()) return s;
  std::string answer;
  if (!response.SerializeToString(&answer)) {
    return absl::InternalError(StrCat("cannot serialize a ", response.GetTypeName()));
  }
  if (answer.size() > options_.max_answer_bytes) {
    return absl::ResourceExhaustedError(
        StrCat(traits.name, ": the answer is ", answer.size(), " bytes, over crestd's limit of ",
               options_.max_answer_bytes,
               " for one answer (--max-answer-bytes; gRPC clients accept 4 MiB by default); ask "
               "for a smaller one: ",
               traits.smaller));
  }
  if (read.generation) cache_.Put(traits.name, read.bytes, *read.generation, answer);
  return answer;
}

template <typename Request>
StreamReactor* CrestService::StartStream(StreamCall& call, MethodTraits traits,
                                         StreamStarter<Request> start) {
  auto caller = auth_.Check(call.context(), traits.access, traits.name);
  if (!caller.ok()) return Refuse(traits.name, caller.status());
  auto bytes = BytesOf(call.request());
  if (!bytes.ok()) return Refuse(traits.name, bytes.status());
  Request request;
  if (auto s = ParseRequest(*bytes, &request); !s.ok()) return Refuse(traits.name, s);
  return (this->*start)(&call.context(), *caller, request);
}

// Answers after the caller is authorized: at once on the serving thread,
// or, for a costly method's computation, on the answer pool within the
// caller's budget. Errors are logged and latencies recorded (Conclude).
void CrestService::Answer(UnaryCall& call, MethodTraits traits,
                          const std::function<FirstStep(const Caller&)>& begin) {
  const auto start = std::chrono::steady_clock::now();
  auto caller = auth_.Check(call.context(), traits.access, traits.name);
  FirstStep step = caller.ok() ? begin(*caller) : FirstStep(caller.status());
  Computation* computation = std::get_if<Computation>(&step);
  SmallComputation* small = std::get_if<SmallComputation>(&step);
  if (small != nullptr) computation = &small->run;
  // Here, on the serving thread: an answer at once, a cheap method's
  // computation, or a small one while the answer pool and the job lanes are
  // idle (with a job running, computing here cost the job about a sixth of
  // its writes and answered fewer queries: measured, docs/crestd.md).
  const bool small_here = small != nullptr && traits.costly && queue_.RunningCount() == 0 &&
                          answer_pool_.TryRunHere(BudgetKey(*caller));
  if (computation == nullptr || !traits.costly || small_here) {
    const absl::Status status =
        computation != nullptr ? (*computation)() : std::get<absl::Status>(step);
    if (small_here) {
      answer_pool_.DoneHere(BudgetKey(*caller));
      metrics_.AnswerComputed(traits.name, /*on_serving_thread=*/true);
    }
    Conclude(call, traits.name, start, status);
    return;
  }
  // The call stays until it is finished (Conclude), so the pool may hold it.
  AnswerPool::Work work;
  work.caller = BudgetKey(*caller);
  work.bytes = call.request().Length();
  work.left = [&call] { return call.left(); };
  work.compute = [this, traits, compute = std::move(*computation)] {
    metrics_.AnswerComputed(traits.name, /*on_serving_thread=*/false);
    return compute();
  };
  work.finish = [this, &call, traits, start](const absl::Status& status) {
    Conclude(call, traits.name, start, status);
  };
  if (auto posted = answer_pool_.Post(traits.name, std::move(work)); !posted.ok()) {
    Conclude(call, traits.name, start, posted);
  }
}

void CrestService::Conclude(UnaryCall& call, const char* method,
                            std::chrono::steady_clock::time_point start,
                            const absl::Status& status) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status.ok()) {
    metrics_.ObserveRpc(method, seconds, "OK");
    if (LogEnabled(Level::kDebug)) {
      Log(Level::kDebug, "rpc", {{"method", method}, {"us", std::to_string(seconds * 1e6)}});
    }
  } else {
    // The log keeps the whole message; the client gets it without paths.
    const std::string code = absl::StatusCodeToString(status.code());
    metrics_.ObserveRpc(method, seconds, code);
    Log(absl::IsInvalidArgument(status) ? Level::kInfo : Level::kWarn, "rpc_error",
        {{"method", method},
         {"code", code},
         {"message", std::string(status.message())},
         {"peer", call.context().peer()}});
  }
  call.Finish(ToGrpc(status));
}

absl::StatusOr<std::function<void()>> CrestService::TakeStream(const char* method,
                                                               const Caller& caller) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  // With tokens, operators' streams are not counted per caller, and the
  // last slots are theirs: no client, however many, starves the operator.
  const bool operator_token = caller.authenticated && caller.may_cancel_any;
  const int reserve = auth_.enabled() ? std::min(kOperatorStreams, options_.max_streams / 4) : 0;
  const int limit = operator_token ? options_.max_streams : options_.max_streams - reserve;
  if (streams_ >= limit) {
    return absl::ResourceExhaustedError(StrCat(
        method, ": ", streams_, " streams are open, the limit (--max-streams ",
        options_.max_streams,
        reserve > 0 ? StrCat(", of which the last ", reserve, " are kept for operator tokens")
                    : std::string(),
        "); try again when one ends"));
  }
  // Without tokens no caller is known, so there is one budget for all.
  const bool anonymous = auth_.enabled() && !caller.authenticated;
  if (anonymous && anonymous_streams_ >= options_.max_anonymous_streams) {
    return absl::ResourceExhaustedError(
        StrCat(method, ": ", options_.max_anonymous_streams,
               " streams of callers without a token are open, their limit "
               "(--max-anonymous-streams); try again later, or with a token"));
  }
  const std::string key = BudgetKey(caller);
  const auto mine = streams_by_caller_.find(key);
  if (!operator_token && mine != streams_by_caller_.end() &&
      mine->second >= options_.max_streams_per_caller) {
    return absl::ResourceExhaustedError(StrCat(
        method, ": this caller (", caller.authenticated ? "token '" : "address ", caller.name,
        caller.authenticated ? "'" : "", ") has ", options_.max_streams_per_caller,
        " streams open, its limit (--max-streams-per-caller); close one first"));
  }
  ++streams_;
  if (anonymous) ++anonymous_streams_;
  if (!operator_token) ++streams_by_caller_[key];
  return std::function<void()>([this, anonymous, operator_token, key] {
    std::lock_guard<std::mutex> held(streams_mutex_);
    --streams_;
    if (anonymous) --anonymous_streams_;
    if (!operator_token) {
      auto it = streams_by_caller_.find(key);
      if (it != streams_by_caller_.end() && --it->second <= 0) streams_by_caller_.erase(it);
    }
  });
}

StreamReactor* CrestService::Refuse(const char* method, const absl::Status& status) {
  Log(Level::kInfo, "rpc_error",
      {{"method", method},
       {"code", absl::StatusCodeToString(status.code())},
       {"message", std::string(status.message())}});
  return new Refused(ToGrpc(status));
}

absl::Status CrestService::Submit(const Caller& caller, const v1::SubmitJobRequest& request,
                                  v1::SubmitJobResponse* response) {
  // Priorities by role: a client within a band around the interactive
  // Sweep's, an operator (or anyone, where crestd has no tokens) wider.
  const int band = caller.may_cancel_any ? kMaxOperatorPriority : kMaxClientPriority;
  if (request.priority() < -band || request.priority() > band) {
    return absl::InvalidArgumentError(StrCat(
        "priority: ", request.priority(), " is outside -", band, "..", band, ", the band ",
        caller.may_cancel_any ? "an operator may use"
                              : StrCat("a client may use (an operator's token allows -",
                                       kMaxOperatorPriority, "..", kMaxOperatorPriority, ")")));
  }
  SubmitRequest submit;
  submit.spec_json = request.spec().json();
  submit.backend = request.backend();
  submit.priority = request.priority();
  submit.force = request.force();
  submit.client = caller.name;
  auto submitted = queue_.Submit(submit);
  if (!submitted.ok()) return submitted.status();
  FillJob(submitted->job, response->mutable_job());
  return absl::OkStatus();
}

absl::Status CrestService::GetOneJob(const Caller&, const v1::GetJobRequest& request,
                                     v1::Job* response) {
  auto job = queue_.Get(request.id());
  if (!job.ok()) return job.status();
  FillJob(*job, response);
  return absl::OkStatus();
}

absl::Status CrestService::List(const Caller&, const v1::ListJobsRequest& request,
                                v1::ListJobsResponse* response) {
  auto state = JobStateOf(request.state());
  if (!state.ok()) return state.status();
  if (request.limit() < 0 || request.limit() > options_.max_list) {
    return absl::InvalidArgumentError(StrCat("limit: must be between 0 (meaning 100) and ",
                                             options_.max_list, " (got ", request.limit(), ")"));
  }
  if (request.before_id() < 0) {
    return absl::InvalidArgumentError(StrCat(
        "before_id: must be 0 (the newest jobs) or a job id (got ", request.before_id(), ")"));
  }
  const int limit = request.limit() == 0 ? 100 : request.limit();
  auto jobs = queue_.List({.state = *state, .limit = limit, .before_id = request.before_id()});
  if (!jobs.ok()) return jobs.status();
  // A page ends at its byte budget too (the first job always goes in).
  size_t bytes = 0;
  for (const auto& job : *jobs) {
    v1::Job row;
    FillJob(job, &row);
    bytes += row.ByteSizeLong();
    if (bytes > options_.max_list_bytes && response->jobs_size() > 0) break;
    *response->add_jobs() = std::move(row);
  }
  const bool more = response->jobs_size() < static_cast<int>(jobs->size()) ||
                    static_cast<int>(jobs->size()) == limit;
  if (more && response->jobs_size() > 0) {
    response->set_next_before_id(response->jobs(response->jobs_size() - 1).id());
  }
  return absl::OkStatus();
}

absl::Status CrestService::Cancel(const Caller& caller, const v1::CancelJobRequest& request,
                                  v1::Job* response) {
  auto job = queue_.Cancel(request.id(), Canceller{caller.name, caller.may_cancel_any});
  if (!job.ok()) return job.status();
  FillJob(*job, response);
  return absl::OkStatus();
}

StreamReactor* CrestService::Watch(grpc::ServerContext* context, const Caller& caller,
                                   const v1::WatchJobRequest& request) {
  auto release = TakeStream("WatchJob", caller);
  if (!release.ok()) return Refuse("WatchJob", release.status());
  return new JobStream(queue_, request.id(), /*cancel_job_if_client_leaves=*/false,
                       std::make_unique<WatchedWrites>(watchdog_, context, "WatchJob"),
                       *std::move(release));  // its call begins it once bound
}

StreamReactor* CrestService::StartSweep(grpc::ServerContext* context, const Caller& caller,
                                        const v1::SweepRequest& request) {
  SubmitRequest submit;
  submit.spec_json = request.spec().json();
  submit.backend = request.backend();
  submit.priority = kInteractivePriority;
  submit.force = request.force();
  submit.client = caller.name;
  auto release = TakeStream("Sweep", caller);
  if (!release.ok()) return Refuse("Sweep", release.status());
  auto submitted = queue_.Submit(submit);
  if (!submitted.ok()) {
    (*release)();
    return Refuse("Sweep", submitted.status());
  }
  // Only a stream that created its job may cancel it on leaving: one that
  // found the same sweep on its way is one more watcher of another's job.
  auto* stream = new JobStream(queue_, submitted->job.id,
                               /*cancel_job_if_client_leaves=*/submitted->created,
                               std::make_unique<WatchedWrites>(watchdog_, context, "Sweep"),
                               *std::move(release));
  return stream;  // its call begins it once bound
}

StreamReactor* CrestService::Export(grpc::ServerContext* context, const Caller& caller,
                                    const v1::ExportResultsRequest&) {
  auto release = TakeStream("ExportResults", caller);
  if (!release.ok()) return Refuse("ExportResults", release.status());
  // A snapshot copies the whole database: one at a time, so that clients
  // asking together cost one copy each in turn, not all at once.
  if (exporting_.fetch_add(1) >= kMaxExports) {
    exporting_.fetch_sub(1);
    (*release)();
    return Refuse("ExportResults",
                  absl::ResourceExhaustedError(
                      "ExportResults: a snapshot is being written for another client (one at a "
                      "time: each copies the whole database); try again when it ends"));
  }
  const std::string snapshot = (std::filesystem::path(options_.state_dir) /
                                StrCat(".export-", getpid(), "-", exports_.fetch_add(1), ".db"))
                                   .string();
  auto* stream =
      new ExportStream(pool_, *options_.env, snapshot,
                       std::make_unique<WatchedWrites>(watchdog_, context, "ExportResults"),
                       [this, release = *std::move(release)] {
                         exporting_.fetch_sub(1);
                         release();
                       });
  return stream;  // its call begins it once bound
}

absl::Status CrestService::NodeInfo(const Caller&, const v1::GetNodeInfoRequest&,
                                    v1::GetNodeInfoResponse* r) {
  r->set_version(CREST_VERSION);
  r->set_host(options_.host);
  const measure::NodeFacts node = measure::ProbeNode("crestd");
  r->set_model_version(node.predictor);
  for (const std::string& c : node.calibrations) r->add_calibrations(c);
  for (const measure::BackendFacts& b : node.backends) {
    auto* out = r->add_backends();
    out->set_name(b.name);
    out->set_built(b.built);
    out->set_measures(b.measures);
    out->set_detail(b.detail);
  }
  for (const measure::ProbedDevice& d : node.devices) {
    auto* out = r->add_devices();
    Fill(d.device, out);
    out->set_free_bytes(d.free_bytes);
  }
  r->set_device_error(node.device_error);
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  auto stats = counts_.Get(**db, options_.env->MonotonicSeconds());
  if (!stats.ok()) return stats.status();
  auto* d = r->mutable_database();
  d->set_path(WithoutServerPaths(options_.db_path));
  d->set_schema_version(stats->schema_version);
  d->set_file_bytes(stats->file_bytes);
  d->set_measurements(stats->measurements);
  d->set_verified_measurements(stats->verified_measurements);
  d->set_predictions(stats->predictions);
  d->set_devices(stats->devices);
  for (const auto& [state, n] : stats->jobs_by_state) (*d->mutable_jobs_by_state())[state] = n;
  return absl::OkStatus();
}

absl::Status CrestService::Dff(const Caller&, const v1::QueryDffRequest& request,
                               v1::QueryDffResponse* response) {
  auto gpu = GpuOf(request.gpu());
  if (!gpu.ok()) return gpu.status();
  auto query = DffQueryOf(request);
  if (!query.ok()) return query.status();
  auto options = OptionsOf(request.pin(), request.mode(), request.runs(), request.algo());
  if (!options.ok()) return options.status();
  if (auto s = tuner::CheckDtypePath(**gpu, query->dtype); !s.ok()) return s;
  if (auto s = CheckQueryCost(*query, options_.max_query_gemms); !s.ok()) return s;
  absl::StatusOr<tuner::DffRanking> ranking;
  if (request.predict_only()) {
    ranking = answers::ModelAnswers()->Dff(*query, **gpu);
  } else {
    auto db = pool_.Acquire();
    if (!db.ok()) return db.status();
    ranking = answers::StoreAnswers(**db, options_.db_path, *options)->Dff(*query, **gpu);
  }
  if (!ranking.ok()) return ranking.status();
  Fill(*ranking, **gpu, response);
  Fill(options->mode, response->mutable_mode());
  response->set_run_choice(std::string(answers::RunChoiceName(options->runs)));
  response->set_algo_choice(std::string(tuner::AlgoChoiceName(options->algo)));
  return absl::OkStatus();
}

absl::Status CrestService::Lookup(const Caller&, const v1::LookupGemmRequest& request,
                                  v1::LookupGemmResponse* response) {
  auto gpu = GpuOf(request.gpu());
  if (!gpu.ok()) return gpu.status();
  auto gemm = GemmOf(request.gemm());
  if (!gemm.ok()) return gemm.status();
  auto options = OptionsOf(request.pin(), request.mode(), request.runs(), request.algo());
  if (!options.ok()) return options.status();
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  auto answer = answers::StoreAnswers(**db, options_.db_path, *options)->Lookup(*gemm, **gpu);
  if (!answer.ok()) return answer.status();
  Fill(*answer, response);
  return absl::OkStatus();
}

absl::Status CrestService::CompareRuns(const Caller&, const v1::CompareRequest& request,
                                       v1::CompareResponse* response) {
  answers::CompareQuery query;
  query.base = request.base_selector();
  query.now = request.new_selector();
  query.base_name = "base_selector";
  query.now_name = "new_selector";
  if (request.has_threshold()) query.threshold = request.threshold();  // else the default
  query.max_gemms = kMaxComparedGemmsRead;
  auto mode = wire::ModeOf(request.mode());
  if (!mode.ok()) return mode.status();
  query.mode = *mode;
  auto algo = tuner::ParseAlgoChoice(request.algo().empty() ? "best" : request.algo());
  if (!algo) return absl::InvalidArgumentError("algo: must be \"best\" or \"default\"");
  query.algo = *algo;
  if (request.limit() < 0) return absl::InvalidArgumentError("limit: must be 0 or more");
  const size_t limit = request.limit() == 0
                           ? kMaxComparedGemms
                           : std::min(static_cast<size_t>(request.limit()), kMaxComparedGemms);
  if (!request.spec_json().empty()) {
    auto spec = sweep::ParseSweepSpec(request.spec_json(),
                                      {kMaxCompareSpecGemms, "crestd's limit for a compare spec"});
    if (!spec.ok()) return spec.status();
    auto studies = sweep::StudiesOf(*spec);
    if (!studies.ok()) return studies.status();
    query.study_of = *std::move(studies);
  }
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  auto report = answers::Compare(**db, query);
  if (!report.ok()) return report.status();
  wire::Fill(*report, limit, response);
  return absl::OkStatus();
}

absl::Status CrestService::PredictOne(const Caller&, const v1::PredictRequest& request,
                                      v1::PredictResponse* response) {
  auto gpu = GpuOf(request.gpu());
  if (!gpu.ok()) return gpu.status();
  auto gemm = GemmOf(request.gemm());
  if (!gemm.ok()) return gemm.status();
  auto p = crest::tuner::Predict(*gemm, **gpu);
  if (!p.ok()) return p.status();
  Fill(*gemm, **gpu, *p, response);
  return absl::OkStatus();
}

}  // namespace crest::service
