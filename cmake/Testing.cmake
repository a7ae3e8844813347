# gk_add_gtest(NAME <target> LABEL <unit|integration|docker|meta> SOURCES ... [LIBS ...]
#              [TIMEOUT <seconds>] [FIXTURES_REQUIRED <fixture>])
# One executable per call; every TEST in it becomes its own ctest test (one process per test).
# FIXTURES_REQUIRED makes every discovered test wait for a ctest FIXTURES_SETUP test (the image
# tests need the `images` target built first).
include(GoogleTest)
find_package(GTest REQUIRED)

function(gk_add_gtest)
  cmake_parse_arguments(ARG "" "NAME;LABEL;TIMEOUT;FIXTURES_REQUIRED;FILTER" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LABEL MATCHES "^(unit|integration|docker|meta)$")
    message(FATAL_ERROR "gk_add_gtest(${ARG_NAME}): LABEL must be unit, integration, docker or meta")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  gk_target_defaults(${ARG_NAME})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} gk_test_support GTest::gtest GTest::gmock
                                            GTest::gtest_main)
  target_compile_definitions(${ARG_NAME} PRIVATE
    GK_SOURCE_DIR="${CMAKE_SOURCE_DIR}" GK_BINARY_DIR="${CMAKE_BINARY_DIR}")
  # The asan preset runs only unit and integration tests (CMakePresets.json): a Docker test binary
  # there would be compiled and linked (the slowest links of the build) and never run. It stays
  # a target, built on request (`--target <name>`), but not by default and not listed to ctest.
  if(GK_SANITIZE AND ARG_LABEL STREQUAL "docker")
    set_target_properties(${ARG_NAME} PROPERTIES EXCLUDE_FROM_ALL TRUE)
    return()
  endif()
  set(_fixture_properties "")
  if(ARG_FIXTURES_REQUIRED)
    set(_fixture_properties FIXTURES_REQUIRED ${ARG_FIXTURES_REQUIRED})
  endif()
  # gtest_discover_tests gives every test SKIP_REGULAR_EXPRESSION "\[  SKIPPED \]", so ctest says
  # "Skipped" for a GTEST_SKIP (its JUnit report: status="notrun"), but still exits 0: .ci/test
  # fails the run on it with .ci/check-tests junit (tests/meta/ci_checks_test.cc checks both).
  # FILTER (a gtest filter) lets one source serve two targets with different labels or fixtures.
  set(_filter "")
  if(ARG_FILTER)
    set(_filter TEST_FILTER ${ARG_FILTER})
  endif()
  # DISCOVERY_TIMEOUT: listing a test binary's tests runs it once; an ASan binary of 130 MB read
  # cold from disk on a busy 2-core CI machine took over the default 5 s and ctest stopped before
  # running anything. Listing does no work of the tests, so a generous bound costs nothing.
  gtest_discover_tests(${ARG_NAME}
    DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120 ${_filter}
    PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT} ${_fixture_properties})
endfunction()
