#include "model/xid.h"

#include <algorithm>
#include <array>

namespace gpufleet {
namespace {

// Codes, mnemonics and immediate actions from NVIDIA's XID catalog
// (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), for Ampere and later data
// center GPUs; device_plugin_skips from NVIDIA/k8s-device-plugin internal/rm/health.go (the XIDs it
// treats as application errors by default).
constexpr std::array kCatalog{
    XidInfo{8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", XidEffect::kRestartApplication, false},
    XidInfo{13, "ROBUST_CHANNEL_GR_EXCEPTION", "graphics engine exception", XidEffect::kRestartApplication, true},
    XidInfo{31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", XidEffect::kRestartApplication, true},
    XidInfo{43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", XidEffect::kRestartApplication, true},
    XidInfo{45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "preemptive cleanup, due to previous errors", XidEffect::kRestartApplication, true},
    XidInfo{48, "DBE_ERROR", "double bit ECC error", XidEffect::kResetGpu, false},
    XidInfo{63, "ROW_REMAP_PENDING", "row remapping recorded, pending a GPU reset", XidEffect::kResetGpu, false},
    XidInfo{64, "ROW_REMAP_FAILURE", "row remapping failure", XidEffect::kResetGpu, false},
    XidInfo{68, "ROBUST_CHANNEL_NVDEC0_ERROR", "video decoder exception", XidEffect::kRestartApplication, true},
    XidInfo{74, "NVLINK_ERROR", "NVLink error", XidEffect::kResetGpu, false},
    XidInfo{79, "GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", XidEffect::kResetGpu, false},
    XidInfo{92, "EXCESSIVE_SBE_INTERRUPTS", "high single-bit ECC error rate", XidEffect::kRestartApplication, false},
    XidInfo{94, "CONTAINED_ECC_ERROR", "contained ECC error", XidEffect::kRestartApplication, false},
    XidInfo{95, "UNCONTAINED_ECC_ERROR", "uncontained ECC error", XidEffect::kResetGpu, false},
    XidInfo{109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "context switch timeout", XidEffect::kRestartApplication, true},
    XidInfo{119, "GSP_RPC_TIMEOUT", "GSP RPC timeout", XidEffect::kResetGpu, false},
    XidInfo{120, "GSP_ERROR", "GSP error", XidEffect::kResetGpu, false},
};

}  // namespace

std::span<const XidInfo> xid_catalog() { return kCatalog; }

std::optional<XidInfo> find_xid(int32_t code) {
  const auto it = std::find_if(kCatalog.begin(), kCatalog.end(), [code](const XidInfo& x) { return x.code == code; });
  if (it == kCatalog.end()) return std::nullopt;
  return *it;
}

std::string known_xid_codes() {
  std::string out;
  for (const XidInfo& x : kCatalog) {
    if (!out.empty()) out += ", ";
    out += std::to_string(x.code);
  }
  return out;
}

const char* xid_action(XidEffect effect) {
  return effect == XidEffect::kResetGpu ? "drain and reset the GPU" : "restart the application";
}

}  // namespace gpufleet
