// File: json_shorten_test.cc
// Layer: test/json. ShortenJsonStrings: exact outputs at the cut, escapes and UTF-8 never
// split, text outside strings untouched, and the result parses.
// Threading: single-threaded.
#include "json/json_shorten.h"

#include <catch2/catch.hpp>

#include <string>

#include "json/json_reader.h"

namespace kairos {
namespace {

TEST_CASE("strings within the bound and everything outside strings are copied") {
  const std::string in = R"({"a":"short","n":[1,2.5,true,null],"k":{"x":"12345678"}})";
  CHECK(ShortenJsonStrings(in, 8) == in);
}

TEST_CASE("a long string is cut at the bound and marked") {
  CHECK(ShortenJsonStrings(R"({"name":"abcdefghij"})", 4) == R"({"name":"abcd..."})");
  // Keys are strings too.
  CHECK(ShortenJsonStrings(R"({"abcdefghij":1})", 4) == R"({"abcd...":1})");
}

TEST_CASE("a cut never splits an escape sequence") {
  // Content: a b \" c: a cut at 3 would fall inside \" -> cut before it.
  CHECK(ShortenJsonStrings(R"(["ab\"cdef"])", 3) == R"(["ab..."])");
  CHECK(ShortenJsonStrings(R"(["a\u003cbcdef"])", 4) == R"(["a..."])");
  CHECK(ShortenJsonStrings(R"(["a\u003cbcdef"])", 7) == R"(["a\u003c..."])");
  CHECK(ShortenJsonStrings(R"(["\\\\\\"])", 3) == R"(["\\..."])");
}

TEST_CASE("a cut never splits a UTF-8 character") {
  // "é" is two bytes (C3 A9): a bound of 2 after "a" would split it.
  CHECK(ShortenJsonStrings("[\"a\xC3\xA9z\"]", 2) == "[\"a...\"]");
  CHECK(ShortenJsonStrings("[\"a\xC3\xA9z\"]", 3) == "[\"a\xC3\xA9...\"]");
}

TEST_CASE("the shortened text of a large document parses") {
  std::string big = "{\"kernels\":[";
  for (int i = 0; i < 10; ++i)
    big += std::string(i ? "," : "") + "{\"name\":\"" + std::string(100000, 'x') + "\\\"q\",\"n\":" +
           std::to_string(i) + "}";
  big += "]}";
  const std::string out = ShortenJsonStrings(big, 2000);
  CHECK(out.size() < 25000);
  absl::StatusOr<JsonValue> v = ParseJson(out);
  REQUIRE(v.ok());
  const JsonValue* kernels = v->Find("kernels");
  REQUIRE(kernels != nullptr);
  CHECK(kernels->items.size() == 10);
  CHECK(kernels->items[3].Find("name")->text == std::string(2000, 'x') + "...");
}

}  // namespace
}  // namespace kairos
