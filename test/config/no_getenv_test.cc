// File: no_getenv_test.cc
// Layer: test for the layering rule "environment variables are read only in src/config/"
// (house style §10). Scans src/, bindings/ and tools/ of the source tree for getenv,
// secure_getenv and environ, and fails naming every file and line that uses them elsewhere.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

bool IsSource(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".h" || ext == ".hh" || ext == ".hpp" || ext == ".c" || ext == ".cc" ||
         ext == ".cpp" || ext == ".cxx" || ext == ".inc";
}

// Lines of files under `dir` (skipping src/config/) that mention a forbidden name.
std::vector<std::string> Offenders(const fs::path& root, const std::string& dir) {
  // Word-bounded, so "environment" or "ProcessEnv()" do not match but "::getenv(" and "__environ" do.
  static const std::regex kForbidden(
      R"((^|[^A-Za-z0-9_])(secure_getenv|getenv|_*environ)($|[^A-Za-z0-9_]))");
  std::vector<std::string> found;
  const fs::path base = root / dir;
  if (!fs::exists(base)) return found;
  for (const auto& entry : fs::recursive_directory_iterator(base)) {
    if (!entry.is_regular_file() || !IsSource(entry.path())) continue;
    const std::string rel = fs::relative(entry.path(), root).generic_string();
    if (rel.rfind("src/config/", 0) == 0) continue;
    // The preload shim decides whether to load the core at all, before src/config exists in
    // the process (it is C, libc only): its environment walk is the one other reader.
    if (rel == "bindings/c/shim.c") continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (std::regex_search(line, kForbidden))
        found.push_back(rel + ":" + std::to_string(n) + ": " + line);
    }
  }
  return found;
}

TEST_CASE("getenv is called only in src/config", "[layering]") {
  const fs::path root(KAIROS_SOURCE_DIR);
  REQUIRE(fs::exists(root / "src" / "config" / "env.cc"));
  std::vector<std::string> all;
  for (const char* dir : {"src", "bindings", "tools"}) {
    for (std::string& s : Offenders(root, dir)) all.push_back(std::move(s));
  }
  for (const std::string& s : all) UNSCOPED_INFO(s);
  CHECK(all.empty());
}

TEST_CASE("the scanner does see getenv where it is allowed", "[layering]") {
  // Guards against a scanner that silently matches nothing (wrong root, broken regex).
  const fs::path env_cc = fs::path(KAIROS_SOURCE_DIR) / "src" / "config" / "env.cc";
  std::ifstream in(env_cc);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::regex pattern(R"((^|[^A-Za-z0-9_])(secure_getenv|getenv|_*environ)($|[^A-Za-z0-9_]))");
  CHECK(std::regex_search(text, pattern));
  CHECK_FALSE(std::regex_search(std::string("// read the environment via ProcessEnv()"), pattern));
  CHECK(std::regex_search(std::string("char** e = environ;"), pattern));
  CHECK(std::regex_search(std::string("x = ::secure_getenv(\"A\");"), pattern));
}

}  // namespace
