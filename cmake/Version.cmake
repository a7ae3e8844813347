# The version both binaries print with --version: PROJECT_VERSION and the git revision of the
# checkout, written to <build>/generated/gk_version.h on every build (the file is rewritten only
# when its text changes, so an unchanged revision rebuilds nothing). The revision is found exactly
# as image/build-image.sh finds the images' org.opencontainers.image.revision label, so the
# binaries and the images they ship in name the same commit.
set(GK_VERSION_HEADER ${CMAKE_BINARY_DIR}/generated/gk_version.h)
add_custom_target(gk_version_header
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${GK_VERSION_HEADER}
          -DVERSION=${PROJECT_VERSION} -P ${CMAKE_SOURCE_DIR}/cmake/WriteVersion.cmake
  BYPRODUCTS ${GK_VERSION_HEADER}
  VERBATIM)
add_library(gk_version INTERFACE)
target_include_directories(gk_version INTERFACE ${CMAKE_BINARY_DIR}/generated)
add_dependencies(gk_version gk_version_header)
