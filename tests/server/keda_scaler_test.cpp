// The KEDA external scaler (server/keda_scaler.h) through a gRPC client generated from KEDA's own
// proto (proto/externalscaler.proto, kedacore/keda pkg/scalers/externalscaler/externalscaler.proto):
// the client code is the same generated library the server uses.
#include "server/keda_scaler.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "support/test_pki.h"

#include "externalscaler.grpc.pb.h"

namespace gpufleet {
namespace {

io::ScalerObservation obs(double t, double rate) {
  io::ScalerObservation o;
  o.time_s = t;
  o.request_rate_rps = rate;
  return o;
}

externalscaler::ScaledObjectRef ref(const std::string& ns, const std::string& name,
                                    std::map<std::string, std::string> metadata) {
  externalscaler::ScaledObjectRef r;
  r.set_namespace_(ns);
  r.set_name(name);
  metadata.emplace("scalerAddress", "gpufleet.gpufleet-system:9091");  // KEDA passes the whole metadata
  for (const auto& [k, v] : metadata) (*r.mutable_scalermetadata())[k] = v;
  return r;
}

class KedaScalerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<io::ScalerObservation> batch;
    for (int i = 0; i <= 10; ++i) batch.push_back(obs(1000 + 60 * i, 10));  // 10 requests/s
    scaler_.observe("prod/chat", batch);
    server::KedaScalerOptions options;
    options.stream_poll_interval_s = 0.02;
    options.clock = [this] { return now_.load(); };
    keda_ = std::make_unique<server::KedaScaler>(scaler_, options);
    const int port = keda_->start("127.0.0.1:0");
    ASSERT_GT(port, 0);
    EXPECT_EQ(keda_->port(), port);
    stub_ = externalscaler::ExternalScaler::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { keda_->shutdown(); }

  std::atomic<double> now_{1600};
  live::InferenceScaler scaler_;
  std::unique_ptr<server::KedaScaler> keda_;
  std::unique_ptr<externalscaler::ExternalScaler::Stub> stub_;
};

// 10 requests/s at 4 per replica: active, ceil(10 / 4) = 3 replicas, reported as the metric value
// against a target of 1.
TEST_F(KedaScalerTest, IsActiveMetricSpecAndMetrics) {
  const externalscaler::ScaledObjectRef chat = ref("prod", "chat", {{"targetRequestRatePerReplica", "4"}});
  grpc::ClientContext c1;
  externalscaler::IsActiveResponse active;
  ASSERT_TRUE(stub_->IsActive(&c1, chat, &active).ok());
  EXPECT_TRUE(active.result());

  grpc::ClientContext c2;
  externalscaler::GetMetricSpecResponse spec;
  ASSERT_TRUE(stub_->GetMetricSpec(&c2, chat, &spec).ok());
  ASSERT_EQ(spec.metricspecs_size(), 1);
  EXPECT_EQ(spec.metricspecs(0).metricname(), "gpufleet-desired-replicas");
  EXPECT_EQ(spec.metricspecs(0).targetsize(), 1);
  EXPECT_DOUBLE_EQ(spec.metricspecs(0).targetsizefloat(), 1.0);

  grpc::ClientContext c3;
  externalscaler::GetMetricsRequest request;
  *request.mutable_scaledobjectref() = chat;
  request.set_metricname("s0-gpufleet-desired-replicas");
  externalscaler::GetMetricsResponse metrics;
  ASSERT_TRUE(stub_->GetMetrics(&c3, request, &metrics).ok());
  ASSERT_EQ(metrics.metricvalues_size(), 1);
  EXPECT_EQ(metrics.metricvalues(0).metricname(), "s0-gpufleet-desired-replicas");
  EXPECT_EQ(metrics.metricvalues(0).metricvalue(), 3);
  EXPECT_DOUBLE_EQ(metrics.metricvalues(0).metricvaluefloat(), 3.0);

  // maxReplicaCount 2 and the `service` key naming the same service from another ScaledObject.
  grpc::ClientContext c4;
  *request.mutable_scaledobjectref() =
      ref("prod", "chat-scaler", {{"targetRequestRatePerReplica", "4"}, {"maxReplicaCount", "2"}, {"service", "chat"}});
  ASSERT_TRUE(stub_->GetMetrics(&c4, request, &metrics).ok());
  EXPECT_EQ(metrics.metricvalues(0).metricvalue(), 2);
}

TEST_F(KedaScalerTest, Errors) {
  grpc::ClientContext c1;
  externalscaler::IsActiveResponse active;
  grpc::Status st = stub_->IsActive(&c1, ref("prod", "chat", {{"targetRequestRatePerReplica", "four"}}), &active);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "metadata targetRequestRatePerReplica: 'four' is not a number");

  grpc::ClientContext c2;
  externalscaler::GetMetricSpecResponse spec;
  st = stub_->GetMetricSpec(&c2, ref("prod", "chat", {}), &spec);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  grpc::ClientContext c3;
  st = stub_->IsActive(&c3, ref("prod", "other", {{"targetRequestRatePerReplica", "4"}}), &active);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "no observations of prod/other (POST /v1/services/prod/other/observations)");

  now_ = 1901;  // the last observation (1600) is 301 s old
  grpc::ClientContext c4;
  st = stub_->IsActive(&c4, ref("prod", "chat", {{"targetRequestRatePerReplica", "4"}}), &active);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);

  grpc::ClientContext c5;
  auto stream = stub_->StreamMetricSpec(&c5, ref("prod", "chat", {{"targetRequestRatePerReplica", "4"}}));
  externalscaler::GetMetricSpecResponse ignored;
  EXPECT_FALSE(stream->Read(&ignored));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

// The stream sends the state when it opens and again when it changes: 5 requests/s is above
// activationThreshold 3; one observation of 0 makes the 30-minute mean 2.5, below it. shutdown() ends
// the stream with OK.
TEST_F(KedaScalerTest, StreamIsActive) {
  scaler_.observe("prod/burst", {obs(1600, 5)});
  grpc::ClientContext context;
  auto stream = stub_->StreamIsActive(
      &context, ref("prod", "burst", {{"targetRequestRatePerReplica", "4"}, {"activationThreshold", "3"}}));
  externalscaler::IsActiveResponse r;
  ASSERT_TRUE(stream->Read(&r));
  EXPECT_TRUE(r.result());
  scaler_.observe("prod/burst", {obs(1600, 0)});
  ASSERT_TRUE(stream->Read(&r));
  EXPECT_FALSE(r.result());
  std::thread stopper([this] { keda_->shutdown(); });
  EXPECT_FALSE(stream->Read(&r));
  EXPECT_TRUE(stream->Finish().ok());
  stopper.join();
  EXPECT_EQ(keda_->port(), 0);
}


// ---------------------------------------------------------------------------------------------
// TLS, as KEDA's trigger metadata caCert / tlsClientCert / tlsClientKey use it.


// IsActive over a channel with `credentials`, with a 5 s deadline; the status.
grpc::Status is_active(int port, const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  auto stub = externalscaler::ExternalScaler::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port), credentials));
  grpc::ClientContext c;
  c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  externalscaler::IsActiveResponse active;
  return stub->IsActive(&c, ref("prod", "chat", {{"targetRequestRatePerReplica", "4"}}), &active);
}

std::shared_ptr<grpc::ChannelCredentials> tls_client(const test::Pki& pki, const char* root, bool with_client_cert) {
  grpc::SslCredentialsOptions o;
  o.pem_root_certs = pki.read(root);
  if (with_client_cert) {
    o.pem_private_key = pki.read("client.key");
    o.pem_cert_chain = pki.read("client.crt");
  }
  return grpc::SslCredentials(o);
}

TEST(KedaScalerTls, ServesTlsAndVerifiesClientsWithTheClientCa) {
  test::Pki pki;
  if (!pki.ok) GTEST_SKIP() << "the openssl command could not make test certificates";
  live::InferenceScaler scaler;
  scaler.observe("prod/chat", {obs(1000, 10)});

  server::KedaScalerOptions server_tls;
  server_tls.clock = [] { return 1030.0; };
  server_tls.tls_cert_file = pki.path("server.crt");
  server_tls.tls_key_file = pki.path("server.key");
  server::KedaScaler one_way(scaler, server_tls);
  const int port = one_way.start("127.0.0.1:0");
  EXPECT_TRUE(is_active(port, tls_client(pki, "ca.crt", false)).ok());                       // caCert only
  EXPECT_FALSE(is_active(port, grpc::InsecureChannelCredentials()).ok());                     // plaintext refused
  EXPECT_EQ(is_active(port, tls_client(pki, "other.crt", false)).error_code(), grpc::StatusCode::UNAVAILABLE);  // wrong CA
  one_way.shutdown();

  server::KedaScalerOptions mutual = server_tls;
  mutual.tls_client_ca_file = pki.path("ca.crt");
  server::KedaScaler mtls(scaler, mutual);
  const int mport = mtls.start("127.0.0.1:0");
  EXPECT_TRUE(is_active(mport, tls_client(pki, "ca.crt", true)).ok());   // tlsClientCert / tlsClientKey
  EXPECT_FALSE(is_active(mport, tls_client(pki, "ca.crt", false)).ok());  // no client certificate
}

TEST(KedaScalerTls, BadOptionsNameTheProblem) {
  test::Pki pki;
  if (!pki.ok) GTEST_SKIP() << "the openssl command could not make test certificates";
  live::InferenceScaler scaler;
  auto start_with = [&](const std::string& cert, const std::string& key, const std::string& ca) -> std::string {
    server::KedaScalerOptions o;
    o.tls_cert_file = cert;
    o.tls_key_file = key;
    o.tls_client_ca_file = ca;
    server::KedaScaler k(scaler, o);
    try {
      k.start("127.0.0.1:0");
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "started";
  };
  EXPECT_EQ(start_with(pki.path("server.crt"), "", ""), "a TLS certificate and key go together");
  EXPECT_EQ(start_with("", "", pki.path("ca.crt")), "a client CA needs the server's TLS certificate and key");
  EXPECT_EQ(start_with(pki.path("server.crt"), pki.path("missing.key"), ""), "cannot read " + pki.path("missing.key"));
  EXPECT_EQ(start_with(pki.path("server.crt"), pki.path("san.ext"), ""), pki.path("san.ext") + " is not PEM");
  EXPECT_EQ(start_with(pki.path("server.crt"), pki.path("server.key"), ""), "started");
}

}  // namespace
}  // namespace gpufleet
