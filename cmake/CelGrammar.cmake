# The CEL parser (src/cel/): C++ generated at BUILD time from CEL's published ANTLR grammar
# (src/cel/grammar/CEL.g4, copied from google/cel-go parser/gen/CEL.g4) by the ANTLR 4 tool, compiled
# against the ANTLR 4 C++ runtime. Both come from Debian (scripts/install-deps): the tool `antlr4`
# (package antlr4, 4.7.2, runs on the JRE) and the runtime (libantlr4-runtime-dev, 4.9, found through
# its CMake package antlr4-runtime). Code from tool 4.7.2 builds and runs against runtime 4.9; the
# tests in tests/cel/ parse and evaluate through it.
#
# Defines gpufleet_cel_grammar: a static library of the generated lexer and parser (namespace
# gpufleet_celgen), their headers on its include path as SYSTEM headers, linking the runtime. The
# generated code is compiled as C++17 (it initialises std::string vectors from u8"" literals, which are
# char8_t in C++20) with warnings off: it is not ours to fix. The layer cel links it (EXTERNAL in
# src/layers.cmake); nothing of ANTLR appears in src/cel/cel.h.

find_package(antlr4-runtime CONFIG REQUIRED)  # Debian: /usr/lib/<arch>/cmake/antlr4-runtime, targets antlr4_shared/antlr4_static
find_program(GPUFLEET_ANTLR4 antlr4 REQUIRED
             DOC "The ANTLR 4 tool (Debian package antlr4) that generates the CEL parser")

set(GPUFLEET_CEL_GRAMMAR "${PROJECT_SOURCE_DIR}/src/cel/grammar/CEL.g4")
set(GPUFLEET_CEL_GEN_DIR "${PROJECT_BINARY_DIR}/generated/cel")
set(GPUFLEET_CEL_GEN_SOURCES
    "${GPUFLEET_CEL_GEN_DIR}/CELLexer.cpp" "${GPUFLEET_CEL_GEN_DIR}/CELParser.cpp")
set(GPUFLEET_CEL_GEN_HEADERS
    "${GPUFLEET_CEL_GEN_DIR}/CELLexer.h" "${GPUFLEET_CEL_GEN_DIR}/CELParser.h")
add_custom_command(
  OUTPUT ${GPUFLEET_CEL_GEN_SOURCES} ${GPUFLEET_CEL_GEN_HEADERS}
  COMMAND ${CMAKE_COMMAND} -E make_directory "${GPUFLEET_CEL_GEN_DIR}"
  COMMAND ${GPUFLEET_ANTLR4} -Dlanguage=Cpp -no-listener -no-visitor -package gpufleet_celgen
          -Xexact-output-dir -o "${GPUFLEET_CEL_GEN_DIR}" "${GPUFLEET_CEL_GRAMMAR}"
  DEPENDS "${GPUFLEET_CEL_GRAMMAR}"
  COMMENT "Generating the CEL parser from src/cel/grammar/CEL.g4 (ANTLR 4)"
  VERBATIM)

# Debian's runtime 4.9 umbrella header antlr4-runtime.h includes misc/InterpreterDataReader.h, which
# clang (14) refuses (InterpreterData default-constructs a dfa::Vocabulary whose default constructor is
# deleted); the sanitizer build (fuzz/) uses clang. Nothing here uses that header, so the build
# includes a copy of the umbrella without it, found before the runtime's own.
set(_antlr_umbrella "${ANTLR4_INCLUDE_DIR}/antlr4-runtime.h")
file(READ "${_antlr_umbrella}" _antlr_umbrella_text)
string(REPLACE "#include \"misc/InterpreterDataReader.h\"" "" _antlr_umbrella_text "${_antlr_umbrella_text}")
file(CONFIGURE OUTPUT "${GPUFLEET_CEL_GEN_DIR}/runtime/antlr4-runtime.h" CONTENT "${_antlr_umbrella_text}" @ONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_antlr_umbrella}")

add_library(gpufleet_cel_grammar STATIC ${GPUFLEET_CEL_GEN_SOURCES})
set_target_properties(gpufleet_cel_grammar PROPERTIES CXX_STANDARD 17 POSITION_INDEPENDENT_CODE ON)
target_compile_options(gpufleet_cel_grammar PRIVATE -w)
if(GPUFLEET_SANITIZE)
  # Coverage feedback for libFuzzer from the generated lexer and parser (fuzz/cel_expression_fuzz.cpp).
  target_compile_options(gpufleet_cel_grammar PRIVATE -fsanitize=fuzzer-no-link)
endif()
target_include_directories(gpufleet_cel_grammar SYSTEM PUBLIC "${GPUFLEET_CEL_GEN_DIR}" "${GPUFLEET_CEL_GEN_DIR}/runtime"
                                                          "${ANTLR4_INCLUDE_DIR}")
target_link_libraries(gpufleet_cel_grammar PUBLIC antlr4_shared)
