// File: metrics_http.cc
// Layer: tools. See metrics_http.h.
// Threading: stateless.
#include "metrics_http.h"

#include "absl/strings/str_cat.h"

namespace kairos::tools {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
  }
  return "Error";
}

HttpRequestVerdict Error(int status) {
  HttpRequestVerdict v;
  v.kind = HttpRequestVerdict::kError;
  v.status = status;
  return v;
}

}  // namespace

HttpRequestVerdict ParseHttpRequest(std::string_view received) {
  size_t end = received.find("\r\n\r\n");
  size_t sep = 4;
  if (end == std::string_view::npos) {  // bare LF line ends (curl never, netcat by hand)
    end = received.find("\n\n");
    sep = 2;
  }
  if (end == std::string_view::npos || end + sep > kMaxHttpHead) {
    if (received.size() > kMaxHttpHead) return Error(431);
    return HttpRequestVerdict{};
  }
  std::string_view line = received.substr(0, received.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // METHOD SP TARGET SP HTTP/1.x
  const size_t s1 = line.find(' ');
  const size_t s2 = s1 == std::string_view::npos ? s1 : line.find(' ', s1 + 1);
  if (s2 == std::string_view::npos || line.substr(s2 + 1).substr(0, 7) != "HTTP/1.") return Error(400);
  const std::string_view method = line.substr(0, s1);
  std::string_view target = line.substr(s1 + 1, s2 - s1 - 1);
  if (method != "GET" && method != "HEAD") return Error(405);
  target = target.substr(0, target.find('?'));
  if (target != "/metrics") return Error(404);
  HttpRequestVerdict v;
  v.kind = HttpRequestVerdict::kMetrics;
  v.head_only = method == "HEAD";
  v.status = 200;
  return v;
}

std::string HttpResponse(int status, std::string_view content_type, std::string_view body,
                         bool head_only) {
  std::string out = absl::StrCat("HTTP/1.1 ", status, " ", Reason(status),
                                 "\r\nContent-Type: ", std::string(content_type),
                                 "\r\nContent-Length: ", body.size(),
                                 "\r\nConnection: close\r\n\r\n");
  if (!head_only) out.append(body.data(), body.size());
  return out;
}

}  // namespace kairos::tools
