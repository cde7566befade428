// File: daemon_protocol_fuzz.cc
// Layer: test (daemon). libFuzzer-style entry point for the daemon message decoders. Built
// into the corpus replay test (no libFuzzer needed); with clang, link it with -fsanitize=fuzzer
// and a main-less build to fuzz for real. Any invariant violation aborts.
// Threading: single-threaded.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/daemon_protocol.h"

extern "C" int KairosFuzzDaemonProtocol(const uint8_t* data, size_t size) {
  using namespace kairos::internal;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto datagram = DecodeDaemonDatagram(bytes);
  if (datagram.ok()) {
    if (datagram->payload.size() != size - kDaemonHeaderSize) abort();
    if (datagram->kind == DaemonMessageKind::kRequest) {
      auto request = DecodeDaemonRequest(datagram->payload);
      if (request.ok()) {
        // One layout: a decoded request re-encodes to the same payload bytes.
        if (EncodeDaemonRequest(*request).substr(kDaemonHeaderSize) != datagram->payload) abort();
      }
      auto text = DecodeDaemonConfigReply(bytes);
      if (!text.ok() || *text != datagram->payload) abort();
    } else if (datagram->kind == DaemonMessageKind::kTelemetry) {
      // "tlm" (docs/FLEET.md): an offer the client parses, or lines the agent ingests
      // (metrics_agent_fuzz.cc fuzzes those). The envelope round-trips; an accepted offer's
      // interval is within [1, 86400] and re-encodes to an offer with the same value.
      const std::string encoded = EncodeDaemonTelemetry(datagram->payload);  // payload views it
      auto round = DecodeDaemonDatagram(encoded);
      if (!round.ok() || round->kind != DaemonMessageKind::kTelemetry || round->payload != datagram->payload)
        abort();
      auto offer = ParseDaemonTelemetryOffer(datagram->payload);
      if (offer.ok()) {
        if (*offer < 1 || *offer > 86400) abort();
        auto again = ParseDaemonTelemetryOffer(DaemonTelemetryOffer(*offer));
        if (!again.ok() || *again != *offer) abort();
      }
    } else {
      auto ctxt = DecodeDaemonContext(datagram->payload);
      if (ctxt.ok() && EncodeDaemonContext(*ctxt).substr(kDaemonHeaderSize) != datagram->payload) {
        abort();
      }
      (void)DecodeDaemonContextReply(datagram->payload);
    }
  }
  // Payload decoders also see raw input, as a confused caller might pass it.
  (void)DecodeDaemonRequest(bytes);
  (void)DecodeDaemonContext(bytes);
  (void)DecodeDaemonContextReply(bytes);
  (void)ParseDaemonTelemetryOffer(bytes);
  return 0;
}
