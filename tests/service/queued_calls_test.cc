// crestd's completion-queue calls (queued_calls.h) on a real gRPC server in
// this process: a unary call answered later from another thread, a caller
// who left known to its call, a stream written, cancelled and done once,
// and every call deleted once gRPC is done with it.
#include "queued_calls.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crest/v1/crest.grpc.pb.h"
#include "gtest/gtest.h"
#include "raw_message.h"

namespace crest::service {
namespace {

using Clock = std::chrono::steady_clock;
using RawService =
    v1::Crest::WithRawMethod_GetNodeInfo<v1::Crest::WithRawMethod_WatchJob<v1::Crest::Service>>;

// What the server's calls saw, in order, for the test to wait on.
class Seen {
 public:
  void Add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(what);
    cv_.notify_all();
  }
  // Waits (5 s at most) until `n` events were seen; returns them.
  std::vector<std::string> WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(5), [&] { return seen_.size() >= n; });
    return seen_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> seen_;
};

// A server with GetNodeInfo and WatchJob served raw from a CallQueue.
class QueuedCalls : public ::testing::Test {
 protected:
  void Start(UnaryCall::Answer answer, StreamCall::Start start) {
    unary_ = {[this](grpc::ServerContext* c, grpc::ByteBuffer* in,
                     grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>* w,
                     grpc::ServerCompletionQueue* cq,
                     void* tag) { service_.RequestGetNodeInfo(c, in, w, cq, cq, tag); },
              std::move(answer)};
    stream_ = {[this](grpc::ServerContext* c, grpc::ByteBuffer* in,
                      grpc::ServerAsyncWriter<grpc::ByteBuffer>* w, grpc::ServerCompletionQueue* cq,
                      void* tag) { service_.RequestWatchJob(c, in, w, cq, cq, tag); },
               std::move(start)};
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    queue_ = std::make_unique<CallQueue>(builder.AddCompletionQueue());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    UnaryCall::AskNext(*queue_, unary_);
    StreamCall::AskNext(*queue_, stream_);
    queue_->Start();
    stub_ = v1::Crest::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                   grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (server_ == nullptr) return;
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    queue_->Stop(std::chrono::seconds(5));
    EXPECT_EQ(queue_->Alive(), 0) << "every call deleted before the queue stopped";
  }

  // Waits (5 s at most) until `n` calls are alive.
  bool AliveBecomes(int64_t n) {
    const auto end = Clock::now() + std::chrono::seconds(5);
    while (queue_->Alive() != n && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return queue_->Alive() == n;
  }

  RawService service_;
  UnaryCall::Method unary_;
  StreamCall::Method stream_;
  std::unique_ptr<CallQueue> queue_;  // outlives the server
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Crest::Stub> stub_;
};

StreamCall::Start NoStreams() {
  return [](StreamCall&) -> StreamReactor* { return nullptr; };
}

TEST_F(QueuedCalls, AUnaryCallIsAnsweredLaterFromAnotherThreadAndTheNextOneIsAskedFor) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<UnaryCall*> calls;
  Start(
      [&](UnaryCall& call) {
        std::lock_guard<std::mutex> lock(mu);
        calls.push_back(&call);
        cv.notify_all();
      },
      NoStreams());
  std::thread client([&] {
    for (int i = 0; i < 2; ++i) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::GetNodeInfoResponse response;
      const grpc::Status status = stub_->GetNodeInfo(&context, {}, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(response.host(), "answer " + std::to_string(i));
    }
  });
  for (size_t i = 0; i < 2; ++i) {
    UnaryCall* call = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu);
      ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return calls.size() > i; }));
      call = calls[i];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the answer comes later
    v1::GetNodeInfoResponse answer;
    answer.set_host("answer " + std::to_string(i));
    ASSERT_TRUE(ToBytes(answer, call->response()).ok());
    call->Finish(grpc::Status::OK);
  }
  client.join();
  EXPECT_TRUE(AliveBecomes(2)) << "only the next call of each method is left: " << queue_->Alive();
}

TEST_F(QueuedCalls, ACallerWhoLeftIsKnownToItsCallWhichIsStillFinishedAndDeleted) {
  std::mutex mu;
  std::condition_variable cv;
  UnaryCall* held = nullptr;
  Start(
      [&](UnaryCall& call) {
        std::lock_guard<std::mutex> lock(mu);
        held = &call;
        cv.notify_all();
      },
      NoStreams());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  v1::GetNodeInfoResponse response;
  const grpc::Status status = stub_->GetNodeInfo(&context, {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return held != nullptr; }));
  }
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (!held->left() && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(held->left());
  EXPECT_EQ(queue_->Alive(), 3) << "the held call, and the next of each method";
  held->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the caller left"));
  EXPECT_TRUE(AliveBecomes(2)) << queue_->Alive();
}

// Writes `count` events, then finishes OK; a cancel finishes it CANCELLED
// once no write is in flight.
class Writer final : public StreamReactor {
 public:
  Writer(Seen& seen, int count) : seen_(seen), count_(count) {}
  void Begin() override { Next(); }
  void OnWriteDone(bool ok) override {
    seen_.Add(ok ? "written" : "write failed");
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok || cancelled_) {
      FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "gone"));
    } else if (written_ < count_) {
      Next();
    } else if (count_ > 0 && written_ == count_ && !hold_) {
      FinishOnce(grpc::Status::OK);
    }
  }
  void OnCancel() override {
    seen_.Add("cancel");
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    if (!writing_) FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "gone"));
  }
  void OnDone() override {
    seen_.Add("done");
    delete this;
  }
  void Hold() { hold_ = true; }  // after the last write, wait for a cancel

 private:
  void Next() {
    v1::JobEvent event;
    event.set_new_results(++written_);
    EXPECT_TRUE(ToBytes(event, &bytes_).ok());
    writing_ = true;
    StartWrite(&bytes_);
  }
  void FinishOnce(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  Seen& seen_;
  const int count_;
  std::mutex mu_;
  grpc::ByteBuffer bytes_;
  int written_ = 0;
  bool writing_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
  bool hold_ = false;
};

TEST_F(QueuedCalls, AStreamIsWrittenInOrderFinishedAndDoneOnce) {
  Seen seen;
  Start([](UnaryCall& call) { call.Finish(grpc::Status::OK); },
        [&](StreamCall&) -> StreamReactor* { return new Writer(seen, 3); });
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto reader = stub_->WatchJob(&context, {});
  v1::JobEvent event;
  std::vector<int64_t> got;
  while (reader->Read(&event)) got.push_back(event.new_results());
  const grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(got, (std::vector<int64_t>{1, 2, 3}));
  const auto events = seen.WaitFor(4);
  EXPECT_EQ(events, (std::vector<std::string>{"written", "written", "written", "done"}));
  EXPECT_TRUE(AliveBecomes(2)) << queue_->Alive();
}

TEST_F(QueuedCalls, AClientLeavingAStreamIsToldToItsReactorBeforeItIsDone) {
  Seen seen;
  Start([](UnaryCall& call) { call.Finish(grpc::Status::OK); },
        [&](StreamCall&) -> StreamReactor* {
          auto* writer = new Writer(seen, 1);
          writer->Hold();
          return writer;
        });
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto reader = stub_->WatchJob(&context, {});
  v1::JobEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.new_results(), 1);
  context.TryCancel();
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  const auto events = seen.WaitFor(3);
  EXPECT_EQ(events, (std::vector<std::string>{"written", "cancel", "done"}));
  EXPECT_TRUE(AliveBecomes(2)) << queue_->Alive();
}

}  // namespace
}  // namespace crest::service
