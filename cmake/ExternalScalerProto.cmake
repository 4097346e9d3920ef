# KEDA's external scaler service (proto/externalscaler.proto, vendored from kedacore/keda) compiled
# into the build tree with Debian's protoc and grpc_cpp_plugin (packages protobuf-compiler,
# protobuf-compiler-grpc, libgrpc++-dev, libprotobuf-dev: scripts/install-deps), as the static library
# gpufleet_externalscaler_proto. The `server` layer links it (EXTERNAL in src/layers.cmake); the tests
# link it for their gRPC client, generated from the same proto. Headers: #include "externalscaler.grpc.pb.h".
pkg_check_modules(GRPCPP REQUIRED IMPORTED_TARGET grpc++)
pkg_check_modules(PROTOBUF REQUIRED IMPORTED_TARGET protobuf)
find_program(GPUFLEET_PROTOC protoc REQUIRED)
find_program(GPUFLEET_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

set(_proto_dir ${PROJECT_SOURCE_DIR}/proto)
set(_proto_out ${PROJECT_BINARY_DIR}/generated/proto)
file(MAKE_DIRECTORY ${_proto_out})
set(_proto_sources ${_proto_out}/externalscaler.pb.cc ${_proto_out}/externalscaler.grpc.pb.cc)
set(_proto_headers ${_proto_out}/externalscaler.pb.h ${_proto_out}/externalscaler.grpc.pb.h)
add_custom_command(
  OUTPUT ${_proto_sources} ${_proto_headers}
  COMMAND ${GPUFLEET_PROTOC} --proto_path=${_proto_dir} --cpp_out=${_proto_out} --grpc_out=${_proto_out}
          --plugin=protoc-gen-grpc=${GPUFLEET_GRPC_CPP_PLUGIN} ${_proto_dir}/externalscaler.proto
  DEPENDS ${_proto_dir}/externalscaler.proto
  COMMENT "protoc: proto/externalscaler.proto (KEDA external scaler)"
  VERBATIM)
add_library(gpufleet_externalscaler_proto STATIC ${_proto_sources})
# Generated code is not ours to keep warning-free (-Wpedantic, unused parameters): system includes.
target_include_directories(gpufleet_externalscaler_proto SYSTEM PUBLIC ${_proto_out})
target_compile_options(gpufleet_externalscaler_proto PRIVATE -w)
target_link_libraries(gpufleet_externalscaler_proto PUBLIC PkgConfig::GRPCPP PkgConfig::PROTOBUF)
