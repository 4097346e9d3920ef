// KEDA's external scaler (gRPC service externalscaler.ExternalScaler, proto/externalscaler.proto,
// vendored from kedacore/keda pkg/scalers/externalscaler/externalscaler.proto) answering from the live
// replica recommendation (live/inference_scaler.h). KEDA calls it for a trigger of `type: external`
// (metadata scalerAddress: host:port) or `external-push` (StreamIsActive); the trigger's metadata
// arrives as ScaledObjectRef.scalerMetadata and is read by live::parse_scaler_trigger (keys in
// docs/live.md "KEDA external scaler and metrics-api").
//
// The RPCs (keda-docs content/docs/2.x/concepts/external-scalers.md):
//   IsActive         {result: Recommendation::active}
//   StreamIsActive   the same, sent when the stream opens and then whenever it changes, re-evaluated
//                    every stream_poll_interval_s; ends with OK on shutdown(), CANCELLED when the
//                    client goes away, or the error below once the service has no fresh observation
//   GetMetricSpec    one MetricSpec {metricName: kMetricName, targetSizeFloat: 1, targetSize: 1}: the
//                    metric is the desired replica count itself, so the HPA KEDA creates (AverageValue
//                    target 1) computes ceil(value / 1) = the recommendation. Needs no observation.
//   GetMetrics       one MetricValue {metricName: the request's (kMetricName if empty),
//                    metricValueFloat = metricValue = Recommendation::desired_replicas}
//   StreamMetricSpec UNIMPLEMENTED (the generated default): KEDA falls back to GetMetricSpec.
// Errors: metadata refused by parse_scaler_trigger -> INVALID_ARGUMENT with its reason; no
// observation of the service -> NOT_FOUND; a stale one -> UNAVAILABLE (live::unavailable_reason),
// so after `fallback.failureThreshold` errors KEDA's fallback replicas apply.
//
// Transport: plaintext gRPC, or TLS when KedaScalerOptions has a certificate and key, with client
// certificates required when it also has a client CA (mutual TLS). KEDA's side is the trigger's
// metadata `caCert` (the CA that signs this server's certificate), `tlsClientCert` / `tlsClientKey`
// (its certificate for mutual TLS) and `unsafeSsl` (kedacore/keda pkg/scalers/external_scaler.go,
// getClientForConnectionPool; keda-docs content/docs/2.x/scalers/external.md).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "live/inference_scaler.h"

namespace gpufleet::server {

struct KedaScalerOptions {
  /// How often an open StreamIsActive re-evaluates, seconds (> 0). KEDA's pollingInterval default is
  /// 30 s; a push stream exists to be quicker.
  double stream_poll_interval_s = 5;
  /// The clock, seconds, on the observations' time base; default: Unix time from the system clock.
  std::function<double()> clock;
  /// TLS: the server's certificate chain and private key, PEM files read by start(); both or neither
  /// ("" = plaintext).
  std::string tls_cert_file;
  std::string tls_key_file;
  /// With TLS: PEM CA certificates; a client must present a certificate one of them signs, else the
  /// handshake fails. "" = no client certificate asked.
  std::string tls_client_ca_file;
};

class KedaScaler {
 public:
  /// The metric name GetMetricSpec announces (KEDA names the HPA's External metric "s<i>-" + it).
  static constexpr const char* kMetricName = "gpufleet-desired-replicas";

  /// `scaler` must outlive this object. Throws std::invalid_argument on stream_poll_interval_s <= 0.
  explicit KedaScaler(live::InferenceScaler& scaler, KedaScalerOptions options = {});
  ~KedaScaler();  ///< shutdown()
  KedaScaler(const KedaScaler&) = delete;
  KedaScaler& operator=(const KedaScaler&) = delete;

  /// Listens on `address` ("host:port"; port 0 picks a free one) and serves on gRPC's own threads,
  /// over TLS when the options say so. Returns the bound port. Throws std::runtime_error when it
  /// cannot listen (a certificate and key that do not match also end here: gRPC refuses to start)
  /// or is already started; std::invalid_argument when a TLS file cannot be read or is not PEM
  /// (naming the file), or only one of the certificate and key is given, or a client CA without them.
  int start(const std::string& address);
  /// Ends open streams, waits for RPCs in flight, stops listening. Idempotent; no-op if not started.
  void shutdown();
  /// The bound port, 0 before start().
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufleet::server
