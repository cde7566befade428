// File: pipelined_sink_test.cc
// Layer: tests (output). PipelinedSink: every byte reaches the inner sink in order, in
// hand-offs of kHandOffBytes, on the thread kairos-write (or on the caller's thread without
// it, with the same write sizes); the inner sink's first error stops the writes and is
// returned; Finish is forwarded once; Exchange hands buffers over without a copy, in order with
// Write. The JSON trace written through it is byte-identical to the writer's output in memory.
// Threading: the test's thread plus kairos-write (in the concurrency set).
#include "output/pipelined_sink.h"

#include <catch2/catch.hpp>

#include <pthread.h>

#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "json_test_util.h"
#include "output/json_writer.h"
#include "output/writer.h"

namespace kairos {
namespace {

// A StringSink that also records the name of each thread that wrote into it.
class ThreadNamingSink : public testing::StringSink {
 public:
  absl::Status Write(const void* data, size_t size) override {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    threads.insert(name);
    return testing::StringSink::Write(data, size);
  }
  std::set<std::string> threads;
};

std::string CallerThreadName() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

// ~3.3 MB in uneven pieces (1 byte to 70 KB), as a writer hands them.
std::vector<std::string> Pieces() {
  std::mt19937 rng(11);
  std::vector<std::string> pieces;
  size_t total = 0;
  while (total < 3300 * 1000) {
    std::string p(1 + rng() % 70000, '\0');
    for (char& c : p) c = static_cast<char>('a' + rng() % 26);
    total += p.size();
    pieces.push_back(std::move(p));
  }
  return pieces;
}

TEST_CASE("PipelinedSink passes every byte in order, in hand-offs, from kairos-write") {
  const std::vector<std::string> pieces = Pieces();
  std::string expected;
  for (const std::string& p : pieces) expected += p;
  std::vector<size_t> sizes[2];
  for (int threaded = 1; threaded >= 0; --threaded) {
    ThreadNamingSink inner;
    {
      PipelinedSink pipe(inner, threaded == 1);
      CHECK(pipe.threaded() == (threaded == 1));
      for (const std::string& p : pieces) REQUIRE(pipe.Write(p.data(), p.size()).ok());
      REQUIRE(pipe.Finish().ok());
      CHECK_FALSE(pipe.threaded());  // joined
    }
    CHECK(inner.text == expected);
    CHECK(inner.finish_calls == 1);
    REQUIRE(!inner.write_sizes.empty());
    // Every write but the last is one hand-off: at least kHandOffBytes, less than that plus
    // the largest piece.
    for (size_t i = 0; i + 1 < inner.write_sizes.size(); ++i) {
      CHECK(inner.write_sizes[i] >= PipelinedSink::kHandOffBytes);
      CHECK(inner.write_sizes[i] < PipelinedSink::kHandOffBytes + 70000);
    }
    CHECK(inner.write_sizes.back() <= PipelinedSink::kHandOffBytes + 70000);
    CHECK(inner.threads == std::set<std::string>{threaded ? "kairos-write" : CallerThreadName()});
    sizes[threaded] = inner.write_sizes;
  }
  CHECK(sizes[0] == sizes[1]);  // the thread changes where the writes run, not what they are
}

TEST_CASE("PipelinedSink stops at the inner sink's first error and returns it") {
  // 16 chunks make one hand-off exactly.
  static_assert(PipelinedSink::kHandOffBytes % 16 == 0, "the test's arithmetic");
  const std::string chunk(PipelinedSink::kHandOffBytes / 16, 'x');
  for (int threaded = 1; threaded >= 0; --threaded) {
    testing::StringSink inner;
    inner.FailAfter(5 * PipelinedSink::kHandOffBytes / 2);  // the third hand-off fails
    PipelinedSink pipe(inner, threaded == 1);
    absl::Status st;
    int writes = 0;
    for (; writes < 200 && st.ok(); ++writes) st = pipe.Write(chunk.data(), chunk.size());
    const absl::Status finish = pipe.Finish();
    CHECK(finish.code() == absl::StatusCode::kResourceExhausted);
    // Without the thread the failing hand-off's Write returns the error itself; with it, a
    // later Write (or Finish) does, and nothing after the error reaches the inner sink.
    // At most kBuffers hand-offs are in flight, so the failing third one is seen at the
    // latest when the seventh wants a buffer (write 6 * 16 + 1).
    CHECK(st == finish);
    if (threaded == 0) {
      CHECK(writes == 48);
    } else {
      CHECK(writes >= 48);
      CHECK(writes <= 97);
    }
    CHECK(inner.text.size() == 2 * PipelinedSink::kHandOffBytes);
    CHECK(inner.failed_writes == 1);
    CHECK(inner.finish_calls == 0);
    CHECK(pipe.Write("x", 1).code() == absl::StatusCode::kFailedPrecondition);  // finished
  }
}

TEST_CASE("PipelinedSink forwards Finish once; Close then destruction write what was queued") {
  testing::StringSink inner;
  {
    PipelinedSink pipe(inner);
    REQUIRE(pipe.Write("abc", 3).ok());
    REQUIRE(pipe.Finish().ok());
    CHECK(pipe.Finish().code() == absl::StatusCode::kFailedPrecondition);
  }
  CHECK(inner.finish_calls == 1);
  CHECK(inner.text == "abc");

  testing::StringSink closed;
  {
    PipelinedSink pipe(closed);
    REQUIRE(pipe.Write("defg", 4).ok());
    REQUIRE(pipe.Close().ok());
    CHECK_FALSE(pipe.threaded());
  }
  CHECK(closed.text == "defg");
  CHECK(closed.finish_calls == 0);  // Close never finishes the inner sink
}

TEST_CASE("Exchange hands buffers over without a copy, in order with Write") {
  for (int threaded = 1; threaded >= 0; --threaded) {
    testing::StringSink inner;
    std::string expected;
    PipelinedSink pipe(inner, threaded == 1);
    size_t cap = 4096;
    std::unique_ptr<char[]> buf(new char[cap]);
    std::set<const char*> seen;  // the distinct buffers the caller formatted into
    for (int i = 0; i < 40; ++i) {
      const std::string w = "w" + std::to_string(i) + ";";
      REQUIRE(pipe.Write(w.data(), w.size()).ok());  // copied, and written first
      expected += w;
      const std::string x = std::string(1000 + i, static_cast<char>('a' + i % 26)) + "|";
      REQUIRE(x.size() <= cap);
      std::memcpy(buf.get(), x.data(), x.size());
      seen.insert(buf.get());
      const char* given = buf.get();
      REQUIRE(pipe.Exchange(&buf, &cap, x.size()).ok());
      expected += x;
      REQUIRE(buf != nullptr);
      REQUIRE(cap >= 1);
      if (threaded == 0) CHECK(buf.get() == given);  // written from the caller's buffer
      // The caller's own buffer, or one of the pipe's (a hand-off plus a writer chunk).
      CHECK((cap == 4096 || cap == PipelinedSink::kHandOffBytes + 64 * 1024));
    }
    REQUIRE(pipe.Finish().ok());
    CHECK(inner.text == expected);
    CHECK(inner.write_sizes.size() == 80);  // each Write's bytes, then each exchanged buffer
    // With the thread the caller's buffers rotate: its own and at most kBuffers of the pipe's.
    if (threaded == 1) {
      CHECK(seen.size() >= 2);
      CHECK(seen.size() <= PipelinedSink::kBuffers + 1);
    } else {
      CHECK(seen.size() == 1);
    }
  }
}

TEST_CASE("Exchange after an error returns it and leaves the caller its buffer") {
  testing::StringSink inner;
  inner.FailAfter(10);
  PipelinedSink pipe(inner);
  size_t cap = 64;
  std::unique_ptr<char[]> buf(new char[cap]);
  std::memset(buf.get(), 'z', cap);
  absl::Status st;
  for (int i = 0; i < 100 && st.ok(); ++i) st = pipe.Exchange(&buf, &cap, 64);
  CHECK(st.code() == absl::StatusCode::kResourceExhausted);
  REQUIRE(buf != nullptr);  // still usable
  CHECK(pipe.Finish() == st);
  CHECK(inner.failed_writes == 1);
  CHECK(inner.text.empty());
}

TEST_CASE("A JSON trace through kairos-write is byte-identical to the writer's output") {
  // ~4 MB of JSON: several hand-offs.
  TraceData data;
  data.pid = 77;
  data.window_start_ns = 1000;
  data.window_end_ns = 1000 + 40000 * 1000;
  const uint32_t t = data.AddTrack({TrackType::kThread, 77, 78, 0, 0, "main"});
  const StringId names[3] = {data.strings.Intern("aten::mm"), data.strings.Intern("aten::add"),
                             data.strings.Intern("ProfilerStep#1")};
  for (uint32_t i = 0; i < 40000; ++i) {
    const int64_t ts = 1000 + int64_t{i} * 1000;
    data.events_by_track[t].push_back(
        {ts, ts + 700 + i % 97, names[i % 3], t, 0, i + 1, kNoDetail, EventKind::kCpuOp, 0, 0});
  }
  testing::StringSink memory;
  JsonTraceWriter writer;
  REQUIRE(writer.Write(data, memory).ok());
  REQUIRE(memory.text.size() > 3 * PipelinedSink::kHandOffBytes);
  testing::TempDir dir;
  // Both ways: kairos-write on (what `kairos convert` asks for) and off (a session's default).
  REQUIRE(WriteTraceFile(data, {dir.File("t.json"), TraceFormat::kAuto, 1, {}, {}, true}).ok());
  REQUIRE(WriteTraceFile(data, {dir.File("one.json"), TraceFormat::kAuto, 1, {}, {}}).ok());
  CHECK(testing::ReadFile(dir.File("t.json")) == memory.text);
  CHECK(testing::ReadFile(dir.File("one.json")) == memory.text);
  CHECK(dir.List() == std::vector<std::string>{"one.json", "t.json"});
}

}  // namespace
}  // namespace kairos
