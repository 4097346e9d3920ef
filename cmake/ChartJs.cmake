# The HTML report of `gpufleet pack --report` (src/report/pack_report.cpp; the page parts all reports share: src/report/html_page.cpp) draws its charts with Chart.js and
# must open without network access, so the library is embedded in the binary. It comes from the Debian
# package libjs-chart.js (installed by scripts/install-deps); the repository holds no copy of it.
#
# Two modes:
#  - included from CMakeLists.txt (configure time): locate the UMD build and add a BUILD-time step that
#    generates ${GPUFLEET_GENERATED_DIR}/chartjs_embed.cpp; sets GPUFLEET_CHARTJS_EMBED_SOURCE. Configure
#    only checks that the file exists, so it stays fast.
#  - run as `cmake -DINPUT=... -DOUTPUT=... -P ChartJs.cmake` (build time): writes the .cpp. The file is
#    split into 16 KiB chunks, each its own string literal of \xNN escapes (no literal gets near g++'s or
#    the standard's limits, and any byte is safe); html_page.cpp concatenates the chunks.

if(CMAKE_SCRIPT_MODE_FILE)
  if(NOT INPUT OR NOT OUTPUT)
    message(FATAL_ERROR "usage: cmake -DINPUT=chart.js -DOUTPUT=out.cpp -P ChartJs.cmake")
  endif()
  if(NOT EXISTS "${INPUT}")
    message(FATAL_ERROR "Chart.js not found at ${INPUT}. Install the Debian package libjs-chart.js "
                        "(scripts/install-deps does) or set GPUFLEET_CHARTJS, then re-run cmake.")
  endif()
  file(READ "${INPUT}" _text)
  string(TOLOWER "${_text}" _lower)
  # The code goes inline into a <script> element, which "</script" or "<!--" would end or derail.
  string(FIND "${_lower}" "</script" _bad_close)
  string(FIND "${_lower}" "<!--" _bad_comment)
  if(NOT _bad_close EQUAL -1 OR NOT _bad_comment EQUAL -1)
    message(FATAL_ERROR "${INPUT} contains '</script' or '<!--' and cannot be inlined into the HTML report")
  endif()
  # A plain <script> needs the UMD build (defines window.Chart), not the ES module build.
  if(_text MATCHES "(^|\n)(import|export) ")
    message(FATAL_ERROR "${INPUT} is an ES module build of Chart.js; point GPUFLEET_CHARTJS at the UMD build "
                        "(chart.umd.js for Chart.js 4, chart.min.js for Chart.js 3)")
  endif()
  unset(_lower)
  unset(_text)

  file(READ "${INPUT}" _hex HEX)
  string(LENGTH "${_hex}" _hex_len)
  math(EXPR _bytes "${_hex_len} / 2")
  set(_line_pattern "")  # 40 bytes per source line
  foreach(_i RANGE 1 40)
    string(APPEND _line_pattern "[0-9a-f][0-9a-f]")
  endforeach()
  set(_chunk_hex 32768)  # 16 KiB per string literal
  set(_out "// Generated at build time from ${INPUT} (${_bytes} bytes) by cmake/ChartJs.cmake; do not edit.\n")
  string(APPEND _out "#include <cstddef>\n#include <string_view>\n\nnamespace gpufleet::io::embedded {\nnamespace {\n")
  set(_views "")
  set(_offset 0)
  set(_n 0)
  while(_offset LESS _hex_len)
    string(SUBSTRING "${_hex}" ${_offset} ${_chunk_hex} _part)
    string(REGEX REPLACE "(${_line_pattern})" "\\1\n" _part "${_part}")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" _part "${_part}")
    string(REGEX REPLACE "\n$" "" _part "${_part}")
    string(REPLACE "\n" "\"\n    \"" _part "${_part}")
    string(APPEND _out "constexpr char kChunk${_n}[] =\n    \"${_part}\";\n")
    string(APPEND _views "    std::string_view(kChunk${_n}, sizeof kChunk${_n} - 1),\n")
    math(EXPR _offset "${_offset} + ${_chunk_hex}")
    math(EXPR _n "${_n} + 1")
  endwhile()
  string(APPEND _out "}  // namespace\n\nextern const std::string_view kChartJsChunks[] = {\n${_views}};\n")
  string(APPEND _out "extern const std::size_t kChartJsChunkCount = ${_n};\nextern const std::size_t kChartJsSize = ${_bytes};\n")
  string(APPEND _out "\n}  // namespace gpufleet::io::embedded\n")
  file(WRITE "${OUTPUT}.tmp" "${_out}")
  file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
  return()
endif()

set(GPUFLEET_CHARTJS "" CACHE FILEPATH "Chart.js UMD build embedded into the HTML report (Debian: libjs-chart.js)")
if(NOT GPUFLEET_CHARTJS)
  # Chart.js 4 ships the UMD build as chart.umd.js (its chart.js is an ES module); Chart.js 3 (Debian 12)
  # as chart.min.js / chart.js.
  foreach(_candidate chart.umd.min.js chart.umd.js chart.min.js)
    if(EXISTS "/usr/share/javascript/chart.js/${_candidate}")
      set(GPUFLEET_CHARTJS "/usr/share/javascript/chart.js/${_candidate}" CACHE FILEPATH "" FORCE)
      break()
    endif()
  endforeach()
endif()
if(NOT GPUFLEET_CHARTJS OR NOT EXISTS "${GPUFLEET_CHARTJS}")
  message(FATAL_ERROR "Chart.js was not found (looked for /usr/share/javascript/chart.js/chart.umd.js and "
                      "chart.min.js). The HTML report embeds it: install the Debian package libjs-chart.js "
                      "(scripts/install-deps does) or set GPUFLEET_CHARTJS to a Chart.js UMD build.")
endif()
message(STATUS "Chart.js for the HTML report: ${GPUFLEET_CHARTJS}")

set(GPUFLEET_CHARTJS_EMBED_SOURCE "${GPUFLEET_GENERATED_DIR}/chartjs_embed.cpp")
add_custom_command(
  OUTPUT "${GPUFLEET_CHARTJS_EMBED_SOURCE}"
  COMMAND "${CMAKE_COMMAND}" "-DINPUT=${GPUFLEET_CHARTJS}" "-DOUTPUT=${GPUFLEET_CHARTJS_EMBED_SOURCE}"
          -P "${CMAKE_CURRENT_LIST_FILE}"
  DEPENDS "${GPUFLEET_CHARTJS}" "${CMAKE_CURRENT_LIST_FILE}"
  COMMENT "Embedding Chart.js (${GPUFLEET_CHARTJS}) for the HTML report"
  VERBATIM)
