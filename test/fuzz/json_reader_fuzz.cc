// File: json_reader_fuzz.cc
// Layer: fuzz entry point for THE JSON reader (libFuzzer signature). Deliberately thin: when
// the reader moves (src/json/), only the calls below change. Any input must parse or be
// rejected with a status: never crash, hang, leak or read out of bounds.
// Threading: single-threaded per call.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "json/json_reader.h"
#include "json/json_span.h"
#include "output/json_reader.h"

namespace {

// The trace reader's fast path (json_span.h) must read every value exactly as the stream
// parser does: the same tree and end byte when it says kOk, a stream-parser failure when it
// says kInvalid, and kNeedMore only for a value that reaches the end of the bytes.
void CheckSpanAgreesWithStream(std::string_view text) {
  std::string padded(text);
  padded.append(kairos::kJsonSpanPadding, '\0');
  kairos::JsonSpanReader span(padded.data(), padded.data() + text.size());
  kairos::JsonValue fast;
  const kairos::JsonSpanStatus s = span.Value(&fast, 0);
  kairos::JsonTextSource src(text);
  kairos::JsonStreamParser stream(src);
  kairos::JsonValue slow;
  const bool ok = stream.ParseValue(&slow);
  const size_t used = static_cast<size_t>(span.pos() - padded.data());
  if (s == kairos::JsonSpanStatus::kOk &&
      (!ok || slow.ToJson() != fast.ToJson() || stream.offset() != used))
    __builtin_trap();
  if (s == kairos::JsonSpanStatus::kInvalid && ok) __builtin_trap();
  if (s == kairos::JsonSpanStatus::kNeedMore && ok && stream.offset() != text.size())
    __builtin_trap();
}

}  // namespace

extern "C" int KairosFuzzJsonReader(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)kairos::ParseJson(text);                 // one JSON value (metadata, RPC)
  (void)kairos::ReadKinetoJsonTraceText(text);   // a whole Kineto trace
  CheckSpanAgreesWithStream(text);               // the reader's fast path, value by value
  return 0;
}
