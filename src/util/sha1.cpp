#include "util/sha1.h"

#include <array>
#include <cstdint>

namespace gpufleet {
namespace {

uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void block(std::array<uint32_t, 5>& h, const unsigned char* p) {
  uint32_t w[80];
  for (int t = 0; t < 16; ++t)
    w[t] = uint32_t{p[4 * t]} << 24 | uint32_t{p[4 * t + 1]} << 16 | uint32_t{p[4 * t + 2]} << 8 | uint32_t{p[4 * t + 3]};
  for (int t = 16; t < 80; ++t) w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int t = 0; t < 80; ++t) {
    uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    const uint32_t tmp = rotl(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = tmp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<uint32_t, 5> h{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const uint64_t bits = uint64_t{data.size()} * 8;
  const size_t whole = data.size() / 64 * 64;
  for (size_t i = 0; i < whole; i += 64) block(h, reinterpret_cast<const unsigned char*>(data.data() + i));
  // The rest (under 64 bytes), 0x80, zeros, and the length in bits (big-endian): one or two blocks.
  std::array<unsigned char, 128> tail{};
  const size_t rest = data.size() % 64;
  for (size_t j = 0; j < rest; ++j) tail[j] = static_cast<unsigned char>(data[whole + j]);
  tail[rest % 64] = 0x80;
  const size_t len = rest < 56 ? 64 : 128;
  for (size_t j = 0; j < 8; ++j) tail[len - 1 - j] = static_cast<unsigned char>(bits >> (8 * j));
  block(h, tail.data());
  if (len == 128) block(h, tail.data() + 64);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h)
    for (int s = 28; s >= 0; s -= 4) out += hex[(v >> s) & 0xF];
  return out;
}

}  // namespace gpufleet
