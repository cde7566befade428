// File: json_test_util.h
// Layer: tests (output). Strict JSON parsing for writer tests: a real parser (nlohmann) plus a
// duplicate-key check nlohmann itself does not do, and small helpers to build TraceData.
// The tests' temp directories are test/temp_dir.h's TempDir (included here for them).
// Threading: single-threaded tests.
#ifndef KAIROS_TEST_OUTPUT_JSON_TEST_UTIL_H_
#define KAIROS_TEST_OUTPUT_JSON_TEST_UTIL_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <stdlib.h>

#include "absl/status/status.h"
#include "output/sink.h"
#include "model/trace_data.h"
#include "temp_dir.h"

namespace kairos {
namespace testing {

using OrderedJson = nlohmann::ordered_json;

// Tracks the keys of every open object and remembers the first repeated one. A SAX pass,
// not a parse callback: nlohmann's callback parser rescans the parent container at every
// object end, which made a 50,000-event trace take minutes to check.
class DuplicateKeySax : public nlohmann::json_sax<OrderedJson> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second && !duplicate) {
      duplicate = true;
      dup_key = k;
    }
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error = e.what();
    return false;
  }

  bool duplicate = false;
  std::string dup_key;
  std::string error;

 private:
  std::vector<std::set<std::string>> keys_;
};

// Parses `text`; returns false (and a reason) if it is not valid JSON or any object repeats
// a key. Object key order is preserved in `*out`.
inline bool ParseStrict(const std::string& text, OrderedJson* out, std::string* why) {
  DuplicateKeySax sax;
  if (!OrderedJson::sax_parse(text, &sax)) {
    *why = sax.error;
    return false;
  }
  if (sax.duplicate) {
    *why = "duplicate key: " + sax.dup_key;
    return false;
  }
  try {
    *out = OrderedJson::parse(text);
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
  return true;
}

// A ByteSink that keeps everything in memory and records the size of every Write.
class StringSink : public ByteSink {
 public:
  absl::Status Write(const void* data, size_t size) override {
    if (fail_after_ >= 0 && static_cast<int64_t>(text.size() + size) > fail_after_) {
      ++failed_writes;
      return absl::ResourceExhaustedError("test sink full");
    }
    text.append(static_cast<const char*>(data), size);
    write_sizes.push_back(size);
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    ++finish_calls;
    return absl::OkStatus();
  }
  void FailAfter(int64_t bytes) { fail_after_ = bytes; }

  std::string text;
  std::vector<size_t> write_sizes;
  int finish_calls = 0;
  int failed_writes = 0;

 private:
  int64_t fail_after_ = -1;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

inline Event MakeEvent(EventKind kind, int64_t start, int64_t end, StringId name,
                       uint32_t track) {
  Event e{};
  e.start_ns = start;
  e.end_ns = end;
  e.name = name;
  e.track = track;
  e.detail = kNoDetail;
  e.kind = kind;
  return e;
}

}  // namespace testing
}  // namespace kairos

#endif  // KAIROS_TEST_OUTPUT_JSON_TEST_UTIL_H_
