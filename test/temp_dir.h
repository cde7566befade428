// File: temp_dir.h
// Layer: test. The one temporary-directory helper of the C++ tests (and of the benchmarks that
// write files): TempDir creates a fresh directory "<TempRoot()>/<prefix>XXXXXX" (mkdtemp) and
// removes it, with everything in it, when it goes out of scope. A test keeps the object for as
// long as anything may use the directory: a forked child's waitpid, a session's flush, the
// reads of what the library wrote. tools/test.sh runs each ctest phase with a private, empty
// TMPDIR and fails the phase if anything is left in it (docs/TESTING.md).
// Threading: a TempDir belongs to the thread that made it; TempRoot() reads the environment
// (call it before starting threads that might setenv).
#ifndef KAIROS_TEST_TEMP_DIR_H_
#define KAIROS_TEST_TEMP_DIR_H_

#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace kairos::testing {

// Where temporary files go: $TMPDIR when set and non-empty (trailing '/' dropped), else /tmp;
// the same rule as the library's default trace directory (src/config/env.h) and mktemp(1).
inline std::string TempRoot() {
  const char* env = getenv("TMPDIR");
  std::string root = env != nullptr && env[0] != '\0' ? env : "/tmp";
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

// A fresh directory, removed recursively (std::filesystem::remove_all, error_code overload:
// the destructor never throws) when the object is destroyed. Only the process that created it
// removes it: a fork()ed child that unwinds its copy leaves the parent's directory in place.
// Neither copyable nor movable: the path stays valid exactly as long as the object lives.
// The constructor throws std::runtime_error when mkdtemp fails (a Catch2 test case then fails
// with that message).
class TempDir {
 public:
  // `max_path` (0 = no limit): the longest directory path the caller can use, for a directory
  // that holds Unix sockets (sun_path is 108 bytes with its NUL): when TempRoot() would make
  // the path longer, the directory is made under /tmp instead.
  explicit TempDir(std::string_view prefix = "kairos_test_", size_t max_path = 0) {
    std::string root = TempRoot();
    if (max_path != 0 && root.size() + 1 + prefix.size() + 6 > max_path) root = "/tmp";
    std::string tmpl = root + "/" + std::string(prefix) + "XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      const int err = errno;
      throw std::runtime_error("mkdtemp(" + tmpl + "): " + std::strerror(err));
    }
    path_ = tmpl;
  }
  ~TempDir() { Remove(); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // The directory's absolute path (no trailing '/').
  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }
  // Names of the entries in the directory, sorted ("." and ".." excluded).
  std::vector<std::string> List() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(path_, ec), end; !ec && it != end;
         it.increment(ec))
      names.push_back(it->path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  // A test may leave a directory without write or search permission (to make a write fail):
  // if the first removal fails, every directory in the tree gets owner rwx and it is retried.
  // What still cannot be removed is named on stderr (tools/test.sh then lists it too).
  void Remove() noexcept {
    if (path_.empty() || getpid() != owner_) return;
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (ec) {
      std::error_code ignored;
      fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
      for (fs::recursive_directory_iterator it(path_, ignored), end;
           !ignored && it != end; it.increment(ignored)) {
        std::error_code type_ec;
        if (it->is_directory(type_ec) && !it->is_symlink(type_ec))
          fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, type_ec);
      }
      ec.clear();
      fs::remove_all(path_, ec);
    }
    if (ec) std::fprintf(stderr, "TempDir: cannot remove %s: %s\n", path_.c_str(), ec.message().c_str());
  }

  std::string path_;
  pid_t owner_ = getpid();
};

}  // namespace kairos::testing

#endif  // KAIROS_TEST_TEMP_DIR_H_
