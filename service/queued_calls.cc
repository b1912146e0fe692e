#include "queued_calls.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <string>

#include "log.h"
#include "raw_message.h"

namespace crest::service {

CallQueue::CallQueue(std::unique_ptr<grpc::ServerCompletionQueue> cq) : cq_(std::move(cq)) {}

CallQueue::~CallQueue() { Stop(std::chrono::seconds(0)); }

void CallQueue::Added() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++alive_;
}

void CallQueue::Removed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--alive_ == 0) none_left_.notify_all();
}

int64_t CallQueue::Alive() {
  std::lock_guard<std::mutex> lock(mutex_);
  return alive_;
}

void CallQueue::Start() {
  thread_ = std::thread([this] { Run(); });
}

void CallQueue::Run() {
  void* tag = nullptr;
  bool ok = false;
  while (cq_->Next(&tag, &ok)) static_cast<QueueEvent*>(tag)->Happened(ok);
}

void CallQueue::Stop(std::chrono::duration<double> wait) {
  if (stopping_.exchange(true)) return;  // stopped already
  int64_t left = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    none_left_.wait_for(lock, wait, [this] { return alive_ == 0; });
    left = alive_;
  }
  if (left > 0) {
    // Shutting the queue down under a call that may still start an
    // operation on it would abort the process: the thread serves them on,
    // and the queue is left to the process's end, never freed under it.
    Log(Level::kError, "calls_left_at_stop", {{"calls", std::to_string(left)}});
    if (thread_.joinable()) thread_.detach();
    static_cast<void>(cq_.release());
    return;
  }
  cq_->Shutdown();
  if (thread_.joinable()) {
    thread_.join();
  } else {
    Run();  // never started: drain what was asked for
  }
}

// -- unary calls --

void UnaryCall::AskNext(CallQueue& queue, const Method& method) { new UnaryCall(queue, method); }

UnaryCall::UnaryCall(CallQueue& queue, const Method& method) : queue_(queue), method_(method) {
  queue_.Added();
  context_.AsyncNotifyWhenDone(&over_event_);
  method_.ask(&context_, &request_, &writer_, queue_.cq(), &arrived_);
}

UnaryCall::~UnaryCall() { queue_.Removed(); }

void UnaryCall::Arrived(bool ok) {
  if (!ok) {  // the server stops: no call came, and none is over
    delete this;
    return;
  }
  if (!queue_.stopping()) AskNext(queue_, method_);
  method_.answer(*this);
}

void UnaryCall::Finish(const grpc::Status& status) {
  if (status.ok()) {
    writer_.Finish(response_, status, &sent_event_);
  } else {
    writer_.FinishWithError(status, &sent_event_);
  }
}

void UnaryCall::Sent(bool) {
  sent_ = true;
  Settle();
}

void UnaryCall::Over(bool) {
  over_ = true;
  if (context_.IsCancelled()) left_ = true;
  Settle();
}

void UnaryCall::Settle() {
  if (sent_ && over_) delete this;
}

// -- streams --

void StreamReactor::StartWrite(const grpc::ByteBuffer* message) { call_->Write(message); }
void StreamReactor::Finish(const grpc::Status& status) { call_->Finish(status); }

void StreamCall::AskNext(CallQueue& queue, const Method& method) { new StreamCall(queue, method); }

StreamCall::StreamCall(CallQueue& queue, const Method& method) : queue_(queue), method_(method) {
  queue_.Added();
  context_.AsyncNotifyWhenDone(&over_event_);
  method_.ask(&context_, &request_, &writer_, queue_.cq(), &arrived_);
}

StreamCall::~StreamCall() { queue_.Removed(); }

void StreamCall::Arrived(bool ok) {
  if (!ok) {
    delete this;
    return;
  }
  if (!queue_.stopping()) AskNext(queue_, method_);
  reactor_ = method_.start(*this);
  reactor_->call_ = this;
  reactor_->Begin();
}

void StreamCall::Write(const grpc::ByteBuffer* message) { writer_.Write(*message, &written_); }

void StreamCall::Finish(const grpc::Status& status) { writer_.Finish(status, &sent_event_); }

void StreamCall::Written(bool ok) { reactor_->OnWriteDone(ok); }

void StreamCall::Sent(bool) {
  sent_ = true;
  Settle();
}

void StreamCall::Over(bool) {
  over_ = true;
  if (context_.IsCancelled()) reactor_->OnCancel();
  Settle();
}

void StreamCall::Settle() {
  if (!sent_ || !over_) return;
  reactor_->OnDone();
  delete this;
}

// -- methods no service registered --

namespace {

constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";
constexpr size_t kMaxServiceName = 1024;

// grpc.health.v1.HealthCheckRequest's `service` (field 1), or false when
// the bytes are not one.
bool ParseHealthRequest(const std::string& bytes, std::string* service) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (const uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == 1 &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t size = 0;
      if (!in.ReadVarint32(&size) || size > kMaxServiceName ||
          !in.ReadString(service, static_cast<int>(size))) {
        return false;
      }
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

}  // namespace

void GenericCall::AskNext(CallQueue& queue, grpc::AsyncGenericService& service,
                          const std::atomic<bool>& serving) {
  new GenericCall(queue, service, serving);
}

GenericCall::GenericCall(CallQueue& queue, grpc::AsyncGenericService& service,
                         const std::atomic<bool>& serving)
    : queue_(queue), service_(service), serving_(serving) {
  queue_.Added();
  service_.RequestCall(&context_, &stream_, queue_.cq(), queue_.cq(), &arrived_);
}

GenericCall::~GenericCall() { queue_.Removed(); }

void GenericCall::Arrived(bool ok) {
  if (!ok) {
    delete this;
    return;
  }
  if (!queue_.stopping()) AskNext(queue_, service_, serving_);
  if (context_.method() != kHealthCheck) {
    stream_.Finish(
        grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "crestd has no method " + context_.method()),
        &sent_);
    return;
  }
  stream_.Read(&message_, &read_);
}

void GenericCall::Read(bool ok) {
  absl::StatusOr<std::string> bytes = ok ? BytesOf(message_) : absl::CancelledError("no request");
  std::string service;
  if (!bytes.ok() || !ParseHealthRequest(*bytes, &service)) {
    stream_.Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                "request: not a grpc.health.v1.HealthCheckRequest"),
                   &sent_);
    return;
  }
  if (!service.empty() && service != "crest.v1.Crest") {
    stream_.Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "crestd serves no " + service),
                   &sent_);
    return;
  }
  // grpc.health.v1.HealthCheckResponse: status (field 1) SERVING (1) or
  // NOT_SERVING (2).
  const char answer[] = {0x08, static_cast<char>(serving_.load() ? 1 : 2)};
  stream_.WriteAndFinish(ByteBufferOf(std::string(answer, sizeof(answer))), grpc::WriteOptions(),
                         grpc::Status::OK, &sent_);
}

void GenericCall::Sent(bool) { delete this; }

}  // namespace crest::service
