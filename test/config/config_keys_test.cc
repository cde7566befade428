// File: config_keys_test.cc
// Layer: test for kairos_config. The key table is complete and consistent: names unique,
// every key that config.h documents is in it, every settable key has a target, and the key
// tables in docs/CONFIG.md are exactly the ones generated from it.
// Threading: single-threaded.
#include "config/config_keys.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <string>

namespace kairos::internal {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_CASE("key names are unique and every settable key has a target", "[config_keys]") {
  std::set<std::string_view> names;
  int kineto = 0, alias = 0, kairos = 0, removed = 0, inert = 0;
  for (const ConfigKey& k : ConfigKeys()) {
    INFO(std::string(k.name));
    CHECK(names.insert(k.name).second);
    CHECK(FindConfigKey(k.name) == &k);
    switch (k.kind) {
      case KeyKind::kKineto:
        ++kineto;
        break;
      case KeyKind::kAlias:
        ++alias;
        break;
      case KeyKind::kKairos:
        ++kairos;
        break;
      case KeyKind::kRemoved:
        ++removed;
        break;
      case KeyKind::kInert:
        ++inert;
        break;
    }
    if (k.kind == KeyKind::kKineto || k.kind == KeyKind::kAlias || k.kind == KeyKind::kKairos) {
      const bool has_target = k.bool_field || k.int_field || k.string_field || k.list_field ||
                              k.apply_bool || k.apply_int || k.apply_custom;
      CHECK(has_target);
      CHECK_FALSE(k.doc.empty());
      CHECK_FALSE(k.default_text.empty());
    }
    if (k.type == KeyType::kCustom) CHECK((k.apply_custom != nullptr && k.custom_text != nullptr));
  }
  CHECK(kineto == 30);
  CHECK(alias == 2);
  CHECK(inert == 6);
  CHECK(kairos == 17);  // + KAIROS_REPORT, PM sampling interval, telemetry interval and file,
                       // KAIROS_REQUEST_TIME_MS
  CHECK(removed == 16);
  CHECK(FindConfigKey("activities_enabled") == nullptr);
}

TEST_CASE("every key named in config.h is in the table", "[config_keys]") {
  const std::string header = ReadFile(std::string(KAIROS_SOURCE_DIR) + "/src/config/config.h");
  REQUIRE_FALSE(header.empty());
  const std::regex key(
      R"(// ((?:ACTIVITIES|ACTIVITY|CUPTI|PROFILE|REQUEST|ENABLE|ON_DEMAND|VERBOSE|CUSTOM|KAIROS)_[A-Z_]+))");
  int seen = 0;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), key);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name.rfind("KAIROS_SRC_", 0) == 0) continue;  // the include guard
    INFO(name);
    CHECK(FindConfigKey(name) != nullptr);
    ++seen;
  }
  CHECK(seen >= 40);
}

TEST_CASE("bool and list helpers", "[config_keys]") {
  bool b = false;
  CHECK(ParseConfigBool("YeS", &b));
  CHECK(b);
  CHECK(ParseConfigBool("F", &b));
  CHECK_FALSE(b);
  CHECK_FALSE(ParseConfigBool("", &b));
  CHECK_FALSE(ParseConfigBool("2", &b));
  CHECK(SplitConfigList(" a ,\tb,,c ,") == std::vector<std::string>{"a", "b", "c"});
  CHECK(SplitConfigList("").empty());
  CHECK(QuoteForLog("a\"b\n", 10) == "\"a\\x22b\\x0a\"");
  CHECK(QuoteForLog("abcdef", 3) == "\"abc...\"");
}

TEST_CASE("docs/CONFIG.md key tables match the key table", "[config_keys]") {
  const std::string doc = ReadFile(std::string(KAIROS_SOURCE_DIR) + "/docs/CONFIG.md");
  const std::string begin = "<!-- BEGIN GENERATED KEY TABLES (test/config/config_keys_test) -->\n";
  const std::string end = "<!-- END GENERATED KEY TABLES -->";
  const size_t b = doc.find(begin);
  const size_t e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string current = doc.substr(b + begin.size(), e - b - begin.size());
  const std::string expected = ConfigKeysMarkdown();
  if (current != expected) {
    // Written next to the test binary so the section can be pasted into docs/CONFIG.md.
    std::ofstream("CONFIG.generated.md") << expected;
  }
  CHECK(current == expected);
}

}  // namespace
}  // namespace kairos::internal
