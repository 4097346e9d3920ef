#include "server/keda_scaler.h"

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>

#include <grpcpp/grpcpp.h>

#include "externalscaler.grpc.pb.h"

namespace gpufleet::server {
namespace {

double system_clock_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The trigger of a ScaledObjectRef, or the INVALID_ARGUMENT status.
grpc::Status trigger_of(const externalscaler::ScaledObjectRef& ref, live::ScalerTrigger& out) {
  const std::map<std::string, std::string> metadata(ref.scalermetadata().begin(), ref.scalermetadata().end());
  try {
    out = live::parse_scaler_trigger(metadata, live::service_key(ref.namespace_(), ref.name()), ref.namespace_());
    return grpc::Status::OK;
  } catch (const std::invalid_argument& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  }
}

// A PEM file's bytes; std::invalid_argument naming it when it cannot be read or is not PEM.
std::string read_pem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in) throw std::invalid_argument("cannot read " + path);
  if (text.str().find("-----BEGIN ") == std::string::npos) throw std::invalid_argument(path + " is not PEM");
  return text.str();
}

}  // namespace

struct KedaScaler::Impl final : externalscaler::ExternalScaler::Service {
  Impl(live::InferenceScaler& s, KedaScalerOptions o) : scaler(s), options(std::move(o)) {
    if (!options.clock) options.clock = system_clock_s;
    if (!(options.stream_poll_interval_s > 0)) throw std::invalid_argument("stream_poll_interval_s must be > 0");
  }

  // The recommendation for `ref`, or the status that refuses it.
  grpc::Status recommend(const externalscaler::ScaledObjectRef& ref, live::Recommendation& out) {
    live::ScalerTrigger trigger;
    if (grpc::Status st = trigger_of(ref, trigger); !st.ok()) return st;
    const std::optional<live::Recommendation> r = scaler.recommend(trigger, options.clock());
    if (const std::string why = live::unavailable_reason(trigger, r, scaler.options()); !why.empty())
      return {r ? grpc::StatusCode::UNAVAILABLE : grpc::StatusCode::NOT_FOUND, why};
    out = *r;
    return grpc::Status::OK;
  }

  grpc::Status IsActive(grpc::ServerContext*, const externalscaler::ScaledObjectRef* ref,
                        externalscaler::IsActiveResponse* response) override {
    live::Recommendation r;
    if (grpc::Status st = recommend(*ref, r); !st.ok()) return st;
    response->set_result(r.active);
    return grpc::Status::OK;
  }

  grpc::Status StreamIsActive(grpc::ServerContext* context, const externalscaler::ScaledObjectRef* ref,
                              grpc::ServerWriter<externalscaler::IsActiveResponse>* writer) override {
    std::optional<bool> sent;
    const auto interval = std::chrono::duration<double>(options.stream_poll_interval_s);
    for (;;) {
      {
        std::lock_guard lock(mutex);
        if (stopping) return grpc::Status::OK;
      }
      if (context->IsCancelled()) return grpc::Status::CANCELLED;
      live::Recommendation r;
      if (grpc::Status st = recommend(*ref, r); !st.ok()) return st;
      if (!sent || *sent != r.active) {
        externalscaler::IsActiveResponse response;
        response.set_result(r.active);
        if (!writer->Write(response)) return grpc::Status::CANCELLED;  // the client went away
        sent = r.active;
      }
      std::unique_lock lock(mutex);
      stop_cv.wait_for(lock, interval, [&] { return stopping; });
    }
  }

  grpc::Status GetMetricSpec(grpc::ServerContext*, const externalscaler::ScaledObjectRef* ref,
                             externalscaler::GetMetricSpecResponse* response) override {
    live::ScalerTrigger trigger;
    if (grpc::Status st = trigger_of(*ref, trigger); !st.ok()) return st;
    externalscaler::MetricSpec* spec = response->add_metricspecs();
    spec->set_metricname(kMetricName);
    spec->set_targetsize(1);
    spec->set_targetsizefloat(1.0);
    return grpc::Status::OK;
  }

  grpc::Status GetMetrics(grpc::ServerContext*, const externalscaler::GetMetricsRequest* request,
                          externalscaler::GetMetricsResponse* response) override {
    live::Recommendation r;
    if (grpc::Status st = recommend(request->scaledobjectref(), r); !st.ok()) return st;
    externalscaler::MetricValue* value = response->add_metricvalues();
    value->set_metricname(request->metricname().empty() ? std::string(kMetricName) : request->metricname());
    value->set_metricvalue(r.desired_replicas);
    value->set_metricvaluefloat(r.desired_replicas);
    return grpc::Status::OK;
  }

  live::InferenceScaler& scaler;
  KedaScalerOptions options;
  std::mutex mutex;
  std::condition_variable stop_cv;
  bool stopping = false;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

KedaScaler::KedaScaler(live::InferenceScaler& scaler, KedaScalerOptions options)
    : impl_(std::make_unique<Impl>(scaler, std::move(options))) {}

KedaScaler::~KedaScaler() { shutdown(); }

int KedaScaler::start(const std::string& address) {
  if (impl_->server) throw std::runtime_error("KEDA external scaler: already started");
  const KedaScalerOptions& o = impl_->options;
  if (o.tls_cert_file.empty() != o.tls_key_file.empty())
    throw std::invalid_argument("a TLS certificate and key go together");
  if (!o.tls_client_ca_file.empty() && o.tls_cert_file.empty())
    throw std::invalid_argument("a client CA needs the server's TLS certificate and key");
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!o.tls_cert_file.empty()) {
    grpc::SslServerCredentialsOptions ssl(o.tls_client_ca_file.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                                                       : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_key_cert_pairs.push_back({read_pem(o.tls_key_file), read_pem(o.tls_cert_file)});
    if (!o.tls_client_ca_file.empty()) ssl.pem_root_certs = read_pem(o.tls_client_ca_file);
    credentials = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  int selected = 0;
  builder.AddListeningPort(address, credentials, &selected);
  builder.RegisterService(impl_.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || selected == 0) throw std::runtime_error("KEDA external scaler: cannot listen on " + address);
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = false;
  }
  impl_->server = std::move(server);
  impl_->port = selected;
  return selected;
}

void KedaScaler::shutdown() {
  if (!impl_ || !impl_->server) return;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->stop_cv.notify_all();
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  impl_->server->Wait();
  impl_->server.reset();
  impl_->port = 0;
}

int KedaScaler::port() const { return impl_->port; }

}  // namespace gpufleet::server
