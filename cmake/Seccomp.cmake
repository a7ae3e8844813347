# libseccomp from Debian's libseccomp-dev, linked statically.
find_path(SECCOMP_INCLUDE_DIR seccomp.h REQUIRED)
find_library(SECCOMP_STATIC NAMES libseccomp.a REQUIRED)
add_library(deps_seccomp INTERFACE)
target_include_directories(deps_seccomp SYSTEM INTERFACE ${SECCOMP_INCLUDE_DIR})
target_link_libraries(deps_seccomp INTERFACE ${SECCOMP_STATIC})
add_library(deps::seccomp ALIAS deps_seccomp)
