// File: daemon_json.h
// Layer: tools. A small strict JSON reader and string quoting for the Dynolog RPC (the
// library may not depend on a JSON package; nlohmann is for tests only).
// Threading: stateless functions, any thread.
#ifndef KAIROS_TOOLS_DAEMON_JSON_H_
#define KAIROS_TOOLS_DAEMON_JSON_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kairos::tools {

// Minimal JSON value: enough for the RPC requests (objects, arrays, strings, integers, bools).
struct JsonValue {
  enum class Type : uint8_t { kNull = 0, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  bool is_integer = false;
  int64_t integer = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;
};
// Strict RFC 8259 subset parser (nesting depth <= 32); errors name the byte offset.
absl::StatusOr<JsonValue> ParseJson(std::string_view text);
// RFC 8259 string escaping (quotes, backslash, control characters).
std::string JsonQuote(std::string_view text);

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_DAEMON_JSON_H_
