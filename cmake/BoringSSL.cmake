# BoringSSL as static libraries, built from Debian's source package
# android-platform-external-boringssl (fetched by .ci/setup into build/deps/src). We compile the
# lists its android-sources.cmake gives (crypto_sources + crypto_sources_linux_x86_64, and
# ssl_sources): no Go, no perl. The result is installed once into build/deps/boringssl and shared
# by every preset; a stamp makes a second configure cost nothing. Each recipe version installs
# into its own folder (boringssl-r<N>), so a checkout still on an older recipe that shares the
# dependency folder keeps linking the libraries it was built against.
#
# Recipe 2: every path of the BoringSSL source and build folders is mapped out of the objects
# (-ffile-prefix-map, as cmake/Flags.cmake does for ours): BoringSSL's error queue records
# __FILE__, and recipe 1 put about two hundred absolute paths of the build host into the
# gatekeeper binary, so two checkouts in different folders gave two image IDs.

set(BORINGSSL_RECIPE_VERSION 2)  # bump when the recipe below changes
set(_bssl_prefix ${GK_DEPS_DIR}/boringssl-r${BORINGSSL_RECIPE_VERSION})

file(GLOB _bssl_roots LIST_DIRECTORIES true ${GK_DEPS_DIR}/src/android-platform-external-boringssl-*)
list(FILTER _bssl_roots EXCLUDE REGEX "\\.(tar\\.xz|dsc)$")
if(NOT _bssl_roots)
  message(FATAL_ERROR "BoringSSL: no source in ${GK_DEPS_DIR}/src; run .ci/setup first "
                      "(it fetches Debian's android-platform-external-boringssl)")
endif()
list(GET _bssl_roots 0 _bssl_root)
get_filename_component(_bssl_name ${_bssl_root} NAME)
set(_bssl_stamp_text "${_bssl_name} recipe ${BORINGSSL_RECIPE_VERSION}")

file(LOCK ${GK_DEPS_DIR}/boringssl.lock GUARD FILE TIMEOUT 1800)
set(_bssl_stamp ${_bssl_prefix}/STAMP)
set(_bssl_have "")
if(EXISTS ${_bssl_stamp})
  file(READ ${_bssl_stamp} _bssl_have)
endif()
if(NOT _bssl_have STREQUAL _bssl_stamp_text OR NOT EXISTS ${_bssl_prefix}/lib/libssl.a)
  message(STATUS "BoringSSL: building static libraries from ${_bssl_name} (once)")
  set(_bssl_project ${GK_DEPS_DIR}/boringssl-project-r${BORINGSSL_RECIPE_VERSION})
  file(REMOVE_RECURSE ${_bssl_project} ${_bssl_prefix})
  file(WRITE ${_bssl_project}/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(boringssl_static C CXX ASM)
set(CMAKE_C_STANDARD 11)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
include(${BORINGSSL_ROOT}android-sources.cmake)
add_compile_options(-w -fvisibility=hidden -fstack-protector-strong -Wa,--noexecstack)
include(${GK_PATH_MAP_MODULE})
gk_path_map_flags(_map_project ${CMAKE_BINARY_DIR} "boringssl-project/" ${CMAKE_SOURCE_DIR})
gk_path_map_flags(_map_root ${CMAKE_BINARY_DIR} "boringssl/" ${BORINGSSL_ROOT})
gk_path_map_flags(_map_build ${CMAKE_BINARY_DIR} "" ${CMAKE_BINARY_DIR})
add_compile_options(${_map_project} ${_map_root} ${_map_build})
add_compile_definitions(BORINGSSL_IMPLEMENTATION _XOPEN_SOURCE=700)
include_directories(${BORINGSSL_ROOT}src/include)
add_library(crypto STATIC ${crypto_sources} ${crypto_sources_linux_x86_64})
add_library(ssl STATIC ${ssl_sources})
install(TARGETS crypto ssl ARCHIVE DESTINATION lib)
install(DIRECTORY ${BORINGSSL_ROOT}src/include/openssl DESTINATION include)
]=])
  execute_process(
    COMMAND ${CMAKE_COMMAND} -G Ninja -S ${_bssl_project} -B ${_bssl_project}/build
            -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
            -DBORINGSSL_ROOT=${_bssl_root}/ -DCMAKE_INSTALL_PREFIX=${_bssl_prefix}
            -DGK_PATH_MAP_MODULE=${CMAKE_SOURCE_DIR}/cmake/PathMap.cmake
    RESULT_VARIABLE _rc OUTPUT_QUIET)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "BoringSSL: configure of ${_bssl_project} failed (exit ${_rc})")
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} --build ${_bssl_project}/build --target install
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    string(LENGTH "${_out}" _len)
    math(EXPR _from "${_len} - 3000")
    if(_from LESS 0)
      set(_from 0)
    endif()
    string(SUBSTRING "${_out}" ${_from} -1 _tail)
    message(FATAL_ERROR "BoringSSL: build failed (exit ${_rc}):\n${_tail}")
  endif()
  file(WRITE ${_bssl_stamp} "${_bssl_stamp_text}")
endif()
file(LOCK ${GK_DEPS_DIR}/boringssl.lock RELEASE)

add_library(deps_boringssl_crypto STATIC IMPORTED GLOBAL)
set_target_properties(deps_boringssl_crypto PROPERTIES
  IMPORTED_LOCATION ${_bssl_prefix}/lib/libcrypto.a
  INTERFACE_INCLUDE_DIRECTORIES ${_bssl_prefix}/include
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${_bssl_prefix}/include
  INTERFACE_LINK_LIBRARIES pthread)
add_library(deps_boringssl_ssl STATIC IMPORTED GLOBAL)
set_target_properties(deps_boringssl_ssl PROPERTIES
  IMPORTED_LOCATION ${_bssl_prefix}/lib/libssl.a
  INTERFACE_LINK_LIBRARIES deps_boringssl_crypto)
add_library(deps::boringssl ALIAS deps_boringssl_ssl)
