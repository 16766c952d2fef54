// Parses a text-format protobuf, turning the parser's first error into a
// one-line Status ("line L:C: message") instead of its stderr log.
#ifndef SERVESIM_BASE_TEXT_PROTO_H_
#define SERVESIM_BASE_TEXT_PROTO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"

namespace servesim {

// InvalidArgument "line L:C: <parser message>" on failure.
inline absl::Status ParseTextProto(const std::string& text, google::protobuf::Message* message) {
  class FirstError : public google::protobuf::io::ErrorCollector {
   public:
    void AddError(int line, int column, const std::string& what) override {
      if (first.empty()) first = absl::StrCat("line ", line + 1, ":", column + 1, ": ", what);
    }
    std::string first;
  } errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(text, message)) return absl::OkStatus();
  return absl::InvalidArgumentError(errors.first.empty() ? "text parse error" : errors.first);
}

}  // namespace servesim

#endif  // SERVESIM_BASE_TEXT_PROTO_H_
