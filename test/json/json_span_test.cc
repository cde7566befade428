// File: json_span_test.cc
// Layer: tests (json). The in-memory fast path (json_span.h) against THE stream parser on
// the same texts: equal values (exact text and type), kNeedMore for every cut of a valid
// value, kInvalid exactly where the stream parser fails, the surrogate rules, slot reuse
// and the 16-byte plain-run scan at every offset.
#include "json/json_span.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "json/json_reader.h"

namespace kairos {
namespace {

// The text with the padding the span reader may read past its end (filled with bytes that
// would be wrong to use: a quote and digits).
struct Padded {
  explicit Padded(const std::string& text) : buf(text + std::string(kJsonSpanPadding, '"')) {
    for (size_t i = text.size(); i < buf.size(); i += 2) buf[i] = '7';
    size = text.size();
  }
  JsonSpanReader Reader(size_t n) const { return JsonSpanReader(buf.data(), buf.data() + n); }
  JsonSpanReader Reader() const { return Reader(size); }
  std::string buf;
  size_t size;
};

JsonSpanStatus SpanValue(const std::string& text, JsonValue* v, size_t* used) {
  Padded p(text);
  JsonSpanReader r = p.Reader();
  const JsonSpanStatus s = r.Value(v, 0);
  *used = static_cast<size_t>(r.pos() - p.buf.data());
  return s;
}

// Every value is followed by a space: a number at the very end of the bytes could go on.
const std::vector<std::string> kValid = {
    "0",
    "-0",
    "12",
    "-3.25",
    "1e5",
    "1E+05",
    "2.5e-3",
    "12345678901234567890",
    "true",
    "false",
    "null",
    "\"\"",
    "\"plain\"",
    "\"q\\\"b\\\\s\\/f\\b\\f\\n\\r\\t\"",
    "\"\\u00e9\\u20AC\"",
    "\"\\ud83d\\ude00\"",
    "\"{[}]:,\"",
    "[]",
    "{}",
    "[ 1 , [ ] , { } , \"x\" ]",
    "{\"a\":{\"b\":[1,{\"c\":null}]},\"d\":\"}\"}",
    " \n\t\r{ \"k\" :\n1 }",
    "{\"k\":1,\"k\":2}",
    "\"\xC3(\xff\"",  // lax: repeated keys and invalid UTF-8 kept
    "\"a string well past sixteen bytes, so the scan takes several steps\""};

TEST_CASE("Span reader: the same value as the stream parser, ending at the same byte") {
  for (const std::string& t : kValid) {
    INFO(t);
    const std::string text = t + " ";
    absl::StatusOr<JsonValue> want = ParseJson(text);
    REQUIRE(want.ok());
    JsonValue got;
    size_t used = 0;
    REQUIRE(SpanValue(text, &got, &used) == JsonSpanStatus::kOk);
    CHECK(got.type == want->type);
    CHECK(got.ToJson() == want->ToJson());
    CHECK(used == t.size());
    Padded p(text);
    JsonSpanReader r = p.Reader();
    REQUIRE(r.Skip(0) == JsonSpanStatus::kOk);
    CHECK(static_cast<size_t>(r.pos() - p.buf.data()) == t.size());
  }
}

TEST_CASE("Span reader: every cut of a valid value asks for more bytes") {
  for (const std::string& t : kValid) {
    size_t first = 0;  // cuts inside the leading whitespace too
    for (size_t n = first; n < t.size(); ++n) {
      INFO(t << " cut at " << n);
      Padded p(t);
      JsonValue v;
      JsonSpanReader a = p.Reader(n);
      CHECK(a.Value(&v, 0) == JsonSpanStatus::kNeedMore);
      JsonSpanReader b = p.Reader(n);
      CHECK(b.Skip(0) == JsonSpanStatus::kNeedMore);
    }
  }
}

TEST_CASE("Span reader: kInvalid exactly where the stream parser fails") {
  const std::vector<std::string> invalid = {
      "[1,]",    "[1 2]",     "{\"a\" 1}", "{\"a\":1,}",  "{1:2}",
      "01",      "1.",        "-",         "1.5.3",       "1e",
      "1e+",     "--1",       "+1",        ".5",          "tru ",
      "nul ",    "\"\x01\"",  "\"\\q\"",   "\"\\u12G4\"", "\"\\ud800\\q\"",
      "[\"a\"}", "{\"a\":1]", "x"};
  for (const std::string& t : invalid) {
    INFO(t);
    const std::string text = t + " ]";  // never a cut: bytes follow
    CHECK(!ParseJson(text).ok());
    JsonValue v;
    size_t used = 0;
    CHECK(SpanValue(text, &v, &used) == JsonSpanStatus::kInvalid);
    Padded p(text);
    JsonSpanReader r = p.Reader();
    CHECK(r.Skip(0) == JsonSpanStatus::kInvalid);
  }
  // Depth: 128 containers open at once are allowed (the stream parser's default), 129 not.
  const std::string ok = std::string(128, '[') + std::string(128, ']') + " ";
  const std::string deep = std::string(129, '[') + std::string(129, ']') + " ";
  CHECK(ParseJson(ok).ok());
  CHECK(!ParseJson(deep).ok());
  JsonValue v;
  size_t used = 0;
  CHECK(SpanValue(ok, &v, &used) == JsonSpanStatus::kOk);
  CHECK(SpanValue(deep, &v, &used) == JsonSpanStatus::kInvalid);
  Padded p(deep);
  JsonSpanReader r = p.Reader();
  CHECK(r.Skip(0) == JsonSpanStatus::kInvalid);
}

TEST_CASE("Span reader: surrogate halves follow the stream parser's rules") {
  const std::string kFFFD = "\xEF\xBF\xBD";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\"\\ud83d\\ude00\"", "\xF0\x9F\x98\x80"},  // a pair
      {"\"\\ud800\"", kFFFD},                      // a high half alone
      {"\"\\ud800x\"", kFFFD + "x"},               // ... then a plain byte
      {"\"\\ud800\\n\"", kFFFD + "\n"},            // ... then another escape
      {"\"\\ud800\\u0041\"", kFFFD + "A"},         // ... then a \u that is no half
      {"\"\\ud800\\ud800\\udc00\"",
       kFFFD + kFFFD + kFFFD},        // high, high: both replaced; the low is then alone
      {"\"\\udc00x\"", kFFFD + "x"},  // a low half alone
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    const std::string t = text + " ";
    JsonValue v;
    size_t used = 0;
    REQUIRE(SpanValue(t, &v, &used) == JsonSpanStatus::kOk);
    CHECK(v.text == want);
    CHECK(ParseJson(t)->text == want);
  }
}

TEST_CASE("Span reader: StringView points into the bytes unless the string has an escape") {
  Padded p("\"name\" \"a\\\\b\"");
  JsonSpanReader r = p.Reader();
  std::string_view view;
  std::string scratch;
  REQUIRE(r.StringView(&view, &scratch) == JsonSpanStatus::kOk);
  CHECK(view == "name");
  CHECK(view.data() == p.buf.data() + 1);
  REQUIRE(r.SkipSpace());
  REQUIRE(r.StringView(&view, &scratch) == JsonSpanStatus::kOk);
  CHECK(view == "a\\b");
  CHECK(view.data() == scratch.data());
  CHECK(r.pos() == p.buf.data() + p.size);
}

TEST_CASE("Span reader: a value read into a reused JsonValue holds only the new value") {
  JsonValue v;
  size_t used = 0;
  REQUIRE(
      SpanValue("{\"a\":1,\"b\":{\"c\":[1,2,{\"d\":\"x\"}]},\"e\":\"long string past SSO size\"} ",
                &v, &used) == JsonSpanStatus::kOk);
  REQUIRE(SpanValue("{\"a\":\"s\",\"b\":[3]} ", &v, &used) == JsonSpanStatus::kOk);
  CHECK(v.ToJson() == "{\"a\":\"s\",\"b\":[3]}");
  CHECK(v.members.size() == 2);
  CHECK(v.members[0].second.members.empty());
  CHECK(v.members[1].second.members.empty());
  // Same shape, texts of other lengths: nothing of the longer earlier text survives.
  REQUIRE(SpanValue("{\"a\":\"longer than before\",\"b\":[31415]} ", &v, &used) ==
          JsonSpanStatus::kOk);
  REQUIRE(SpanValue("{\"a\":\"sh\",\"b\":[2]} ", &v, &used) == JsonSpanStatus::kOk);
  CHECK(v.ToJson() == "{\"a\":\"sh\",\"b\":[2]}");
  CHECK(v.members[0].second.text.size() == 2);
  REQUIRE(SpanValue("[[],{\"z\":null}] ", &v, &used) == JsonSpanStatus::kOk);
  CHECK(v.ToJson() == "[[],{\"z\":null}]");
  CHECK(v.members.empty());
  REQUIRE(SpanValue("7 ", &v, &used) == JsonSpanStatus::kOk);
  CHECK(v.ToJson() == "7");
  CHECK(v.items.empty());
  REQUIRE(SpanValue("null ", &v, &used) == JsonSpanStatus::kOk);
  CHECK(v.type == JsonValue::Type::kNull);
  CHECK(v.text.empty());
}

TEST_CASE(
    "Span reader: the plain-run scan stops at a quote, backslash or control byte at every offset") {
  for (size_t at = 0; at < 40; ++at) {
    for (const char special : {'"', '\\', '\x1f', '\0', '\n'}) {
      std::string s(48, 'a');
      for (size_t i = 0; i < s.size(); i += 3)
        s[i] = static_cast<char>(0x80 + i);  // high bytes are plain
      s[at] = special;
      Padded p(s);
      INFO("at " << at << " byte " << int(special));
      CHECK(internal::PlainStringEnd(p.buf.data(), p.buf.data() + s.size()) == p.buf.data() + at);
      // A limit before the special byte wins.
      CHECK(internal::PlainStringEnd(p.buf.data(), p.buf.data() + at) == p.buf.data() + at);
    }
  }
}

// Random values (fixed seeds): nesting, escapes of every kind, surrogates, numbers and
// whitespace, compared with the stream parser value for value.
std::string RandomString(std::mt19937& rng) {
  static const char* const kPieces[] = {"a",
                                        "Z",
                                        "{",
                                        "}",
                                        "[",
                                        "]",
                                        ":",
                                        ",",
                                        " ",
                                        "\\\"",
                                        "\\\\",
                                        "\\/",
                                        "\\n",
                                        "\\t",
                                        "\\u0041",
                                        "\\u00e9",
                                        "\\ud83d\\ude00",
                                        "\\ud800",
                                        "\\udc00",
                                        "\xC3\xA9",
                                        "\xff",
                                        "long-ish piece of text"};
  std::string s = "\"";
  const int n = static_cast<int>(rng() % 12);
  for (int i = 0; i < n; ++i) s += kPieces[rng() % (sizeof(kPieces) / sizeof(kPieces[0]))];
  return s + "\"";
}

std::string RandomValue(std::mt19937& rng, int depth) {
  static const char* const kNumbers[] = {
      "0", "-1", "42", "3.25", "1e3", "-2.5E-7", "18446744073709551616"};
  static const char* const kSpace[] = {"", "", " ", "\n", "\t ", "\r\n"};
  auto ws = [&] { return std::string(kSpace[rng() % 6]); };
  switch (depth > 4 ? rng() % 4 : rng() % 6) {
    case 0:
      return RandomString(rng);
    case 1:
      return kNumbers[rng() % 7];
    case 2:
      return rng() % 2 ? "true" : "null";
    case 3:
      return "false";
    case 4: {
      std::string s = "[" + ws();
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) s += (i ? "," + ws() : "") + RandomValue(rng, depth + 1) + ws();
      return s + "]";
    }
    default: {
      std::string s = "{" + ws();
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i)
        s += (i ? "," + ws() : "") + RandomString(rng) + ws() + ":" + ws() +
             RandomValue(rng, depth + 1);
      return s + ws() + "}";
    }
  }
}

TEST_CASE("Span reader: random values read exactly as the stream parser reads them") {
  std::mt19937 rng(20261126);
  JsonValue reused;
  for (int i = 0; i < 3000; ++i) {
    const std::string t = RandomValue(rng, 0);
    INFO(t);
    const std::string text = t + " ";
    absl::StatusOr<JsonValue> want = ParseJson(text);
    REQUIRE(want.ok());
    size_t used = 0;
    REQUIRE(SpanValue(text, &reused, &used) == JsonSpanStatus::kOk);
    CHECK(reused.ToJson() == want->ToJson());
    CHECK(used == t.size());
  }
}

}  // namespace
}  // namespace kairos
