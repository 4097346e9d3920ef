# The layers of src/: one CMake target per layer, built from the table src/layers.cmake, so that an
# #include against the layering fails to build. Read by the top-level CMakeLists.txt (targets), by
# fuzz/CMakeLists.txt (the sanitized readers) and, in script mode, by cmake/IncludeGraph.cmake
# (scripts/include-graph), so the rule that maps files to layers exists once. docs/architecture.md
# explains the layers.
#
# The table: gpufleet_layer(<name> [EXECUTABLE <target>] SOURCES <entry>... [PUBLIC <layer>...]
#                           [PRIVATE <layer>...] [EXTERNAL <target>...]), lowest layer first.
#   SOURCES   folders of src/ only (e.g. sched/plugins: its files and those of its subfolders), so that
#             the tree shows the layers. A file belongs to the layer that names the deepest folder
#             holding it. Every file of src/ must belong to one.
#   PUBLIC    earlier layers that this layer's headers include (its users see them too).
#   PRIVATE   earlier layers that only its .cpp files include.
#   EXTERNAL  targets outside src/ it links privately (GLPK, libyaml, ...).
#   EXECUTABLE  the layer is this executable, not a library (the command line).
# A library layer is the target gpufleet_<name>: STATIC from its .cpp files, or INTERFACE when it has
# headers only.
#
# How the layering holds: the headers of a layer are reachable only through its own include root,
# <build>/layers/<name>/, which holds a symbolic link per header (<build>/layers/model/model/node.h ->
# src/model/node.h), and src/ itself is on no include path. A target sees its own root and those of
# the layers it links (a PRIVATE dependency's PUBLIC ones included), so `#include "sched/scheduler.h"`
# in src/model/ fails with "No such file or directory". Sources are globbed with CONFIGURE_DEPENDS:
# a file added to a folder joins its layer at the next build.

set(GPUFLEET_LAYERS "")

# Records one row of the table (see above).
function(gpufleet_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 _l "" "EXECUTABLE" "SOURCES;PUBLIC;PRIVATE;EXTERNAL")
  if(_l_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "src/layers.cmake: layer ${name}: unexpected arguments '${_l_UNPARSED_ARGUMENTS}'")
  endif()
  if(name IN_LIST GPUFLEET_LAYERS)
    message(FATAL_ERROR "src/layers.cmake: layer ${name} is listed twice")
  endif()
  if(NOT _l_SOURCES)
    message(FATAL_ERROR "src/layers.cmake: layer ${name} has no SOURCES")
  endif()
  foreach(_dep IN LISTS _l_PUBLIC _l_PRIVATE)
    if(NOT _dep IN_LIST GPUFLEET_LAYERS)
      message(FATAL_ERROR "src/layers.cmake: layer ${name} depends on '${_dep}', which is not a layer listed "
                          "before it (a layer may only use lower layers, listed earlier)")
    endif()
  endforeach()
  set(GPUFLEET_LAYERS ${GPUFLEET_LAYERS} ${name} PARENT_SCOPE)
  set(GPUFLEET_LAYER_${name}_ENTRIES ${_l_SOURCES} PARENT_SCOPE)
  set(GPUFLEET_LAYER_${name}_PUBLIC ${_l_PUBLIC} PARENT_SCOPE)
  set(GPUFLEET_LAYER_${name}_PRIVATE ${_l_PRIVATE} PARENT_SCOPE)
  set(GPUFLEET_LAYER_${name}_EXTERNAL ${_l_EXTERNAL} PARENT_SCOPE)
  set(GPUFLEET_LAYER_${name}_EXECUTABLE "${_l_EXECUTABLE}" PARENT_SCOPE)
endfunction()

# Assigns every .h and .cpp file under <src_dir> to its layer. Sets, in the caller's scope:
#   GPUFLEET_LAYER_<name>_HEADERS, GPUFLEET_LAYER_<name>_CPP   paths relative to src_dir
#   GPUFLEET_LAYER_OF_<relative path>                           the file's layer
#   GPUFLEET_LAYER_FILES                                        every file, relative
# Stops with an error for a file no layer takes, or an entry that names no folder and no file.
macro(gpufleet_layers_assign src_dir)
  if(CMAKE_SCRIPT_MODE_FILE)
    file(GLOB_RECURSE GPUFLEET_LAYER_FILES RELATIVE "${src_dir}" "${src_dir}/*.h" "${src_dir}/*.cpp")
  else()
    file(GLOB_RECURSE GPUFLEET_LAYER_FILES RELATIVE "${src_dir}" CONFIGURE_DEPENDS "${src_dir}/*.h" "${src_dir}/*.cpp")
  endif()
  list(SORT GPUFLEET_LAYER_FILES)
  foreach(_layer IN LISTS GPUFLEET_LAYERS)
    set(GPUFLEET_LAYER_${_layer}_HEADERS "")
    set(GPUFLEET_LAYER_${_layer}_CPP "")
  endforeach()
  foreach(_file IN LISTS GPUFLEET_LAYER_FILES)
    set(_owner "")
    set(_owner_depth -1)  # -1: none; else the depth of the folder that claims it
    foreach(_layer IN LISTS GPUFLEET_LAYERS)
      foreach(_entry IN LISTS GPUFLEET_LAYER_${_layer}_ENTRIES)
        set(_depth -1)
        if(_file MATCHES "^${_entry}/")
          string(REGEX MATCHALL "/" _slashes "${_entry}/")
          list(LENGTH _slashes _depth)
        endif()
        if(_depth GREATER -1)
          if(_depth EQUAL _owner_depth AND NOT _owner STREQUAL _layer)
            message(FATAL_ERROR "src/layers.cmake: src/${_file} is claimed by layers ${_owner} and ${_layer}")
          endif()
          if(_depth GREATER _owner_depth)
            set(_owner "${_layer}")
            set(_owner_depth ${_depth})
          endif()
        endif()
      endforeach()
    endforeach()
    if(NOT _owner)
      message(FATAL_ERROR "src/${_file} belongs to no layer: add its folder to a layer of src/layers.cmake "
                          "(a new folder gets its own row, placed above the layers it uses)")
    endif()
    set(GPUFLEET_LAYER_OF_${_file} "${_owner}")
    if(_file MATCHES "\\.h$")
      list(APPEND GPUFLEET_LAYER_${_owner}_HEADERS "${_file}")
    else()
      list(APPEND GPUFLEET_LAYER_${_owner}_CPP "${_file}")
    endif()
  endforeach()
  foreach(_layer IN LISTS GPUFLEET_LAYERS)
    foreach(_entry IN LISTS GPUFLEET_LAYER_${_layer}_ENTRIES)
      if(NOT IS_DIRECTORY "${src_dir}/${_entry}")
        message(FATAL_ERROR "src/layers.cmake: layer ${_layer}: '${_entry}' is not a folder of src/ (a layer "
                            "names folders only; was it moved?)")
      endif()
    endforeach()
  endforeach()
endmacro()

# The layers whose include roots a target of <layer> sees besides its own, i.e. what its sources may
# include: its PUBLIC and PRIVATE dependencies and, through them, their PUBLIC ones (as CMake
# propagates them). Sets <out> in the caller's scope.
function(gpufleet_layer_visible out layer)
  set(_seen "")
  set(_todo ${GPUFLEET_LAYER_${layer}_PUBLIC} ${GPUFLEET_LAYER_${layer}_PRIVATE})
  while(_todo)
    list(POP_FRONT _todo _dep)
    if(NOT _dep IN_LIST _seen)
      list(APPEND _seen ${_dep})
      list(APPEND _todo ${GPUFLEET_LAYER_${_dep}_PUBLIC})
    endif()
  endwhile()
  set(${out} ${_seen} PARENT_SCOPE)
endfunction()

# Every layer <layer> links, directly or not (PUBLIC and PRIVATE), itself included.
function(gpufleet_layer_closure out layer)
  set(_seen "")
  set(_todo ${layer})
  while(_todo)
    list(POP_FRONT _todo _dep)
    if(NOT _dep IN_LIST _seen)
      list(APPEND _seen ${_dep})
      list(APPEND _todo ${GPUFLEET_LAYER_${_dep}_PUBLIC} ${GPUFLEET_LAYER_${_dep}_PRIVATE})
    endif()
  endwhile()
  set(${out} ${_seen} PARENT_SCOPE)
endfunction()

# The target of a layer: gpufleet_<name><suffix>, or its executable.
function(gpufleet_layer_target out layer suffix)
  if(GPUFLEET_LAYER_${layer}_EXECUTABLE)
    set(${out} "${GPUFLEET_LAYER_${layer}_EXECUTABLE}${suffix}" PARENT_SCOPE)
  else()
    set(${out} "gpufleet_${layer}${suffix}" PARENT_SCOPE)
  endif()
endfunction()

# Creates the include roots (<build>/layers/<name>/) of every layer: one symbolic link per header,
# stale links removed.
function(gpufleet_layers_include_roots src_dir)
  set(_base "${PROJECT_BINARY_DIR}/layers")
  set(_wanted "")
  foreach(_layer IN LISTS GPUFLEET_LAYERS)
    foreach(_header IN LISTS GPUFLEET_LAYER_${_layer}_HEADERS)
      set(_link "${_base}/${_layer}/${_header}")
      list(APPEND _wanted "${_link}")
      set(_target "")
      if(IS_SYMLINK "${_link}")
        file(READ_SYMLINK "${_link}" _target)
      endif()
      if(NOT _target STREQUAL "${src_dir}/${_header}")
        get_filename_component(_dir "${_link}" DIRECTORY)
        file(MAKE_DIRECTORY "${_dir}")
        file(REMOVE "${_link}")
        file(CREATE_LINK "${src_dir}/${_header}" "${_link}" SYMBOLIC)
      endif()
    endforeach()
  endforeach()
  file(GLOB_RECURSE _existing LIST_DIRECTORIES false "${_base}/*")
  foreach(_link IN LISTS _existing)
    if(NOT _link IN_LIST _wanted)
      file(REMOVE "${_link}")
    endif()
  endforeach()
endfunction()

# Defines the targets of <layers> (default: all), named with <suffix> appended (fuzz/ builds the
# readers again with coverage instrumentation as gpufleet_<name>_fuzz), each compiled with
# COMPILE_OPTIONS and linking COMMON (libraries every layer may use, e.g. fmt) publicly.
function(gpufleet_layer_targets)
  cmake_parse_arguments(PARSE_ARGV 0 _t "" "SUFFIX;SOURCE_DIR" "LAYERS;COMPILE_OPTIONS;COMMON")
  if(NOT _t_LAYERS)
    set(_t_LAYERS ${GPUFLEET_LAYERS})
  endif()
  foreach(_layer IN LISTS _t_LAYERS)
    gpufleet_layer_target(_target ${_layer} "${_t_SUFFIX}")
    set(_root "${PROJECT_BINARY_DIR}/layers/${_layer}")
    set(_sources "")
    foreach(_cpp IN LISTS GPUFLEET_LAYER_${_layer}_CPP)
      list(APPEND _sources "${_t_SOURCE_DIR}/${_cpp}")
    endforeach()
    set(_deps_public "")
    set(_deps_private "")
    foreach(_dep IN LISTS GPUFLEET_LAYER_${_layer}_PUBLIC)
      gpufleet_layer_target(_dep_target ${_dep} "${_t_SUFFIX}")
      list(APPEND _deps_public ${_dep_target})
    endforeach()
    foreach(_dep IN LISTS GPUFLEET_LAYER_${_layer}_PRIVATE)
      gpufleet_layer_target(_dep_target ${_dep} "${_t_SUFFIX}")
      list(APPEND _deps_private ${_dep_target})
    endforeach()
    if(GPUFLEET_LAYER_${_layer}_EXECUTABLE)
      add_executable(${_target} ${_sources})
      target_include_directories(${_target} PRIVATE "${_root}")
      target_link_libraries(${_target} PRIVATE ${_deps_public} ${_deps_private} ${_t_COMMON}
                                               ${GPUFLEET_LAYER_${_layer}_EXTERNAL})
    elseif(_sources)
      add_library(${_target} STATIC ${_sources})
      target_include_directories(${_target} PUBLIC "${_root}")
      target_link_libraries(${_target} PUBLIC ${_deps_public} ${_t_COMMON}
                                       PRIVATE ${_deps_private} ${GPUFLEET_LAYER_${_layer}_EXTERNAL})
    else()
      add_library(${_target} INTERFACE)
      target_include_directories(${_target} INTERFACE "${_root}")
      target_link_libraries(${_target} INTERFACE ${_deps_public} ${_deps_private} ${_t_COMMON}
                                                 ${GPUFLEET_LAYER_${_layer}_EXTERNAL})
    endif()
    if(_sources AND _t_COMPILE_OPTIONS)
      target_compile_options(${_target} PRIVATE ${_t_COMPILE_OPTIONS})
    endif()
  endforeach()
endfunction()

# An object library that compiles <source> exactly as a .cpp file of <layer> compiles (its include
# root, its dependencies), excluded from `all`: the layering tests (tests/layering/) build it and
# expect success or failure.
function(gpufleet_layer_probe target source layer)
  set(_deps "")
  foreach(_dep IN LISTS GPUFLEET_LAYER_${layer}_PUBLIC GPUFLEET_LAYER_${layer}_PRIVATE)
    gpufleet_layer_target(_dep_target ${_dep} "")
    list(APPEND _deps ${_dep_target})
  endforeach()
  add_library(${target} OBJECT EXCLUDE_FROM_ALL "${source}")
  target_include_directories(${target} PRIVATE "${PROJECT_BINARY_DIR}/layers/${layer}")
  target_link_libraries(${target} PRIVATE ${_deps})
endfunction()
