# Warnings and hardening for our own targets (docs/decisions.md#build-flags). Third-party code
# compiled here (llhttp, BoringSSL) does not get these warnings; it gets the hardening.

set(GK_WARNINGS
  -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wswitch-enum -Wimplicit-fallthrough)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports a false -Wrestrict inside libstdc++ for `"literal" + std::string` at -O2
  # (GCC bug 105651, fixed in 13).
  list(APPEND GK_WARNINGS -Wno-restrict)
endif()

# Exceptions are off in our code: errors are values (docs/decisions.md#errors-are-values).
set(GK_CXX_OPTIONS -fno-exceptions)

set(GK_HARDENING -fstack-protector-strong)
# _FORTIFY_SOURCE needs optimisation; glibc warns (an error under -Werror) without it.
if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  list(APPEND GK_HARDENING -D_FORTIFY_SOURCE=3)
endif()
add_compile_options(${GK_HARDENING})

# Reproducible from any checkout (docs/decisions.md#build-flags): no source or build path reaches
# an object. -ffile-prefix-map rewrites __FILE__ (BoringSSL's error queue records it) and debug
# info alike, so two checkouts of one commit in different folders give byte-identical binaries and
# the same gatekeeper image ID, and the image does not tell whoever holds it how the build host is
# laid out. Outer folders first (the last matching map wins): the checkout, then the dependency
# folder and the build folder inside it. cmake/BoringSSL.cmake and cmake/Llhttp.cmake map their
# own sources the same way; tests/meta/appliance_binary_test.cc and
# image/reproducible_build_test.cc prove the result.
include(PathMap)
gk_path_map_flags(_gk_map_source ${CMAKE_BINARY_DIR} "" ${CMAKE_SOURCE_DIR})
gk_path_map_flags(_gk_map_deps ${CMAKE_BINARY_DIR} "deps/" ${GK_DEPS_DIR})
gk_path_map_flags(_gk_map_build ${CMAKE_BINARY_DIR} "" ${CMAKE_BINARY_DIR})
set(GK_PATH_MAP_FLAGS ${_gk_map_source} ${_gk_map_deps} ${_gk_map_build})
add_compile_options(${GK_PATH_MAP_FLAGS})
add_link_options(LINKER:-z,relro LINKER:-z,now LINKER:-z,noexecstack)

# -fno-sanitize-recover=all: every UBSan report is fatal (ASan's are by default), so a test that
# triggers one fails instead of printing and passing (tests/support/sanitizer_test.cc proves it).
# -fno-sanitize=vptr: UBSan checks an object's vtable by writing it into a pipe(2); once the
# process is at its descriptor limit the pipe fails and EVERY virtual call is reported as "object
# has invalid vptr" (GCC 12's runtime). The gatekeeper reaches that limit by design under a
# descriptor flood, and its tests provoke it (--test-descriptor-limit), so the check would turn the
# behaviour under test into a crash.
if(GK_SANITIZE)
  set(GK_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all
                         -fno-omit-frame-pointer)
  add_compile_options(${GK_SANITIZER_FLAGS})
  # The gatekeeper's seccomp table admits what the sanitizer runtime needs only under this define.
  add_compile_definitions(GK_SANITIZER_BUILD=1)
  add_link_options(${GK_SANITIZER_FLAGS})
endif()

if(GK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GK_FUZZ needs clang (libFuzzer); use the 'fuzz' preset")
  endif()
  # -fno-sanitize-recover=all: an undefined-behaviour report ends the run like a crash, so a
  # fuzzer cannot print one and still say "Done N runs" (tests/fuzz/sanitizer_canary.cc proves it).
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()

# gk_target_defaults(<target>): our warnings and C++ options on one of our targets.
function(gk_target_defaults target)
  target_compile_options(${target} PRIVATE ${GK_WARNINGS}
                         $<$<COMPILE_LANGUAGE:CXX>:${GK_CXX_OPTIONS}>)
endfunction()
