// Internal to crestd: messages to and from the bytes gRPC carries. crestd
// takes every method's request as bytes and parses it here, so that bytes
// that are not the method's request message are answered INVALID_ARGUMENT
// naming the type (gRPC's own parsing answers UNIMPLEMENTED, which reads as
// "no such method"), and so that answers can be cached as bytes.
#pragma once

#include <google/protobuf/message.h>
#include <grpcpp/support/byte_buffer.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace crest::service {

// The bytes of a received message, in one string.
absl::StatusOr<std::string> BytesOf(const grpc::ByteBuffer& buffer);

// InvalidArgument "request: N bytes that are not a crest.v1.X" when the
// bytes do not parse as `out`'s type.
absl::Status ParseRequest(const std::string& bytes, google::protobuf::Message* out);

grpc::ByteBuffer ByteBufferOf(std::string bytes);

// `message` serialized into `out`.
absl::Status ToBytes(const google::protobuf::Message& message, grpc::ByteBuffer* out);

}  // namespace crest::service
