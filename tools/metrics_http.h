// File: metrics_http.h
// Layer: tools (`kairos daemon --metrics-port`). The smallest HTTP/1.x server side /metrics
// needs: it reads a request head (bounded), answers GET or HEAD of /metrics (any query string)
// with the exposition text, anything else with a short error, and closes. No keep-alive, no
// request bodies, no chunked encoding: Prometheus scrapes open one connection per scrape when
// the server closes. Pure functions; the relay owns the sockets (daemon_relay.cc).
// Threading: stateless.
#ifndef KAIROS_TOOLS_METRICS_HTTP_H_
#define KAIROS_TOOLS_METRICS_HTTP_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace kairos::tools {

// Request heads longer than this are answered 431 and closed (a scraper's is ~300 bytes).
inline constexpr size_t kMaxHttpHead = 8192;
inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

struct HttpRequestVerdict {
  enum Kind { kIncomplete, kMetrics, kError } kind = kIncomplete;
  bool head_only = false;  // HEAD: headers without the body
  int status = 0;          // kError: 400, 404, 405 or 431
};

// Looks at the bytes received so far on one connection.
HttpRequestVerdict ParseHttpRequest(std::string_view received);
// A whole response: status line, Content-Type, Content-Length, Connection: close, body
// (left out when head_only).
std::string HttpResponse(int status, std::string_view content_type, std::string_view body,
                         bool head_only);

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_METRICS_HTTP_H_
