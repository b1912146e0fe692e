// Internal to crestd: gRPC calls served from one completion queue by one
// thread of crestd's own (QueueServer), in place of gRPC's callback API.
//
// Why: in gRPC 1.51 the callback API serves from two threads of its own that
// hand polling to each other on every call (a futex wake and an eventfd
// kick, each a hypervisor exit on a VM). On the 2-core VM a call that does
// no work cost the server 62-90 us of CPU that way against 28-42 us with one
// thread of the server's own on a completion queue, and a call doing 200 us
// of work 317 against 259 (bench/grpc_api_bench; docs/crestd.md, "gRPC's own
// cost a call, by API"). Any callback service in the server (gRPC's default
// health service is one) brings those threads back, so none is left:
// grpc.health.v1's Check is answered here too (GenericCall).
//
// Each call is an object made before its call arrives (it asks gRPC for the
// next call of its method), which asks for the next one when it arrives and
// deletes itself once gRPC is done with it: its status sent (or the call
// broken) and gRPC's word that the call is over received. Reactions run on
// the serving thread, one at a time; Finish and StartWrite may be called
// from any thread.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/async_stream.h>
#include <grpcpp/support/async_unary_call.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace crest::service {

// What the completion queue returns: each call owns one per kind of event.
class QueueEvent {
 public:
  virtual void Happened(bool ok) = 0;

 protected:
  ~QueueEvent() = default;
};

// An event that runs a member function of its call.
template <typename Call, void (Call::*kOn)(bool)>
class EventOf final : public QueueEvent {
 public:
  explicit EventOf(Call* call) : call_(call) {}
  void Happened(bool ok) override { (call_->*kOn)(ok); }

 private:
  Call* call_;
};

// The queue calls are served from, and what every call shares.
class CallQueue final {
 public:
  explicit CallQueue(std::unique_ptr<grpc::ServerCompletionQueue> cq);
  ~CallQueue();  // Stop()s

  grpc::ServerCompletionQueue* cq() const { return cq_.get(); }
  // Once true, an arriving call asks for no next one (the server stops).
  bool stopping() const { return stopping_.load(); }
  void Added();    // a call was made
  void Removed();  // a call was deleted
  // Calls alive now: asked for and not arrived (one a method), or arrived
  // and not yet deleted.
  int64_t Alive();

  // Starts the serving thread (once every method has a call asked for).
  void Start();
  // After the server's Shutdown: no call asks for another; waits until
  // every call is deleted (each started its last operation on the queue),
  // at most `wait`; then shuts the queue down and joins the thread. Calls
  // still alive after `wait` are left (logged): the queue and its thread
  // are then left to the process's end, never shut down or freed under them.
  void Stop(std::chrono::duration<double> wait);

 private:
  void Run();

  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable none_left_;
  int64_t alive_ = 0;  // GUARDED_BY(mutex_)
  std::thread thread_;
};

// One unary call, raw bytes in and out.
class UnaryCall final {
 public:
  using Ask = std::function<void(grpc::ServerContext*, grpc::ByteBuffer*,
                                 grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>*,
                                 grpc::ServerCompletionQueue*, void* tag)>;
  // Answers an arrived call, on the serving thread: it calls Finish, now or
  // later from another thread.
  using Answer = std::function<void(UnaryCall&)>;
  struct Method {
    Ask ask;  // the generated RequestX
    Answer answer;
  };

  // Asks for the next call of `method`, which outlives the queue's calls.
  static void AskNext(CallQueue& queue, const Method& method);

  grpc::ServerContext& context() { return context_; }
  const grpc::ByteBuffer& request() const { return request_; }
  grpc::ByteBuffer* response() { return &response_; }
  // Sends `status`, and with OK the response; once, from any thread.
  void Finish(const grpc::Status& status);
  // True once gRPC has said the caller left (it cancelled, or its deadline
  // passed); read from any thread.
  bool left() const { return left_.load(); }

 private:
  UnaryCall(CallQueue& queue, const Method& method);
  ~UnaryCall();
  void Arrived(bool ok);
  void Sent(bool ok);
  void Over(bool ok);
  void Settle();  // deletes the call once sent and over

  CallQueue& queue_;
  const Method& method_;
  grpc::ServerContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> writer_{&context_};
  EventOf<UnaryCall, &UnaryCall::Arrived> arrived_{this};
  EventOf<UnaryCall, &UnaryCall::Sent> sent_event_{this};
  EventOf<UnaryCall, &UnaryCall::Over> over_event_{this};
  bool sent_ = false;  // serving thread only
  bool over_ = false;  // serving thread only
  std::atomic<bool> left_{false};
};

class StreamCall;

// What crestd's server-streaming methods implement: the part of gRPC's
// ServerWriteReactor<ByteBuffer> they use. Reactions (Begin, OnWriteDone,
// OnCancel, OnDone) run on the serving thread; StartWrite and Finish may be
// called from any thread, one write in flight at a time, Finish once and
// not while a write is in flight.
class StreamReactor {
 public:
  virtual ~StreamReactor() = default;
  // Starts the stream once its call is bound (it may write or finish now).
  virtual void Begin() {}
  void StartWrite(const grpc::ByteBuffer* message);
  void Finish(const grpc::Status& status);
  virtual void OnWriteDone(bool /*ok*/) {}
  // The client left (or the call was cancelled); Finish must still come.
  virtual void OnCancel() {}
  // gRPC is done with the call: the last reaction; the reactor deletes
  // itself (its call goes right after).
  virtual void OnDone() = 0;

 private:
  friend class StreamCall;
  StreamCall* call_ = nullptr;
};

// One server-streaming call: a raw request, raw messages out.
class StreamCall final {
 public:
  using Ask = std::function<void(grpc::ServerContext*, grpc::ByteBuffer*,
                                 grpc::ServerAsyncWriter<grpc::ByteBuffer>*,
                                 grpc::ServerCompletionQueue*, void* tag)>;
  // Makes the reactor of an arrived call, on the serving thread (never
  // null; a refusal is a reactor that finishes at once).
  using Start = std::function<StreamReactor*(StreamCall&)>;
  struct Method {
    Ask ask;
    Start start;
  };

  static void AskNext(CallQueue& queue, const Method& method);

  grpc::ServerContext& context() { return context_; }
  const grpc::ByteBuffer& request() const { return request_; }

 private:
  friend class StreamReactor;
  StreamCall(CallQueue& queue, const Method& method);
  ~StreamCall();
  void Write(const grpc::ByteBuffer* message);
  void Finish(const grpc::Status& status);
  void Arrived(bool ok);
  void Written(bool ok);
  void Sent(bool ok);
  void Over(bool ok);
  void Settle();

  CallQueue& queue_;
  const Method& method_;
  grpc::ServerContext context_;
  grpc::ByteBuffer request_;
  grpc::ServerAsyncWriter<grpc::ByteBuffer> writer_{&context_};
  EventOf<StreamCall, &StreamCall::Arrived> arrived_{this};
  EventOf<StreamCall, &StreamCall::Written> written_{this};
  EventOf<StreamCall, &StreamCall::Sent> sent_event_{this};
  EventOf<StreamCall, &StreamCall::Over> over_event_{this};
  StreamReactor* reactor_ = nullptr;  // once arrived
  bool sent_ = false;                 // serving thread only
  bool over_ = false;                 // serving thread only
};

// A call of a method no service registered: grpc.health.v1.Health/Check is
// answered (SERVING for "" and crest.v1.Crest until the server stops,
// NOT_FOUND for another service), every other method UNIMPLEMENTED
// (Health/Watch too, which the health protocol allows).
class GenericCall final {
 public:
  static void AskNext(CallQueue& queue, grpc::AsyncGenericService& service,
                      const std::atomic<bool>& serving);

 private:
  GenericCall(CallQueue& queue, grpc::AsyncGenericService& service,
              const std::atomic<bool>& serving);
  ~GenericCall();
  void Arrived(bool ok);
  void Read(bool ok);
  void Sent(bool ok);

  CallQueue& queue_;
  grpc::AsyncGenericService& service_;
  const std::atomic<bool>& serving_;
  grpc::GenericServerContext context_;
  grpc::GenericServerAsyncReaderWriter stream_{&context_};
  grpc::ByteBuffer message_;
  EventOf<GenericCall, &GenericCall::Arrived> arrived_{this};
  EventOf<GenericCall, &GenericCall::Read> read_{this};
  EventOf<GenericCall, &GenericCall::Sent> sent_{this};
};

}  // namespace crest::service
