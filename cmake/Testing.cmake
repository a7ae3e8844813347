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
  gtest_discover_tests(${ARG_NAME}
    DISCOVERY_MODE PRE_TEST ${_filter}
    PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT} ${_fixture_properties})
endfunction()
