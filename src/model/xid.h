// NVIDIA XID errors: the codes gpufleet knows, each with its mnemonic and what it does to the GPU
// and its pods, from NVIDIA's XID catalog ("Analyzing Xid Errors with the Xid Catalog",
// https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html: the "Resolution Bucket
// (Immediate Action)" column). Two effects matter to scheduling:
//   kRestartApplication (bucket RESTART_APP or IGNORE): the process that hit the error dies and is
//     restarted (kubelet restarts the container in place); the GPU stays in allocatable.
//   kResetGpu (bucket RESET_GPU, RESTART_BM or a node reboot): the GPU must be drained and reset
//     before it takes work again; it leaves allocatable (sim::Fleet::withhold_gpu kUnhealthy) and
//     the pods on it stop.
//
// Where upstream differs. NVIDIA's device plugin (NVIDIA/k8s-device-plugin internal/rm/health.go)
// marks a GPU unhealthy on every XID except the ones it skips by default (13, 31, 43, 45, 68, 109;
// DP_DISABLE_HEALTHCHECKS adds more or disables the check), and an unhealthy GPU stays out of
// allocatable until the plugin restarts. So an application-level XID 94 (contained ECC error) takes
// the GPU away for good (NVIDIA/k8s-device-plugin#1014, open; #1974 asks for the catalog's
// handling). gpufleet follows the catalog: an application-level code restarts the application and
// keeps the GPU; only a reset-level code takes it out of allocatable.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace gpufleet {

/// What an XID does (see the top of this file).
enum class XidEffect : uint8_t {
  kRestartApplication,  ///< the application restarts; the GPU stays allocatable
  kResetGpu,            ///< the GPU leaves allocatable until drained and reset
};

/// One catalog entry.
struct XidInfo {
  int32_t code = 0;
  const char* mnemonic = "";     ///< the catalog's mnemonic, e.g. "CONTAINED_ECC_ERROR"
  const char* description = "";  ///< a short description, e.g. "contained ECC error"
  XidEffect effect = XidEffect::kRestartApplication;
  /// Skipped by NVIDIA's device plugin health check by default (internal/rm/health.go): the
  /// plugin keeps the GPU healthy on it.
  bool device_plugin_skips = false;
};

/// The known codes, ascending.
std::span<const XidInfo> xid_catalog();
/// The entry of `code`, nullopt if it is not in the catalog.
std::optional<XidInfo> find_xid(int32_t code);
/// The known codes as "13, 31, 43, ..." for error messages.
std::string known_xid_codes();
/// "restart the application" or "drain and reset the GPU": the action an alert asks for.
const char* xid_action(XidEffect effect);

}  // namespace gpufleet
