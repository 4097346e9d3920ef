# Sanitizer build and fuzz targets: the options, read before any target is defined (the top-level
# CMakeLists.txt includes this file near its top, so the sanitizer flags reach every target, and
# fuzz/CMakeLists.txt near its end). Usage: see fuzz/CMakeLists.txt.
#
#   GPUFLEET_SANITIZE=ON   this build is the sanitizer build (clang only, e.g. build/sanitize): every
#                          target compiles with ASan + UBSan; `ninja` builds only the fuzz targets
#                          (target `fuzz`); `ninja gpufleet_tests` builds the unit tests sanitized.
#   GPUFLEET_FUZZ=AUTO|ON|OFF  in a normal build: build the fuzz targets in <build>/sanitize through
#                          an ExternalProject and replay their corpora in CTest (fuzz_replay_<target>).
#                          AUTO (default): when a clang++ that links -fsanitize=fuzzer works; ON: the
#                          same, an error without it; OFF: never (CTest then reports one skipped test).
#
# Sets for the rest of the configure:
#   GPUFLEET_FUZZ_TARGETS        every target of fuzz/targets.txt
#   GPUFLEET_FUZZ_TARGETS_BUILT  those whose reader API this checkout declares (the others are skipped)
#   GPUFLEET_FUZZ_SEEDS_<target> its extra seeds from examples/ (absolute paths)
#   GPUFLEET_FUZZ_SKIPPED_<target>  why a target is not built
#   GPUFLEET_FUZZ_REPLAY         ON when CTest replays the corpora (the binaries exist or will)
#   GPUFLEET_FUZZ_BINARY_DIR     where the fuzz binaries are
#   GPUFLEET_FUZZ_EXTERNAL       ON when fuzz/CMakeLists.txt adds the ExternalProject (normal build)
#   GPUFLEET_FUZZ_SKIP_MESSAGE   the skip test's message when GPUFLEET_FUZZ_REPLAY is OFF

set(GPUFLEET_FUZZ AUTO CACHE STRING
    "Build the libFuzzer targets (fuzz/) in <build>/sanitize with clang and replay their corpora in CTest: AUTO, ON or OFF")
set_property(CACHE GPUFLEET_FUZZ PROPERTY STRINGS AUTO ON OFF)
option(GPUFLEET_SANITIZE
       "Sanitizer build (clang): ASan + UBSan everywhere; by default builds only the fuzz targets" OFF)

# The targets and their reader APIs (fuzz/targets.txt).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/fuzz/targets.txt")
file(STRINGS "${PROJECT_SOURCE_DIR}/fuzz/targets.txt" _gpufleet_fuzz_lines REGEX "^[a-z]")
set(GPUFLEET_FUZZ_TARGETS "")
set(GPUFLEET_FUZZ_TARGETS_BUILT "")
foreach(_line IN LISTS _gpufleet_fuzz_lines)
  string(REGEX REPLACE "[ \t]+" ";" _fields "${_line}")
  list(LENGTH _fields _n)
  if(NOT _n EQUAL 5)
    message(FATAL_ERROR "fuzz/targets.txt: expected 5 columns in '${_line}'")
  endif()
  list(GET _fields 0 _target)
  list(GET _fields 3 _api)
  list(GET _fields 4 _seeds)
  list(APPEND GPUFLEET_FUZZ_TARGETS ${_target})
  set(GPUFLEET_FUZZ_SEEDS_${_target} "")
  if(NOT _seeds STREQUAL "-")
    string(REPLACE "," ";" _seeds "${_seeds}")
    foreach(_seed IN LISTS _seeds)
      list(APPEND GPUFLEET_FUZZ_SEEDS_${_target} "${PROJECT_SOURCE_DIR}/${_seed}")
    endforeach()
  endif()
  string(REPLACE ":" ";" _api "${_api}")
  list(GET _api 0 _header)
  list(GET _api 1 _function)
  set(_header_path "${PROJECT_SOURCE_DIR}/${_header}")
  set(_declared OFF)
  if(EXISTS "${_header_path}")
    file(STRINGS "${_header_path}" _hits REGEX "[^A-Za-z0-9_]${_function}\\(")
    if(_hits)
      set(_declared ON)
    endif()
  endif()
  if(_declared)
    list(APPEND GPUFLEET_FUZZ_TARGETS_BUILT ${_target})
  else()
    set(GPUFLEET_FUZZ_SKIPPED_${_target} "${_header} does not declare ${_function}() in this checkout")
    # Reconfigure when the API appears: watch the header, or its folder while it does not exist.
    if(EXISTS "${_header_path}")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_header_path}")
    else()
      get_filename_component(_dir "${_header_path}" DIRECTORY)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_dir}")
    endif()
  endif()
endforeach()

set(GPUFLEET_FUZZ_REPLAY OFF)
set(GPUFLEET_FUZZ_EXTERNAL OFF)
set(GPUFLEET_FUZZ_SKIP_MESSAGE "")

if(GPUFLEET_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GPUFLEET_SANITIZE=ON needs clang (libFuzzer), e.g. -DCMAKE_CXX_COMPILER=clang++; "
                        "this build uses ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}. scripts/fuzz and "
                        "scripts/test --sanitize configure build/sanitize with clang++.")
  endif()
  # -D_GLIBCXX_ASSERTIONS: libstdc++'s bounds checks (operator[], front(), back() of an empty
  # container), which ASan misses within a vector's capacity. ABI-neutral.
  set(GPUFLEET_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                              -fno-omit-frame-pointer -g -O1 -D_GLIBCXX_ASSERTIONS)
  add_compile_options(${GPUFLEET_SANITIZE_FLAGS})
  add_link_options(-fsanitize=address,undefined)
  set(GPUFLEET_FUZZ_REPLAY ON)
  set(GPUFLEET_FUZZ_BINARY_DIR "${PROJECT_BINARY_DIR}/fuzz")
  list(JOIN GPUFLEET_FUZZ_TARGETS_BUILT " " _built)
  message(STATUS "Sanitizer build (ASan + UBSan): fuzz targets ${_built}")
elseif(GPUFLEET_FUZZ STREQUAL "OFF")
  set(GPUFLEET_FUZZ_SKIP_MESSAGE
      "fuzz corpus replay skipped: GPUFLEET_FUZZ=OFF (no sanitizer build of the fuzz targets in this build)")
  message(STATUS "Fuzz targets: off (GPUFLEET_FUZZ=OFF)")
elseif(GPUFLEET_FUZZ STREQUAL "AUTO" OR GPUFLEET_FUZZ STREQUAL "ON")
  find_program(GPUFLEET_FUZZ_CXX NAMES clang++ clang++-16 clang++-15 clang++-14
               DOC "clang++ for the sanitizer build of the fuzz targets (<build>/sanitize)")
  set(_why "")
  if(NOT GPUFLEET_FUZZ_CXX)
    set(_why "no clang++ on PATH")
  elseif(NOT _GPUFLEET_FUZZ_CXX_PROBED STREQUAL GPUFLEET_FUZZ_CXX)
    # Can it compile, link and run a libFuzzer target with ASan + UBSan? (Debian: clang and
    # libclang-rt-14-dev.) Only a success is cached, so installing the packages later is noticed.
    set(_probe_dir "${PROJECT_BINARY_DIR}/CMakeFiles/gpufleet_fuzz_probe")
    file(MAKE_DIRECTORY "${_probe_dir}")
    file(WRITE "${_probe_dir}/probe.cpp"
         "#include <cstddef>\n#include <cstdint>\n#include <string>\n"
         "extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) {\n"
         "  return std::string(reinterpret_cast<const char*>(d), n) == \"x\" ? 0 : 0;\n}\n")
    execute_process(COMMAND "${GPUFLEET_FUZZ_CXX}" -std=c++20 -fsanitize=fuzzer,address,undefined
                            "${_probe_dir}/probe.cpp" -o "${_probe_dir}/probe"
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out TIMEOUT 120)
    if(_rc EQUAL 0)
      execute_process(COMMAND "${_probe_dir}/probe" -runs=1
                      RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out TIMEOUT 60)
      if(_rc EQUAL 0)
        set(_GPUFLEET_FUZZ_CXX_PROBED "${GPUFLEET_FUZZ_CXX}" CACHE INTERNAL "clang++ that built and ran a libFuzzer probe")
      else()
        set(_why "a libFuzzer probe built by ${GPUFLEET_FUZZ_CXX} does not run")
      endif()
    else()
      set(_why "${GPUFLEET_FUZZ_CXX} cannot link -fsanitize=fuzzer,address,undefined")
    endif()
    if(_why)
      string(REGEX REPLACE "\n+$" "" _out "${_out}")
      message(STATUS "Fuzz probe output:\n${_out}")
    endif()
  endif()
  if(_why)
    set(GPUFLEET_FUZZ_SKIP_MESSAGE
        "fuzz corpus replay skipped: clang++ with libFuzzer not found; scripts/install-deps installs clang and libclang-rt-14-dev (${_why})")
    if(GPUFLEET_FUZZ STREQUAL "ON")
      message(FATAL_ERROR "GPUFLEET_FUZZ=ON but ${_why}. Install clang and libclang-rt-14-dev "
                          "(scripts/install-deps does) or configure with -DGPUFLEET_FUZZ=OFF.")
    endif()
    message(STATUS "Fuzz targets: off (${_why}; scripts/install-deps installs clang and libclang-rt-14-dev)")
  else()
    set(GPUFLEET_FUZZ_EXTERNAL ON)
    set(GPUFLEET_FUZZ_REPLAY ON)
    set(GPUFLEET_FUZZ_BINARY_DIR "${PROJECT_BINARY_DIR}/sanitize/fuzz")
    message(STATUS "Fuzz targets: built in ${PROJECT_BINARY_DIR}/sanitize with ${GPUFLEET_FUZZ_CXX} "
                   "(ASan + UBSan), replayed by CTest (fuzz_replay_*)")
  endif()
else()
  message(FATAL_ERROR "GPUFLEET_FUZZ must be AUTO, ON or OFF, not '${GPUFLEET_FUZZ}'")
endif()

foreach(_target IN LISTS GPUFLEET_FUZZ_TARGETS)
  if(DEFINED GPUFLEET_FUZZ_SKIPPED_${_target} AND (GPUFLEET_FUZZ_REPLAY))
    message(STATUS "Fuzz target ${_target} left out: ${GPUFLEET_FUZZ_SKIPPED_${_target}}")
  endif()
endforeach()
