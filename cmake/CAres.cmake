# c-ares from Debian's libc-ares-dev, linked statically.
find_path(CARES_INCLUDE_DIR ares.h REQUIRED)
find_library(CARES_STATIC NAMES libcares.a REQUIRED)
add_library(deps_cares INTERFACE)
target_include_directories(deps_cares SYSTEM INTERFACE ${CARES_INCLUDE_DIR})
target_compile_definitions(deps_cares INTERFACE CARES_STATICLIB)
target_link_libraries(deps_cares INTERFACE ${CARES_STATIC})
add_library(deps::cares ALIAS deps_cares)
