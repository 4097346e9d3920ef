// SHA-1 (FIPS 180-4, section 6.1) of a byte string, as lowercase hex. Used where an upstream
// controller names or labels objects by a SHA-1 digest, e.g. LeaderWorkerSet's group-key label
// (kubernetes-sigs/lws pkg/utils/utils.go Sha1Hash, hex of crypto/sha1). Not for security.
#pragma once

#include <string>
#include <string_view>

namespace gpufleet {

/// The 40-character lowercase hex SHA-1 digest of `data` (Go: hex.EncodeToString(sha1.Sum(data))).
std::string sha1_hex(std::string_view data);

}  // namespace gpufleet
