// File: daemon_protocol_test.cc
// Layer: test (daemon). Byte-exact encoding/decoding of every Dynolog IPC message against the
// layouts and example bytes of dynolog-wire-protocol.md §1-§3, and every rejection rule.
// Threading: single-threaded.
#include "config/daemon_protocol.h"

#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "temp_dir.h"

namespace kairos::internal {
namespace {

std::string Hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}
std::string Type(const char* t) {
  std::string out(32, '\0');
  memcpy(out.data(), t, strlen(t));
  return out;
}

// §3.4: the exact 244-byte payload of `dyno gputrace --log-file /tmp/trace.json`.
const std::string kDefaultPayload =
    "\n    ACTIVITIES_LOG_FILE=/tmp/trace.json\nPROFILE_START_TIME=0\n"
    "ACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\n"
    "PROFILE_WITH_STACK=false\nPROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false\n"
    "    REQUEST_TRACE_ID=2093711184972473596\n";

TEST_CASE("req encodes to the documented 84 bytes (§3.3)") {
  DaemonRequest r;
  r.type = 2;
  r.job_id = 0;
  r.pids = {0x4715, 0x46af, 0x46ae, 0x46aa, 0x46a9, 0x0b01, 0x0ae8};
  const std::string expected = Hex("2c00000000000000") + Type("req") +
                               Hex("0200000007000000" "0000000000000000"
                                   "15470000af460000ae460000aa460000a9460000010b0000e80a0000");
  const std::string bytes = EncodeDaemonRequest(r);
  REQUIRE(bytes.size() == 84);
  CHECK(bytes == expected);

  auto datagram = DecodeDaemonDatagram(bytes);
  REQUIRE(datagram.ok());
  CHECK(datagram->kind == DaemonMessageKind::kRequest);
  auto decoded = DecodeDaemonRequest(datagram->payload);
  REQUIRE(decoded.ok());
  CHECK(decoded->type == 2);
  CHECK(decoded->job_id == 0);
  CHECK(decoded->pids == r.pids);
}

TEST_CASE("req carries a 64-bit job id above 2^31 unchanged") {
  DaemonRequest r;
  r.type = 0;
  r.job_id = 5000000000LL;  // 0x12a05f200
  r.pids = {77};
  const std::string bytes = EncodeDaemonRequest(r);
  REQUIRE(bytes.size() == 60);
  CHECK(bytes.substr(40) == Hex("00000000" "01000000" "00f2052a01000000" "4d000000"));
  auto decoded = DecodeDaemonRequest(bytes.substr(40));
  REQUIRE(decoded.ok());
  CHECK(decoded->job_id == 5000000000LL);
  CHECK(decoded->type == 0);
}

TEST_CASE("config replies: empty is a bare 40-byte header, pending carries the text (§3.3)") {
  const std::string empty = EncodeDaemonConfigReply("");
  CHECK(empty == Hex("0000000000000000") + Type("req"));
  auto text = DecodeDaemonConfigReply(empty);
  REQUIRE(text.ok());
  CHECK(text->empty());

  REQUIRE(kDefaultPayload.size() == 244);
  const std::string full = EncodeDaemonConfigReply(kDefaultPayload);
  REQUIRE(full.size() == 284);
  CHECK(full.substr(0, 40) == Hex("f400000000000000") + Type("req"));
  CHECK(full.substr(40, 8) == Hex("0a20202020414354"));
  text = DecodeDaemonConfigReply(full);
  REQUIRE(text.ok());
  CHECK(*text == kDefaultPayload);
}

TEST_CASE("ctxt and its reply encode to the documented 56 and 44 bytes (§3.3)") {
  const std::string ctxt = EncodeDaemonContext({0, 0x4715, 0});
  CHECK(ctxt == Hex("1000000000000000") + Type("ctxt") +
                    Hex("00000000154700000000000000000000"));
  auto d = DecodeDaemonDatagram(ctxt);
  REQUIRE(d.ok());
  CHECK(d->kind == DaemonMessageKind::kContext);
  auto c = DecodeDaemonContext(d->payload);
  REQUIRE(c.ok());
  CHECK(c->gpu == 0);
  CHECK(c->pid == 0x4715);
  CHECK(c->job_id == 0);

  const std::string reply = EncodeDaemonContextReply(1);
  CHECK(reply == Hex("0400000000000000") + Type("ctxt") + Hex("01000000"));
  auto rd = DecodeDaemonDatagram(reply);
  REQUIRE(rd.ok());
  auto count = DecodeDaemonContextReply(rd->payload);
  REQUIRE(count.ok());
  CHECK(*count == 1);
}

TEST_CASE("datagram validation rejects truncated, lying, oversized and unknown input") {
  const std::string good = EncodeDaemonConfigReply("abc");
  SECTION("shorter than the header") {
    auto d = DecodeDaemonDatagram(good.substr(0, 39));
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().message() == "daemon datagram of 39 bytes is shorter than the 40-byte header");
  }
  SECTION("size field larger than the payload") {
    std::string bad = good;
    bad[0] = 100;
    auto d = DecodeDaemonDatagram(bad);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().message() == "daemon datagram size field says 100 payload bytes but 3 arrived");
  }
  SECTION("size field smaller than the payload") {
    std::string bad = good;
    bad[0] = 1;
    CHECK_FALSE(DecodeDaemonDatagram(bad).ok());
  }
  SECTION("huge size field (never trusted, never allocated)") {
    std::string bad = good;
    memset(bad.data(), 0xff, 8);
    auto d = DecodeDaemonDatagram(bad);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().message() ==
          "daemon datagram size field says 18446744073709551615 payload bytes but 3 arrived");
  }
  SECTION("oversized payload") {
    auto d = DecodeDaemonDatagram(EncodeDaemonConfigReply(std::string(kDaemonMaxPayload + 1, 'x')));
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().message() == "daemon datagram payload of 65537 bytes exceeds the 65536-byte limit");
    CHECK(DecodeDaemonDatagram(EncodeDaemonConfigReply(std::string(kDaemonMaxPayload, 'x'))).ok());
  }
  SECTION("unknown type, prefix tricks and a type without NUL") {
    std::string bad = good;
    memcpy(bad.data() + 8, "request", 7);  // the anchor would prefix-match this as "req"
    auto d = DecodeDaemonDatagram(bad);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().message() == "daemon datagram has unknown type \"request\"");
    memset(bad.data() + 8, 'A', 32);
    d = DecodeDaemonDatagram(bad);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().message() == "daemon datagram type is not NUL-terminated");
    memset(bad.data() + 8, 0, 32);
    CHECK_FALSE(DecodeDaemonDatagram(bad).ok());  // empty type
  }
  SECTION("a ctxt datagram is not a config reply") {
    auto t = DecodeDaemonConfigReply(EncodeDaemonContextReply(3));
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().message() == "expected a \"req\" reply, got \"ctxt\"");
  }
}

TEST_CASE("req payload validation: pid count and exact length") {
  DaemonRequest r;
  r.pids = {1, 2, 3};
  const std::string payload = EncodeDaemonRequest(r).substr(40);
  REQUIRE(payload.size() == 28);
  CHECK(DecodeDaemonRequest(payload).ok());
  auto short_payload = DecodeDaemonRequest(payload.substr(0, 27));
  REQUIRE_FALSE(short_payload.ok());
  CHECK(short_payload.status().message() ==
        "\"req\" payload of 27 bytes does not match 3 pids (28 bytes)");
  CHECK(DecodeDaemonRequest(payload + "1234").status().message() ==
        "\"req\" payload of 32 bytes does not match 3 pids (28 bytes)");
  CHECK(DecodeDaemonRequest(payload.substr(0, 15)).status().message() ==
        "\"req\" payload of 15 bytes is shorter than 16");
  std::string zero = payload;
  zero[4] = 0;
  CHECK(DecodeDaemonRequest(zero).status().message() == "\"req\" pid count 0 is outside [1, 11]");
  std::string negative = payload;
  memset(negative.data() + 4, 0xff, 4);
  CHECK(DecodeDaemonRequest(negative).status().message() ==
        "\"req\" pid count -1 is outside [1, 11]");
  r.pids.assign(12, 5);
  CHECK_FALSE(DecodeDaemonRequest(EncodeDaemonRequest(r).substr(40)).ok());
  r.pids.assign(11, 5);
  CHECK(DecodeDaemonRequest(EncodeDaemonRequest(r).substr(40)).ok());
  CHECK(DecodeDaemonContext(std::string(15, '\0')).status().message() ==
        "\"ctxt\" payload of 15 bytes; expected 16");
  CHECK_FALSE(DecodeDaemonContextReply(std::string(5, '\0')).ok());
}

TEST_CASE("abstract addresses include the trailing NUL (§1)") {
  auto a = MakeDaemonAddress("dynolog", "");
  REQUIRE(a.ok());
  CHECK(a->length == 11);
  CHECK(std::string(a->addr.sun_path, 9) == std::string("\0dynolog\0", 9));
  CHECK(DescribeDaemonAddress(a->addr, a->length) == "@dynolog@");
  const std::string client = "dynoconfigclient4bbee642-ae20-47e9-b533-d7a856e33697";
  REQUIRE(client.size() == 52);
  auto c = MakeDaemonAddress(client, "");
  REQUIRE(c.ok());
  CHECK(c->length == 2 + 52 + 2);
  CHECK(MakeDaemonAddress(std::string(106, 'n'), "").ok());
  CHECK(MakeDaemonAddress(std::string(107, 'n'), "").status().message() ==
        "daemon endpoint name of 107 bytes; expected 1..106");
  CHECK_FALSE(MakeDaemonAddress("", "").ok());
  CHECK_FALSE(MakeDaemonAddress("a/b", "").ok());
  CHECK_FALSE(MakeDaemonAddress(std::string("a\0b", 3), "").ok());
}

TEST_CASE("filesystem-mode addresses are <dir>/<name> NUL-terminated (§1)") {
  auto a = MakeDaemonAddress("dynolog", "/run/ipc");
  REQUIRE(a.ok());
  CHECK(std::string(a->addr.sun_path) == "/run/ipc/dynolog");
  CHECK(a->length == 2 + 16 + 1);
  auto b = MakeDaemonAddress("dynolog", "/run/ipc/");
  REQUIRE(b.ok());
  CHECK(std::string(b->addr.sun_path) == "/run/ipc/dynolog");
  CHECK(DescribeDaemonAddress(b->addr, b->length) == "/run/ipc/dynolog");
  CHECK_FALSE(MakeDaemonAddress("dynolog", "/" + std::string(100, 'd')).ok());
  sockaddr_un unbound{};
  CHECK(DescribeDaemonAddress(unbound, sizeof(sa_family_t)) == "(unbound)");
  sockaddr_un no_trailing{};
  memcpy(no_trailing.sun_path, "\0peer", 5);
  CHECK(DescribeDaemonAddress(no_trailing, sizeof(sa_family_t) + 5) == "@peer");
}

TEST_CASE("a bound socket file is shared by mode, never through a path swapped in after bind") {
  const kairos::testing::TempDir temp("kairos_sock_", 99);  // 99 + "/client1": 107 bytes
  const std::string& dir = temp.path();
  absl::StatusOr<DaemonAddress> a = MakeDaemonAddress("client1", dir);
  REQUIRE(a.ok());
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  REQUIRE(bind(fd, reinterpret_cast<const sockaddr*>(&a->addr), a->length) == 0);
  struct stat st {};
  CHECK(ShareBoundSocketFile(a->addr));
  REQUIRE(lstat(a->addr.sun_path, &st) == 0);
  CHECK((st.st_mode & 0777) == 0666);
  // Another user's move in a shared directory: the socket replaced by a symlink to a file of
  // ours. A chmod by path made that file world-writable; now nothing is changed.
  const std::string victim = dir + "/victim";
  std::ofstream(victim) << "secret";
  REQUIRE(chmod(victim.c_str(), 0600) == 0);
  REQUIRE(unlink(a->addr.sun_path) == 0);
  REQUIRE(symlink(victim.c_str(), a->addr.sun_path) == 0);
  CHECK_FALSE(ShareBoundSocketFile(a->addr));
  REQUIRE(stat(victim.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // A regular file in its place: not a socket, not touched.
  REQUIRE(unlink(a->addr.sun_path) == 0);
  std::ofstream(a->addr.sun_path) << "x";
  REQUIRE(chmod(a->addr.sun_path, 0600) == 0);
  CHECK_FALSE(ShareBoundSocketFile(a->addr));
  REQUIRE(stat(a->addr.sun_path, &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // Abstract addresses have no file.
  absl::StatusOr<DaemonAddress> abstract_addr = MakeDaemonAddress("client2", "");
  REQUIRE(abstract_addr.ok());
  CHECK(ShareBoundSocketFile(abstract_addr->addr));
  close(fd);
}

}  // namespace
}  // namespace kairos::internal
