// File: json_reader_fuzz.cc
// Layer: fuzz entry point for THE JSON reader (libFuzzer signature). Deliberately thin: when
// the reader moves (src/json/), only the two calls below change. Any input must parse or be
// rejected with a status: never crash, hang, leak or read out of bounds.
// Threading: single-threaded per call.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "json/json_reader.h"
#include "output/json_reader.h"

extern "C" int KairosFuzzJsonReader(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)kairos::ParseJson(text);                 // one JSON value (metadata, RPC)
  (void)kairos::ReadKinetoJsonTraceText(text);   // a whole Kineto trace
  return 0;
}
