// File: pipelined_sink.h
// Layer: kairos_output. PipelinedSink: a ByteSink in front of another one. It collects the
// writer's chunks into hand-offs of kHandOffBytes and passes each to the inner sink (write(2)
// into the page cache, compression) on a second kairos thread, kairos-write, while the writer
// formats the next.
//  - Larger writes: 256 KiB instead of the JSON writer's 64 KiB chunks, 4x fewer write(2)
//    calls (fewer trips through the kernel between stretches of formatting). Not 1 MiB: on
//    this kernel (6.18, ext4) 1 MiB writes made while other dirty pages are written back cost
//    up to 10x the CPU time of 64 or 256 KiB ones (docs/PERFORMANCE.md, "Flush: the JSON's
//    bytes and a second core").
//  - No copy: the JSON writer formats straight into the hand-off buffers (Exchange).
//  - The second core, when asked for (OutputOptions::write_thread: `kairos convert` on, a
//    job's sessions off): write(2) on kairos-write overlaps the formatting, so the write ends
//    sooner. Total CPU time does not drop (it rose 5-10% on the flush benchmark, the buffers
//    moving between cores): this buys wall time, not CPU time (issue 29 item 3: "writing on
//    a second core while the first converts is allowed").
// Bounded: at most kBuffers buffers of about kHandOffBytes each (a Write larger than that
// grows one buffer to its size). Bytes reach the inner sink in the order written. The thread
// lives from construction to Close()/Finish(); without it (the caller asked for one thread,
// or it could not be started) the same hand-offs are written on the caller's thread. The
// inner sink is used by one thread at a time (the ByteSink contract): by kairos-write while
// it runs, by the caller before it starts and after Close() joined it.
// Threading: Write/Finish/Close from one thread (the writer's); kairos-write inside.
#ifndef KAIROS_SRC_OUTPUT_PIPELINED_SINK_H_
#define KAIROS_SRC_OUTPUT_PIPELINED_SINK_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "output/sink.h"

namespace kairos {

class PipelinedSink : public ByteSink {
 public:
  // Bytes collected before a buffer goes to kairos-write (the JSON writer's chunk size).
  static constexpr size_t kHandOffBytes = 256 * 1024;
  // Buffers in flight: one being filled, one being written, two queued.
  static constexpr size_t kBuffers = 4;

  // `inner` must outlive this sink. `use_thread` false (or a thread that fails to start):
  // the hand-offs are written on the caller's thread.
  explicit PipelinedSink(ByteSink& inner, bool use_thread = true);
  // Close()s: the thread never outlives the sink, so the inner sink can be aborted after.
  ~PipelinedSink() override;
  PipelinedSink(const PipelinedSink&) = delete;
  PipelinedSink& operator=(const PipelinedSink&) = delete;

  // Returns the first error of the inner sink seen so far (a later one may surface only at
  // the next call or at Finish); after an error nothing more reaches the inner sink.
  absl::Status Write(const void* data, size_t size) override;
  // Hands over what is left, waits until the inner sink took all of it, stops the thread,
  // then calls the inner sink's Finish() (only when every write succeeded). Once only.
  absl::Status Finish() override;
  // Waits until the queued bytes are written (or dropped after an error) and joins the
  // thread, without finishing the inner sink. Idempotent. Returns the first error.
  absl::Status Close();
  // Write() without the copy: hands over the first `len` bytes of *buf (capacity *cap) and
  // puts another buffer (empty, capacity >= 1) in its place, waiting while kBuffers are in
  // flight. The JSON writer formats straight into these buffers (output/json_out.h). Without
  // the thread, or after an error, *buf is written or dropped and stays the caller's.
  absl::Status Exchange(std::unique_ptr<char[]>* buf, size_t* cap, size_t len);

  // Whether kairos-write is running (tests).
  bool threaded() const { return thread_.joinable(); }
  // CPUs this process may run on (sched_getaffinity), at least 1: the caller pipelines only
  // when there is a second one.
  static int UsableCpus();

 private:
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t cap = 0;
    size_t len = 0;
  };

  void Loop();
  // A free buffer (or a new one while fewer than kBuffers exist); waits for kairos-write.
  // Empty (no data) only after an error, when `stop_on_error`.
  Buffer TakeFree(std::unique_lock<std::mutex>& lock, bool stop_on_error);
  // Queues the buffer being filled (if any bytes) for kairos-write; without the thread,
  // writes it to the inner sink here.
  absl::Status HandOff();
  absl::Status Error();

  ByteSink& inner_;
  std::thread thread_;
  Buffer fill_;  // being filled by Write (caller's thread only)
  bool finished_ = false;

  std::mutex mu_;
  std::condition_variable work_cv_;  // kairos-write waits for work_ or stop_
  std::condition_variable free_cv_;  // Write waits for a free buffer
  std::deque<Buffer> work_;
  std::vector<Buffer> free_;
  size_t buffers_ = 0;  // buffers allocated so far (at most kBuffers)
  bool stop_ = false;
  absl::Status status_;  // the inner sink's first error
};

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_PIPELINED_SINK_H_
