// File: abuse_util.h
// Layer: test (abuse). Helpers for the hostile-input suite: a stderr capture (so a test can
// assert the exact log lines a flood produces; its file, under TMPDIR, is unlinked at once)
// and a scratch directory (test/temp_dir.h's TempDir, removed when the test ends).
// Threading: single-threaded; StderrCapture swaps fd 2 for its lifetime.
#ifndef KAIROS_TEST_ABUSE_ABUSE_UTIL_H_
#define KAIROS_TEST_ABUSE_ABUSE_UTIL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace kairos::testing {

// Redirects fd 2 into a temp file until Stop(); Stop() returns the lines written.
class StderrCapture {
 public:
  StderrCapture() {
    std::string path = TempRoot() + "/kairos_abuse_stderr_XXXXXX";
    fd_ = mkstemp(path.data());
    unlink(path.c_str());
    fflush(stderr);
    saved_ = dup(2);
    dup2(fd_, 2);
  }
  ~StderrCapture() { Stop(); }
  std::vector<std::string> Stop() {
    if (saved_ >= 0) {
      fflush(stderr);
      dup2(saved_, 2);
      close(saved_);
      saved_ = -1;
      std::string text;
      char buf[4096];
      lseek(fd_, 0, SEEK_SET);
      for (ssize_t n; (n = read(fd_, buf, sizeof(buf))) > 0;) text.append(buf, n);
      close(fd_);
      size_t start = 0;
      while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        lines_.push_back(text.substr(start, end - start));
        start = end + 1;
      }
    }
    return lines_;
  }

 private:
  int fd_ = -1;
  int saved_ = -1;
  std::vector<std::string> lines_;
};

// A fresh directory for one test, removed with its contents when the test ends.
class ScratchDir : public TempDir {
 public:
  ScratchDir() : TempDir("kairos_abuse_") {}
};

}  // namespace kairos::testing

#endif  // KAIROS_TEST_ABUSE_ABUSE_UTIL_H_
