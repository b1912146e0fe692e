#include "request_fuzzer.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/impl/codegen/rpc_method.h>
#include <grpcpp/impl/codegen/sync_stream.h>

#include <chrono>
#include <limits>

#include "crest/v1/crest.pb.h"

namespace crest::testing {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

std::string Serialized(const Message& m) {
  std::string out;
  m.SerializeToString(&out);
  return out;
}

constexpr const char* kSpec =
    R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 1}]})";

// Valid requests for each method: what the mutations start from.
std::map<std::string, std::vector<std::string>> Seeds() {
  std::map<std::string, std::vector<std::string>> seeds;
  seeds["GetNodeInfo"] = {Serialized(v1::GetNodeInfoRequest())};
  v1::QueryDffRequest dff;
  dff.set_hidden(4096);
  dff.set_gpu("h100");
  dff.set_window(16);
  v1::QueryDffRequest train = dff;
  train.set_pass(v1::PASS_TRAIN);
  train.set_predict_only(true);
  seeds["QueryDff"] = {Serialized(dff), Serialized(train)};
  v1::LookupGemmRequest lookup;
  lookup.mutable_gemm()->set_m(8192);
  lookup.mutable_gemm()->set_n(4096);
  lookup.mutable_gemm()->set_k(10922);
  lookup.set_gpu("h100");
  seeds["LookupGemm"] = {Serialized(lookup)};
  v1::TimeGemmsRequest set;
  set.set_gpu("h100");
  for (int64_t k : {4096, 10922, 8192}) {
    v1::Gemm* g = set.add_gemms();
    *g = lookup.gemm();
    g->set_k(k);
  }
  v1::TimeGemmsRequest too_many = set;
  for (int i = 0; i < 4100; ++i) *too_many.add_gemms() = lookup.gemm();
  v1::TimeGemmsRequest pooled = set;
  pooled.set_runs("all");
  pooled.set_predict_only(true);
  seeds["TimeGemms"] = {Serialized(set), Serialized(too_many), Serialized(pooled)};
  v1::PredictRequest predict;
  *predict.mutable_gemm() = lookup.gemm();
  predict.set_gpu("a100");
  seeds["Predict"] = {Serialized(predict)};
  v1::SubmitJobRequest submit;
  submit.mutable_spec()->set_json(kSpec);
  seeds["SubmitJob"] = {Serialized(submit)};
  v1::SweepRequest sweep;
  sweep.mutable_spec()->set_json(kSpec);
  seeds["Sweep"] = {Serialized(sweep)};
  v1::GetJobRequest get;
  get.set_id(1);
  seeds["GetJob"] = {Serialized(get)};
  v1::ListJobsRequest list;
  list.set_limit(10);
  seeds["ListJobs"] = {Serialized(list)};
  v1::CancelJobRequest cancel;
  cancel.set_id(1);
  seeds["CancelJob"] = {Serialized(cancel)};
  v1::WatchJobRequest watch;
  watch.set_id(1);
  seeds["WatchJob"] = {Serialized(watch)};
  seeds["ExportResults"] = {Serialized(v1::ExportResultsRequest())};
  v1::CompareRequest compare;
  compare.set_base_selector("cublaslt:130100,date:2026-11-01..");
  compare.set_new_selector("job:1");
  v1::CompareRequest by_spec = compare;
  by_spec.set_base_selector("all");
  by_spec.set_spec_json(kSpec);
  by_spec.set_threshold(0.05);
  by_spec.set_limit(10);
  seeds["Compare"] = {Serialized(compare), Serialized(by_spec)};
  return seeds;
}

std::string RandomBytes(std::mt19937_64& rng, size_t max_length) {
  std::string out(std::uniform_int_distribution<size_t>(0, max_length)(rng), '\0');
  for (auto& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

int64_t ExtremeInt(std::mt19937_64& rng) {
  constexpr int64_t kValues[] = {0,
                                 -1,
                                 1,
                                 7,
                                 4096,
                                 1 << 20,
                                 std::numeric_limits<int32_t>::max(),
                                 std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int64_t>::max(),
                                 std::numeric_limits<int64_t>::min()};
  if (rng() % 3 == 0) return static_cast<int64_t>(rng());
  return kValues[rng() % std::size(kValues)];
}

std::string AbsurdText(std::mt19937_64& rng) {
  const std::string kValues[] = {"",
                                 "h100",
                                 "8/3",
                                 "0/0",
                                 "1e308",
                                 "-1",
                                 "{",
                                 "null",
                                 R"({"version": 1, "gpu": "h100", "dff": [{"hidden": -5}]})",
                                 R"({"version": 1, "gpu": "h100", "gemms": [{"m": 0}]})",
                                 std::string(100000, 'x')};
  if (rng() % 3 == 0) return RandomBytes(rng, 64);
  return kValues[rng() % std::size(kValues)];
}

// Sets one scalar field of `m`, or of a message field inside it, at random.
void SetRandomField(Message* m, std::mt19937_64& rng, int depth = 0) {
  const auto* d = m->GetDescriptor();
  if (d->field_count() == 0) return;
  const FieldDescriptor* f =
      d->field(static_cast<int>(rng() % static_cast<uint64_t>(d->field_count())));
  const auto* r = m->GetReflection();
  if (f->is_repeated() || f->is_map()) return;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      r->SetInt32(m, f, static_cast<int32_t>(ExtremeInt(rng)));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      r->SetInt64(m, f, ExtremeInt(rng));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      r->SetUInt32(m, f, static_cast<uint32_t>(ExtremeInt(rng)));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      r->SetUInt64(m, f, static_cast<uint64_t>(ExtremeInt(rng)));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      r->SetDouble(m, f, static_cast<double>(ExtremeInt(rng)) * 1e-3);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      r->SetFloat(m, f, static_cast<float>(ExtremeInt(rng)));
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      r->SetBool(m, f, (rng() & 1) != 0);
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      r->SetEnumValue(m, f, static_cast<int>(ExtremeInt(rng) % 1000));
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetString(m, f, AbsurdText(rng));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      if (depth < 3) SetRandomField(r->MutableMessage(m, f), rng, depth + 1);
      break;
  }
}

}  // namespace

RequestFuzzer::RequestFuzzer(std::shared_ptr<grpc::Channel> channel, uint64_t seed)
    : channel_(std::move(channel)), rng_(seed) {
  // The fuzzer serializes strings that are not UTF-8 on purpose; protobuf
  // would log each one.
  google::protobuf::SetLogHandler(nullptr);
  const auto* service = v1::GetNodeInfoRequest::descriptor()->file()->FindServiceByName("Crest");
  const auto seeds = Seeds();
  for (int i = 0; i < service->method_count(); ++i) {
    const auto* method = service->method(i);
    Target t;
    t.method = method->name();
    t.streaming = method->server_streaming();
    t.type = method->input_type()->full_name();
    t.seeds = seeds.at(t.method);
    targets_.push_back(std::move(t));
  }
}

std::string RequestFuzzer::MutateField(const Target& target) {
  const auto* type =
      google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(target.type);
  google::protobuf::DynamicMessageFactory factory;
  std::unique_ptr<Message> m(factory.GetPrototype(type)->New());
  m->ParseFromString(target.seeds[rng_() % target.seeds.size()]);
  const int fields = 1 + static_cast<int>(rng_() % 3);
  for (int i = 0; i < fields; ++i) SetRandomField(m.get(), rng_);
  return Serialized(*m);
}

std::string RequestFuzzer::Mutate(const Target& target, std::string* kind) {
  std::string bytes = target.seeds[rng_() % target.seeds.size()];
  switch (rng_() % 5) {
    case 0:
      *kind = "random";
      return RandomBytes(rng_, 48);
    case 1: {
      *kind = "flipped";
      const size_t flips = 1 + rng_() % 4;
      for (size_t i = 0; i < flips && !bytes.empty(); ++i) {
        bytes[rng_() % bytes.size()] ^= static_cast<char>(1 + rng_() % 255);
      }
      return bytes;
    }
    case 2:
      *kind = "cut";
      return bytes.substr(0, bytes.empty() ? 0 : rng_() % bytes.size());
    case 3:
      *kind = "appended";
      return bytes + RandomBytes(rng_, 16);
    default:
      *kind = "field";
      return MutateField(target);
  }
}

grpc::Status RequestFuzzer::Send(grpc::Channel& channel, const std::string& method, bool streaming,
                                 const std::string& bytes, double deadline_s) {
  const std::string path = "/crest.v1.Crest/" + method;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(deadline_s * 1000)));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  if (!streaming) {
    grpc::ByteBuffer response;
    return grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
        &channel, grpc::internal::RpcMethod(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC),
        &context, request, &response);
  }
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
          &channel,
          grpc::internal::RpcMethod(path.c_str(), grpc::internal::RpcMethod::SERVER_STREAMING),
          &context, request));
  grpc::ByteBuffer event;
  while (reader->Read(&event)) {
  }
  return reader->Finish();
}

FuzzAnswer RequestFuzzer::SendOne(double deadline_s) {
  // Exports copy the whole database: one in ten of their share is plenty.
  const Target* pick = &targets_[rng_() % targets_.size()];
  while (pick->method == "ExportResults" && rng_() % 10 != 0) {
    pick = &targets_[rng_() % targets_.size()];
  }
  const Target& target = *pick;
  FuzzAnswer answer;
  answer.method = target.method;
  const std::string bytes = Mutate(target, &answer.kind);
  const grpc::Status status = Send(*channel_, target.method, target.streaming, bytes, deadline_s);
  answer.code = status.error_code();
  answer.message = status.error_message();
  return answer;
}

std::string CountCodes(const std::vector<FuzzAnswer>& answers) {
  static const std::map<grpc::StatusCode, const char*> kNames = {
      {grpc::StatusCode::OK, "OK"},
      {grpc::StatusCode::INVALID_ARGUMENT, "INVALID_ARGUMENT"},
      {grpc::StatusCode::NOT_FOUND, "NOT_FOUND"},
      {grpc::StatusCode::FAILED_PRECONDITION, "FAILED_PRECONDITION"},
      {grpc::StatusCode::RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED"},
      {grpc::StatusCode::UNAUTHENTICATED, "UNAUTHENTICATED"},
      {grpc::StatusCode::PERMISSION_DENIED, "PERMISSION_DENIED"},
      {grpc::StatusCode::UNIMPLEMENTED, "UNIMPLEMENTED"},
      {grpc::StatusCode::INTERNAL, "INTERNAL"},
      {grpc::StatusCode::UNKNOWN, "UNKNOWN"},
      {grpc::StatusCode::DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"},
      {grpc::StatusCode::UNAVAILABLE, "UNAVAILABLE"},
  };
  std::map<std::string, int64_t> counts;
  for (const auto& a : answers) {
    auto it = kNames.find(a.code);
    ++counts[it == kNames.end() ? std::to_string(static_cast<int>(a.code)) : it->second];
  }
  std::string out;
  for (const auto& [name, n] : counts) {
    out += (out.empty() ? "" : ", ") + name + ": " + std::to_string(n);
  }
  return out;
}

}  // namespace crest::testing
