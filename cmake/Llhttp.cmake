# llhttp compiled from the C sources Debian's node-llhttp ships. llhttp.c holds two state machines
# and picks one with LLHTTP_STRICT_MODE: without the define the loose one is built (it takes any
# byte after CR, HTAB, form feed and 0x80-0xFF in the request target). We build the strict one and
# never call llhttp_set_lenient_*; tests/meta checks both, and runs the built library.
set(LLHTTP_SOURCE_DIR /usr/share/llhttp CACHE PATH "llhttp C sources (node-llhttp)")
set(LLHTTP_INCLUDE_DIR /usr/share/include/llhttp CACHE PATH "llhttp header (node-llhttp)")
foreach(f api.c http.c llhttp.c)
  if(NOT EXISTS ${LLHTTP_SOURCE_DIR}/${f})
    message(FATAL_ERROR "llhttp: ${LLHTTP_SOURCE_DIR}/${f} is missing; run .ci/setup (node-llhttp)")
  endif()
endforeach()
add_library(deps_llhttp STATIC
  ${LLHTTP_SOURCE_DIR}/api.c ${LLHTTP_SOURCE_DIR}/http.c ${LLHTTP_SOURCE_DIR}/llhttp.c)
target_include_directories(deps_llhttp SYSTEM PUBLIC ${LLHTTP_INCLUDE_DIR})
target_compile_definitions(deps_llhttp PRIVATE LLHTTP_STRICT_MODE=1)
# Generated C: its own warnings are not ours to fix.
target_compile_options(deps_llhttp PRIVATE -w)
# Its sources sit outside the checkout: mapped like ours (cmake/Flags.cmake) so no absolute path
# reaches the objects.
gk_path_map_flags(_llhttp_map ${CMAKE_BINARY_DIR} "llhttp/" ${LLHTTP_SOURCE_DIR})
gk_path_map_flags(_llhttp_map_include ${CMAKE_BINARY_DIR} "llhttp/include/" ${LLHTTP_INCLUDE_DIR})
target_compile_options(deps_llhttp PRIVATE ${_llhttp_map} ${_llhttp_map_include})
add_library(deps::llhttp ALIAS deps_llhttp)
