// File: proto_encoder.h
// Layer: kairos_output. A minimal protozero-style protobuf encoder: appends varints, fixed
// fields and length-delimited fields into one growable byte buffer, and encodes nested
// messages by reserving one length byte and shifting the body in the rare case it grows
// past 127 bytes. Lengths therefore stay minimal (no redundant 4-byte varints), which is
// what keeps a range under ~24 bytes (docs/PERFORMANCE.md, "Output").
// Threading: not thread-safe; one encoder per writer call.
#ifndef KAIROS_SRC_OUTPUT_PROTO_ENCODER_H_
#define KAIROS_SRC_OUTPUT_PROTO_ENCODER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace kairos::internal {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

// Bytes a varint of `v` occupies (1..10).
inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline uint8_t* WriteVarint(uint64_t v, uint8_t* p) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// A one-byte tag (fields 1-15) or two-byte tag (16-2047), as a constant.
constexpr uint32_t TagValue(uint32_t field, WireType type) {
  return (field << 3) | static_cast<uint32_t>(type);
}
// Unchecked writers for ProtoEncoder's direct-write path: each returns the new end.
inline uint8_t* PutVarintField(uint32_t tag, uint64_t v, uint8_t* p) {
  return WriteVarint(v, WriteVarint(tag, p));
}
inline uint8_t* PutFixed64Field(uint32_t tag, uint64_t v, uint8_t* p) {
  p = WriteVarint(tag, p);
  memcpy(p, &v, 8);  // little-endian hosts only (x86-64, aarch64)
  return p + 8;
}

class ProtoEncoder {
 public:
  explicit ProtoEncoder(size_t initial_capacity = 1 << 16)
      : buf_(new uint8_t[initial_capacity]), cap_(initial_capacity) {}
  ProtoEncoder(const ProtoEncoder&) = delete;
  ProtoEncoder& operator=(const ProtoEncoder&) = delete;

  const uint8_t* data() const { return buf_.get(); }
  size_t size() const { return len_; }
  size_t capacity() const { return cap_; }
  void Clear() { len_ = 0; }

  // Direct writes for hot paths: Reserve(n) once, write up to n bytes from ptr() with the
  // Put* helpers below, then SetEnd(p). No bounds check per field.
  uint8_t* ptr() { return buf_.get() + len_; }
  void SetEnd(uint8_t* p) { len_ = static_cast<size_t>(p - buf_.get()); }
  // The offset of `p` (a position returned by ptr() plus what was written since), for
  // EndNested of a nested message begun with direct writes.
  size_t OffsetOf(const uint8_t* p) const { return static_cast<size_t>(p - buf_.get()); }

  // Guarantees room for `n` more bytes. Positions returned by BeginNested stay valid
  // (they are offsets, not pointers).
  void Reserve(size_t n) {
    if (cap_ - len_ < n) Grow(n);
  }

  void Tag(uint32_t field, WireType type) {
    Reserve(5);
    Put((static_cast<uint64_t>(field) << 3) | static_cast<uint32_t>(type));
  }
  void Varint(uint32_t field, uint64_t v) {
    Reserve(15);
    Put((static_cast<uint64_t>(field) << 3) | 0);
    Put(v);
  }
  // int32/int64 fields: negative values take 10 bytes, as protobuf specifies.
  void SignedVarint(uint32_t field, int64_t v) { Varint(field, static_cast<uint64_t>(v)); }
  void Bool(uint32_t field, bool v) { Varint(field, v ? 1 : 0); }
  void Fixed64(uint32_t field, uint64_t v) {
    Reserve(13);
    Put((static_cast<uint64_t>(field) << 3) | 1);
    memcpy(buf_.get() + len_, &v, 8);  // little-endian hosts only (x86-64, aarch64)
    len_ += 8;
  }
  void Double(uint32_t field, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    Fixed64(field, bits);
  }
  void Bytes(uint32_t field, const void* data, size_t n) {
    Reserve(n + 15);
    Put((static_cast<uint64_t>(field) << 3) | 2);
    Put(n);
    if (n) memcpy(buf_.get() + len_, data, n);
    len_ += n;
  }
  void String(uint32_t field, std::string_view s) { Bytes(field, s.data(), s.size()); }

  // Starts a nested message: writes the tag and one placeholder length byte. Returns the
  // offset to pass to EndNested.
  size_t BeginNested(uint32_t field) {
    Reserve(6);
    Put((static_cast<uint64_t>(field) << 3) | 2);
    size_t mark = len_;
    buf_[len_++] = 0;
    return mark;
  }
  // Patches the length of the message begun at `mark`. Bodies of 128 bytes or more are
  // shifted right so the length varint fits; inner messages are closed first, so their
  // already-patched bytes move along unchanged.
  void EndNested(size_t mark) {
    size_t body = len_ - mark - 1;
    if (body < 0x80) {
      buf_[mark] = static_cast<uint8_t>(body);
      return;
    }
    size_t extra = VarintSize(body) - 1;
    Reserve(extra);
    uint8_t* base = buf_.get();
    memmove(base + mark + 1 + extra, base + mark + 1, body);
    WriteVarint(body, base + mark);
    len_ += extra;
  }

 private:
  void Put(uint64_t v) { len_ = static_cast<size_t>(WriteVarint(v, buf_.get() + len_) - buf_.get()); }
  void Grow(size_t n) {
    size_t cap = cap_ * 2;
    while (cap - len_ < n) cap *= 2;
    std::unique_ptr<uint8_t[]> nb(new uint8_t[cap]);
    memcpy(nb.get(), buf_.get(), len_);
    buf_ = std::move(nb);
    cap_ = cap;
  }

  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_;
  size_t len_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_OUTPUT_PROTO_ENCODER_H_
