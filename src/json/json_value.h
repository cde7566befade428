// File: json_value.h
// Layer: kairos_json. A parsed JSON value (the one DOM type; the reader in json_reader.h
// produces it, one trace event or one RPC message at a time).
// Threading: a plain value; no shared state.
#ifndef KAIROS_SRC_JSON_JSON_VALUE_H_
#define KAIROS_SRC_JSON_JSON_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kairos {

// Numbers keep their source text so 64-bit integers and the 3-digit-ns `ts` fractions
// survive exactly.
struct JsonValue {
  enum class Type : uint8_t { kNull = 0, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // kString: the decoded string; kNumber: the number as written
  std::vector<JsonValue> items;                              // kArray
  std::vector<std::pair<std::string, JsonValue>> members;    // kObject, in file order

  bool is_number() const { return type == Type::kNumber; }
  bool is_string() const { return type == Type::kString; }
  bool is_object() const { return type == Type::kObject; }
  bool is_array() const { return type == Type::kArray; }
  // First member named `key`, or null. Objects only. Inline, and lengths compared before
  // bytes: trace readers call it ~20 times per event with literal keys (the strlen folds away).
  const JsonValue* Find(std::string_view key) const {
    for (const auto& [k, v] : members)
      if (k.size() == key.size() &&
          std::char_traits<char>::compare(k.data(), key.data(), key.size()) == 0)
        return &v;
    return nullptr;
  }
  // Numeric value (numbers, and strings holding a number); `fallback` otherwise.
  int64_t AsInt(int64_t fallback = 0) const;
  uint64_t AsUint(uint64_t fallback = 0) const;
  double AsDouble(double fallback = 0) const;
  // True, with *out set, when this is a number written as an integer that fits int64_t
  // ("3" yes; "3.0", "1e3", "9223372036854775808" no). For strict protocol fields.
  bool AsExactInt(int64_t* out) const;
  // Compact JSON text of this value (keys and strings re-escaped).
  std::string ToJson() const;
};

}  // namespace kairos

#endif  // KAIROS_SRC_JSON_JSON_VALUE_H_
