// File: daemon_test_util.h
// Layer: test (daemon). A fake daemon endpoint (a bound datagram socket the test drives by
// hand) and unique endpoint names, so parallel ctest runs never share an abstract name.
// Threading: single-threaded test helpers.
#ifndef KAIROS_TEST_DAEMON_DAEMON_TEST_UTIL_H_
#define KAIROS_TEST_DAEMON_DAEMON_TEST_UTIL_H_

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "config/daemon_protocol.h"

namespace kairos::testing {

inline std::string UniqueEndpoint(const char* what) {
  static std::atomic<int> counter{0};
  return std::string("kairos-test-") + what + "-" + std::to_string(getpid()) + "-" +
         std::to_string(counter++);
}

// A datagram socket bound at an endpoint name; receives with a timeout (no sleeps).
class FakeEndpoint {
 public:
  FakeEndpoint(const std::string& name, const std::string& dir = "") {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    auto addr = internal::MakeDaemonAddress(name, dir);
    if (addr.ok()) {
      addr_ = *addr;
      if (!dir.empty()) unlink(addr_.addr.sun_path);
      bound_ = bind(fd_, reinterpret_cast<const sockaddr*>(&addr_.addr), addr_.length) == 0;
    }
  }
  ~FakeEndpoint() {
    close(fd_);
    if (addr_.addr.sun_path[0] != '\0') unlink(addr_.addr.sun_path);
  }
  bool bound() const { return bound_; }
  const internal::DaemonAddress& address() const { return addr_; }
  int fd() const { return fd_; }

  // One datagram or "" after timeout_ms. Records the sender for Reply().
  std::string Receive(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return "";
    std::string buf(128 * 1024, '\0');
    from_len_ = sizeof(from_);
    const ssize_t n = recvfrom(fd_, buf.data(), buf.size(), 0,
                               reinterpret_cast<sockaddr*>(&from_), &from_len_);
    buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return buf;
  }
  bool Reply(const std::string& bytes) { return SendTo(bytes, from_, from_len_); }
  bool SendTo(const std::string& bytes, const sockaddr_un& to, socklen_t len) {
    return sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT,
                  reinterpret_cast<const sockaddr*>(&to), len) ==
           static_cast<ssize_t>(bytes.size());
  }
  const sockaddr_un& last_sender() const { return from_; }
  socklen_t last_sender_length() const { return from_len_; }

 private:
  int fd_ = -1;
  bool bound_ = false;
  internal::DaemonAddress addr_;
  sockaddr_un from_{};
  socklen_t from_len_ = 0;
};

}  // namespace kairos::testing

#endif  // KAIROS_TEST_DAEMON_DAEMON_TEST_UTIL_H_
