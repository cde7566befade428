// File: json_test.cc
// Layer: tests (json). THE JSON reader (chunked streaming, strict mode, limits), the escaper's
// replacement count and the structured writer, with exact expected bytes.
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>
#include "json/json_decimal.h"
#include "json/json_escape.h"
#include "json/json_reader.h"
#include "json/json_writer.h"

namespace kairos {
namespace {

// Hands out at most `step` bytes per Read, so every token crosses chunk boundaries.
class TrickleSource : public JsonByteSource {
 public:
  TrickleSource(std::string text, size_t step) : text_(std::move(text)), step_(step) {}
  absl::StatusOr<size_t> Read(char* buf, size_t cap) override {
    const size_t n = std::min({cap, step_, text_.size() - pos_});
    text_.copy(buf, n, pos_);
    pos_ += n;
    return n;
  }

 private:
  std::string text_;
  size_t step_;
  size_t pos_ = 0;
};

TEST_CASE("Reader: values survive one-byte reads (every token split across reads)") {
  const std::string text =
      " {\"a\": [1, -2.5e3, true, false, null], \"s\": \"q\\\"\\n\\u00e9\\ud83d\\ude00\","
      " \"n\": 12345678901234567890} ";
  TrickleSource src(text, 1);
  JsonStreamParser p(src);
  JsonValue v;
  REQUIRE(p.ParseValue(&v));
  REQUIRE(p.ExpectEnd());
  CHECK(p.offset() == text.size());
  REQUIRE(v.members.size() == 3);
  CHECK(v.Find("a")->items.size() == 5);
  CHECK(v.Find("a")->items[1].text == "-2.5e3");
  CHECK(v.Find("s")->text == "q\"\n\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(v.Find("n")->text == "12345678901234567890");  // kept exactly, beyond int64
  CHECK(v.Find("n")->AsUint() == 12345678901234567890ull);
  int64_t i = 0;
  CHECK_FALSE(v.Find("n")->AsExactInt(&i));
  CHECK(v.ToJson() ==
        "{\"a\":[1,-2.5e3,true,false,null],\"s\":\"q\\\"\\n\xC3\xA9\xF0\x9F\x98\x80\","
        "\"n\":12345678901234567890}");
}

TEST_CASE("Reader: a string longer than a chunk is read whole") {
  const std::string body(3 * JsonStreamParser::kChunk + 7, 'x');
  absl::StatusOr<JsonValue> v = ParseJson("[\"" + body + "\"]");
  REQUIRE(v.ok());
  CHECK(v->items[0].text == body);
}

TEST_CASE("Reader: errors name the byte offset; lone surrogates become U+FFFD") {
  CHECK(ParseJson("[1,]").status().message() == "JSON: unexpected character at byte 3");
  CHECK(ParseJson("[1 2]").status().message() == "JSON: expected ']' at byte 3");
  CHECK(ParseJson("").status().message() == "JSON: unexpected end of input at byte 0");
  CHECK(ParseJson("01").status().message() == "JSON: bad number at byte 2");
  CHECK(ParseJson("\"\\ud800\"")->text == "\xEF\xBF\xBD");
  CHECK(ParseJson("\"\\udc00x\"")->text == "\xEF\xBF\xBDx");
}

TEST_CASE("Reader: lax by default, strict on request") {
  // Traces are read lax: a repeated key keeps both members (Find returns the first), and
  // invalid UTF-8 passes through to be replaced when written again.
  absl::StatusOr<JsonValue> lax = ParseJson("{\"k\":1,\"k\":2,\"s\":\"\xC3(\"}");
  REQUIRE(lax.ok());
  CHECK(lax->Find("k")->text == "1");
  CHECK(lax->Find("s")->text == "\xC3(");
  JsonParseOptions strict;
  strict.strict = true;
  CHECK(ParseJson("{\"k\":1,\"k\":2}", strict).status().message() ==
        "JSON: duplicate key at byte 10");
  CHECK(ParseJson("\"\xC3(\"", strict).status().message() ==
        "JSON: invalid UTF-8 in string at byte 4");
  // Past 16 keys the check switches to a set; it must still find a repeat, and not a false one.
  std::string big = "{";
  for (int i = 0; i < 40; ++i) big += "\"k" + std::to_string(i) + "\":0,";
  CHECK(ParseJson(big.substr(0, big.size() - 1) + "}", strict).ok());
  CHECK_FALSE(ParseJson(big + "\"k3\":1}", strict).ok());
  CHECK_FALSE(ParseJson(big + "\"k39\":1}", strict).ok());
  // Depth: max_depth containers open at once, not one more.
  JsonParseOptions shallow;
  shallow.max_depth = 3;
  CHECK(ParseJson("[[[]]]", shallow).ok());
  CHECK(ParseJson("[[[[]]]]", shallow).status().message() == "JSON: nesting too deep at byte 3");
}

TEST_CASE("Reader: a value parsed into a reused JsonValue holds only the new value") {
  // The parser reuses the slots of the previous value (trace events one after another);
  // nothing of a larger or differently shaped earlier value may survive.
  const std::string text =
      "{\"a\":1,\"b\":{\"c\":[1,2,{\"d\":\"x\"}]},\"e\":\"long string past SSO size\"} "
      "{\"a\":\"s\",\"b\":[3]} {\"b\":{}} [[],{\"z\":null}] 7";
  JsonTextSource src(text);
  JsonStreamParser p(src);
  JsonValue v;
  REQUIRE(p.ParseValue(&v));
  CHECK(v.ToJson() == "{\"a\":1,\"b\":{\"c\":[1,2,{\"d\":\"x\"}]},\"e\":\"long string past SSO size\"}");
  REQUIRE(p.ParseValue(&v));
  CHECK(v.ToJson() == "{\"a\":\"s\",\"b\":[3]}");
  CHECK(v.members.size() == 2);
  CHECK(v.members[0].second.members.empty());
  CHECK(v.members[1].second.members.empty());
  REQUIRE(p.ParseValue(&v));
  CHECK(v.ToJson() == "{\"b\":{}}");
  CHECK(v.members[0].second.items.empty());
  REQUIRE(p.ParseValue(&v));
  CHECK(v.ToJson() == "[[],{\"z\":null}]");
  CHECK(v.members.empty());
  REQUIRE(p.ParseValue(&v));
  CHECK(v.ToJson() == "7");
  CHECK(v.items.empty());
  CHECK(v.members.empty());
  REQUIRE(p.ExpectEnd());
}

TEST_CASE("Reader: a quote, backslash or control byte ends a plain run at every offset") {
  // The plain-byte scan works 8 bytes at a time: put the special byte at each position of a
  // word, among bytes next to the tested values (0x20, '!', '#', '[', ']', 0x7f, 0x80, 0xff).
  const std::string plain = "a \x7f\x80\xff!#[]" "abcdefgh";
  for (size_t at = 0; at < 17; ++at) {
    for (const std::string& special : {std::string("\\\""), std::string("\\n"),
                                       std::string("\""), std::string("\t")}) {
      const std::string body = plain.substr(0, at) + special + plain.substr(at);
      const std::string text = "\"" + body + "\"";  // the source holds a view: keep it alive
      JsonTextSource src(text);
      JsonStreamParser p(src);
      std::string out;
      const bool ok = p.ParseString(&out);
      INFO("at " << at << " special " << special);
      if (special == "\"") {  // ends the string early: the rest is trailing data
        REQUIRE(ok);
        CHECK(out == plain.substr(0, at));
      } else if (special == "\t") {  // a raw control byte is an error at exactly that byte
        CHECK(!ok);
        CHECK(p.error().message() == "JSON: control character in string at byte " + std::to_string(at + 2));
      } else {
        REQUIRE(ok);
        CHECK(out == plain.substr(0, at) + (special == "\\n" ? "\n" : "\"") + plain.substr(at));
      }
    }
  }
}

TEST_CASE("Escaper: invalid UTF-8 is replaced and counted") {
  uint64_t replaced = 0;
  std::string out;
  AppendJsonString("ok\xFF\xC3(\xE2\x82", &out, &replaced);
  CHECK(out == "\"ok\xEF\xBF\xBD\xEF\xBF\xBD(\xEF\xBF\xBD\"");
  CHECK(replaced == 3);
  CHECK(IsValidUtf8("\xE2\x82\xAC"));
  CHECK_FALSE(IsValidUtf8("\xED\xA0\x80"));  // a UTF-16 surrogate spelled in UTF-8
  CHECK(JsonQuote("a\"b") == "\"a\\\"b\"");
}

TEST_CASE("Writer: commas, nesting, escaping and the replacement count") {
  JsonWriter w;
  w.BeginObject().Key("a").Int(-1).Key("b").BeginArray().Uint(2).Double(0.5).Null().Bool(true);
  w.BeginObject().EndObject().EndArray().Key("s\n").String("x\xFFy").Key("r").RawValue("[1]");
  w.Key("nan").Double(0.0 / 0.0);
  w.EndObject();
  CHECK(w.str() ==
        "{\"a\":-1,\"b\":[2,0.5,null,true,{}],\"s\\n\":\"x\xEF\xBF\xBDy\",\"r\":[1],\"nan\":null}");
  CHECK(w.replaced() == 1);
  CHECK(IsValidJson(w.view()));
}

TEST_CASE("Buffer: Clear gives back memory a huge string grew") {
  JsonBuffer b(64);
  b.Str(std::string(10000, 'a'));
  CHECK(b.size() == 10002);
  b.Clear();
  CHECK(b.size() == 0);
  b.Raw("{}");
  CHECK(b.view() == "{}");
}

// The one decimal writer (json_decimal.h) against std::to_chars, an independent spelling: at
// both sides of every power of ten, both signs, the extremes, and a spread of magnitudes;
// through JsonBuffer's Int/Uint as well as the cursor functions the trace writer uses.
TEST_CASE("Decimal integers: the text of to_chars at every digit count's edges") {
  std::vector<int64_t> ints = {0, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  std::vector<uint64_t> uints = {0, std::numeric_limits<uint64_t>::max()};
  uint64_t p = 1;
  for (int d = 0; d < 20; ++d, p *= 10) {
    for (uint64_t u : {p - 1, p, p + 1}) {
      uints.push_back(u);
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        ints.push_back(static_cast<int64_t>(u));
        ints.push_back(-static_cast<int64_t>(u));
      }
    }
  }
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uints.push_back(x >> (x % 64));
    ints.push_back(static_cast<int64_t>(x >> (x % 64)));
  }
  size_t bad = 0;
  const auto check = [&bad](auto v) {  // uint64_t or int64_t
    char a[32], b[32];
    const std::string ref(b, std::to_chars(b, b + sizeof b, v).ptr);
    JsonBuffer buf(8);
    std::string put;
    if constexpr (std::is_signed_v<decltype(v)>) {
      buf.Int(v);
      put.assign(a, PutInt(v, a));
    } else {
      buf.Uint(v);
      put.assign(a, PutUint(v, a));
    }
    if ((put != ref || buf.view() != ref) && ++bad <= 3) {
      CHECK(put == ref);
      CHECK(buf.view() == ref);
    }
  };
  for (uint64_t u : uints) check(u);
  for (int64_t v : ints) check(v);
  CHECK(bad == 0);
  char m[32];
  CHECK(std::string(m, PutInt(std::numeric_limits<int64_t>::min(), m)) == "-9223372036854775808");
  CHECK(std::string(m, PutUint(std::numeric_limits<uint64_t>::max(), m)) == "18446744073709551615");
}

}  // namespace
}  // namespace kairos
