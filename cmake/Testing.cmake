# gk_add_gtest(NAME <target> LABEL <unit|integration|docker|meta> SOURCES ... [LIBS ...]
#              [TIMEOUT <seconds>] [FIXTURES_REQUIRED <fixture>...] [FILTER <gtest filter>]
#              [RESOURCE_LOCK <lock>|<lock>:<regex>...] [RUN_SERIAL] [PARALLEL_SAFE] [COST <n>])
# One executable per call; every TEST in it becomes its own ctest test (one process per test).
# FIXTURES_REQUIRED makes every discovered test wait for a ctest FIXTURES_SETUP test (the image
# tests need the `images` target built first).
#
# Docker tests run two at a time in CI (.ci/test, tests/README.md "Docker tests in parallel"), so
# a docker binary must say how it shares the host with the others, or configuring fails:
#   RESOURCE_LOCK  ctest never runs two tests holding the same lock at once. `<lock>:<regex>`
#                  takes the lock only for the tests whose name matches the regex.
#   RUN_SERIAL     each test runs alone (nothing else starts while it runs).
#   PARALLEL_SAFE  no lock: the tests touch only objects they name themselves and nothing any
#                  other docker test counts, removes or picks an address for.
# Every docker test also waits for the gk_images fixture (image_build_images): it loads the pinned
# images once, before any test uses them, instead of two tests building `images` at once.
# COST orders tests when ctest runs them in parallel (highest first): the longest chain of tests
# sharing a lock starts first.
include(GoogleTest)
find_package(GTest REQUIRED)

function(gk_add_gtest)
  cmake_parse_arguments(ARG "RUN_SERIAL;PARALLEL_SAFE" "NAME;LABEL;TIMEOUT;FILTER;COST"
                        "SOURCES;LIBS;FIXTURES_REQUIRED;RESOURCE_LOCK" ${ARGN})
  if(NOT ARG_LABEL MATCHES "^(unit|integration|docker|meta)$")
    message(FATAL_ERROR "gk_add_gtest(${ARG_NAME}): LABEL must be unit, integration, docker or meta")
  endif()
  if(ARG_LABEL STREQUAL "docker")
    set(_declared 0)
    foreach(_flag ARG_RUN_SERIAL ARG_PARALLEL_SAFE)
      if(${_flag})
        math(EXPR _declared "${_declared} + 1")
      endif()
    endforeach()
    if(ARG_RESOURCE_LOCK)
      math(EXPR _declared "${_declared} + 1")
    endif()
    if(NOT _declared EQUAL 1)
      message(FATAL_ERROR "gk_add_gtest(${ARG_NAME}): a docker test names exactly one of RESOURCE_LOCK, "
                          "RUN_SERIAL or PARALLEL_SAFE (tests/README.md \"Docker tests in parallel\")")
    endif()
    list(APPEND ARG_FIXTURES_REQUIRED gk_images)
  elseif(ARG_RUN_SERIAL OR ARG_PARALLEL_SAFE OR ARG_RESOURCE_LOCK)
    message(FATAL_ERROR "gk_add_gtest(${ARG_NAME}): RESOURCE_LOCK, RUN_SERIAL and PARALLEL_SAFE are for docker tests")
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
    PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT})
  # The list-valued properties go into a file of our own that ctest reads after the discovered
  # tests: gtest_discover_tests passes PROPERTIES on as separate words, so a list (two fixtures,
  # two locks) would lose all but its first element. ${NAME}_TESTS is the discovered names.
  set(_script "# Written by gk_add_gtest (cmake/Testing.cmake) for ${ARG_NAME}.\n")
  string(APPEND _script "foreach(_gk_test IN LISTS ${ARG_NAME}_TESTS)\n")
  if(ARG_FIXTURES_REQUIRED)
    string(APPEND _script "  set_tests_properties(\"\${_gk_test}\" PROPERTIES FIXTURES_REQUIRED \"${ARG_FIXTURES_REQUIRED}\")\n")
  endif()
  if(ARG_RUN_SERIAL)
    string(APPEND _script "  set_tests_properties(\"\${_gk_test}\" PROPERTIES RUN_SERIAL TRUE)\n")
  endif()
  if(ARG_COST)
    string(APPEND _script "  set_tests_properties(\"\${_gk_test}\" PROPERTIES COST ${ARG_COST})\n")
  endif()
  if(ARG_RESOURCE_LOCK)
    string(APPEND _script "  set(_gk_locks \"\")\n")
    foreach(_lock IN LISTS ARG_RESOURCE_LOCK)
      if(_lock MATCHES "^([A-Za-z0-9_]+):(.+)$")
        string(APPEND _script "  if(_gk_test MATCHES [==[${CMAKE_MATCH_2}]==])\n"
                              "    list(APPEND _gk_locks ${CMAKE_MATCH_1})\n  endif()\n")
      elseif(_lock MATCHES "^[A-Za-z0-9_]+$")
        string(APPEND _script "  list(APPEND _gk_locks ${_lock})\n")
      else()
        message(FATAL_ERROR "gk_add_gtest(${ARG_NAME}): RESOURCE_LOCK ${_lock}: want <lock> or <lock>:<regex>")
      endif()
    endforeach()
    string(APPEND _script "  if(_gk_locks)\n"
                          "    set_tests_properties(\"\${_gk_test}\" PROPERTIES RESOURCE_LOCK \"\${_gk_locks}\")\n"
                          "  endif()\n")
  endif()
  string(APPEND _script "endforeach()\n")
  set(_file ${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}_properties.cmake)
  file(WRITE ${_file} "${_script}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_file})
endfunction()
