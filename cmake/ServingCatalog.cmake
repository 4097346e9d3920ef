# The built-in serving catalog: data/inference/catalog.yaml embedded at configure time as a string
# constant in ${GPUFLEET_GENERATED_DIR}/serving_catalog_yaml.h (target gpufleet_generated), read by
# readers/serving/inference_catalog.cpp (builtin_serving_catalog). Editing the YAML file reconfigures the build.
# Needs GPUFLEET_GENERATED_DIR (cmake/GoRandTable.cmake sets it).
set(GPUFLEET_SERVING_CATALOG "${CMAKE_CURRENT_SOURCE_DIR}/data/inference/catalog.yaml")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${GPUFLEET_SERVING_CATALOG}")
file(READ "${GPUFLEET_SERVING_CATALOG}" _serving_catalog_text)
set(_serving_catalog_delim "gpufleet_catalog")
string(FIND "${_serving_catalog_text}" ")${_serving_catalog_delim}\"" _serving_catalog_clash)
if(NOT _serving_catalog_clash EQUAL -1)
  message(FATAL_ERROR "${GPUFLEET_SERVING_CATALOG} contains the raw-string delimiter ')${_serving_catalog_delim}\"'")
endif()
set(_serving_catalog_out
    "// Generated at configure time from data/inference/catalog.yaml (cmake/ServingCatalog.cmake); do not edit.\n#pragma once\n\n#include <string_view>\n\nnamespace gpufleet::generated {\n\n/// The file's name in error messages about the built-in catalog.\ninline constexpr std::string_view kServingCatalogFile = \"data/inference/catalog.yaml\";\n/// The file's text.\ninline constexpr std::string_view kServingCatalogYaml = R\"${_serving_catalog_delim}(${_serving_catalog_text})${_serving_catalog_delim}\";\n\n}  // namespace gpufleet::generated\n")
set(_serving_catalog_file "${GPUFLEET_GENERATED_DIR}/serving_catalog_yaml.h")
if(EXISTS "${_serving_catalog_file}")
  file(READ "${_serving_catalog_file}" _serving_catalog_old)
else()
  set(_serving_catalog_old "")
endif()
if(NOT _serving_catalog_old STREQUAL _serving_catalog_out)
  file(WRITE "${_serving_catalog_file}" "${_serving_catalog_out}")
endif()
