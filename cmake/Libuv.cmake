# libuv from Debian's libuv1-dev, linked statically (libuv_a.a) so the appliance can be static.
find_path(LIBUV_INCLUDE_DIR uv.h REQUIRED)
find_library(LIBUV_STATIC NAMES libuv_a.a REQUIRED)
add_library(deps_libuv INTERFACE)
target_include_directories(deps_libuv SYSTEM INTERFACE ${LIBUV_INCLUDE_DIR})
target_link_libraries(deps_libuv INTERFACE ${LIBUV_STATIC} pthread dl)
add_library(deps::libuv ALIAS deps_libuv)
