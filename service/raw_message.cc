#include "raw_message.h"

#include <vector>

#include "crest/common/str_cat.h"

namespace crest::service {

absl::StatusOr<std::string> BytesOf(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return absl::InvalidArgumentError("request: unreadable bytes");
  std::string data;
  data.reserve(buffer.Length());
  for (const auto& s : slices) data.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return data;
}

absl::Status ParseRequest(const std::string& bytes, google::protobuf::Message* out) {
  if (!out->ParseFromString(bytes)) {
    return absl::InvalidArgumentError(StrCat("request: ", bytes.size(), " bytes that are not a ",
                                             out->GetTypeName(), " (protobuf wire format)"));
  }
  return absl::OkStatus();
}

grpc::ByteBuffer ByteBufferOf(std::string bytes) {
  grpc::Slice slice(std::move(bytes));
  return grpc::ByteBuffer(&slice, 1);
}

absl::Status ToBytes(const google::protobuf::Message& message, grpc::ByteBuffer* out) {
  std::string data;
  if (!message.SerializeToString(&data)) {
    return absl::InternalError(StrCat("cannot serialize a ", message.GetTypeName()));
  }
  *out = ByteBufferOf(std::move(data));
  return absl::OkStatus();
}

}  // namespace crest::service
