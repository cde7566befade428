// File: json_escape_test.cc
// Layer: tests (output). The RFC 8259 encoder (byte-exact) and the raw-JSON validator, each
// cross-checked with nlohmann's parser; replays the escaper fuzz corpus.
// Threading: single-threaded.
#include "json/json_escape.h"
#include "json/json_reader.h"

#include <catch2/catch.hpp>

#include <dirent.h>

#include <random>
#include <string>

#include "json_escape_fuzz.h"
#include "json_test_util.h"

namespace kairos {
namespace {

std::string Esc(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

TEST_CASE("Escaper: quotes, backslash and control characters") {
  CHECK(Esc("") == "\"\"");
  CHECK(Esc("plain ascii") == "\"plain ascii\"");
  CHECK(Esc("a\"b\\c") == R"("a\"b\\c")");
  CHECK(Esc("\n\t\r\b\f") == R"("\n\t\r\b\f")");
  CHECK(Esc(std::string("\x00\x01\x1f", 3)) == R"("\u0000\u0001\u001f")");
  CHECK(Esc("\x7f/") == "\"\x7f/\"");  // DEL and '/' need no escape
  std::string out = "prefix";
  AppendJsonString("x", &out);
  CHECK(out == "prefix\"x\"");  // appends, never clears
}

TEST_CASE("Escaper: valid UTF-8 passes through unchanged") {
  const std::string s = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xED\x9F\xBF\xEF\xBF\xBF\xF4\x8F\xBF\xBF";
  CHECK(Esc(s) == "\"" + s + "\"");
}

TEST_CASE("Escaper: each maximal invalid subpart becomes one U+FFFD") {
  const std::string r = "\xEF\xBF\xBD";
  CHECK(Esc("\xFF") == "\"" + r + "\"");
  CHECK(Esc("a\x80z") == "\"a" + r + "z\"");                  // lone continuation
  CHECK(Esc("\xC3(") == "\"" + r + "(\"");                    // truncated 2-byte
  CHECK(Esc("\xC0\xAF") == "\"" + r + r + "\"");              // overlong lead C0
  CHECK(Esc("\xE2\x82") == "\"" + r + "\"");                  // truncated 3-byte at end
  CHECK(Esc("\xE2\x82z") == "\"" + r + "z\"");                // truncated 3-byte mid-string
  CHECK(Esc("\xED\xA0\x80") == "\"" + r + r + r + "\"");      // UTF-16 surrogate
  CHECK(Esc("\xE0\x80\x80") == "\"" + r + r + r + "\"");      // overlong 3-byte
  CHECK(Esc("\xF4\x90\x80\x80") == "\"" + r + r + r + r + "\"");  // > U+10FFFF
  CHECK(Esc("\xF0\x9F\x98") == "\"" + r + "\"");              // truncated 4-byte
  CHECK(Esc("\xF5\x80") == "\"" + r + r + "\"");
}

TEST_CASE("Escaper: a special byte at every offset of a long ASCII run is found") {
  // Exercises the 8-bytes-at-a-time fast path at every alignment.
  for (const std::string special : {"\"", "\\", "\x1f", "\x7f", "\xC3\xA9", "\xFF", " ", "~"}) {
    for (size_t pos = 0; pos < 40; ++pos) {
      std::string s(40, 'a');
      s.replace(pos, 1, special);
      const std::string want_mid = special == "\"" ? "\\\""
                                   : special == "\\" ? "\\\\"
                                   : special == "\x1f" ? "\\u001f"
                                   : special == "\xFF" ? "\xEF\xBF\xBD"
                                                       : special;
      std::string want = "\"" + s.substr(0, pos) + want_mid + s.substr(pos + special.size()) + "\"";
      INFO("pos " << pos);
      CHECK(Esc(s) == want);
    }
  }
}

TEST_CASE("Escaper output always parses back to the sanitized string") {
  std::mt19937 rng(12345);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    const std::string out = Esc(s);
    CHECK(IsValidJson(out));
    CHECK(KairosFuzzJsonEscape(reinterpret_cast<const uint8_t*>(s.data()), s.size()) == 0);
  }
}

TEST_CASE("Validator accepts RFC 8259 values") {
  for (const char* ok : {"0", "-0", "1.5e-3", "-12E+4", "true", "false", "null", "\"\"",
                         "\"\\u00e9\\n\\/\"", "[]", "{}", " [1, {\"a\": [null]}] ",
                         "{\"a\":1,\"b\":{\"a\":2}}", "\"\xF0\x9F\x98\x80\""}) {
    INFO(ok);
    CHECK(IsValidJson(ok));
    CHECK_NOTHROW(nlohmann::json::parse(ok));
  }
}

TEST_CASE("Validator rejects invalid JSON, bad UTF-8, duplicate keys and deep nesting") {
  for (const char* bad : {"", " ", "01", "1.", ".5", "+1", "1e", "tru", "nul", "\"abc",
                          "\"a\x01\"", "\"\\x\"", "\"\\u12g4\"", "[1,]", "{\"a\":1,}",
                          "{\"a\" 1}", "{a:1}", "[1] [2]", "\"\xC3(\"", "{\"a\":1,\"a\":2}",
                          "NaN", "Infinity"}) {
    INFO(bad);
    CHECK_FALSE(IsValidJson(bad));
  }
  CHECK(IsValidJson(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']')));
  CHECK_FALSE(
      IsValidJson(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']')));
  // Many keys: the set path still finds a duplicate.
  std::string big = "{";
  for (int i = 0; i < 100; ++i) big += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  CHECK(IsValidJson(big.substr(0, big.size() - 1) + "}"));
  CHECK_FALSE(IsValidJson(big + "\"k7\":0}"));
}

TEST_CASE("Fuzz corpus replays through the escaper entry point") {
  const std::string dir = std::string(KAIROS_TEST_SOURCE_DIR) + "/corpus/json_escape";
  DIR* d = opendir(dir.c_str());
  REQUIRE(d != nullptr);
  int files = 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string bytes = testing::ReadFile(dir + "/" + name);
    INFO(name);
    CHECK(KairosFuzzJsonEscape(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) == 0);
    ++files;
  }
  closedir(d);
  CHECK(files >= 8);
}

}  // namespace
}  // namespace kairos
