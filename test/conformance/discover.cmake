# Writes the ctest tests of the conformance corpus to OUTPUT (cmake -P, after each build of
# BINARY, hologram-conformance): one test per group that `BINARY --list-groups` prints (a runner
# and a -O level, e.g. cpu_v4_O2), running the cases whose names end in it, and one for the
# suite's own checks (ConformanceCorpus.*). ENVIRONMENT is set for each. A group whose runner
# cannot start here and is not required is reported as skipped; a required one fails. The groups
# are long, so ctest starts them first (COST), also on a first run without timing data.
execute_process(COMMAND "${BINARY}" --list-groups OUTPUT_VARIABLE groups ERROR_VARIABLE error
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BINARY} --list-groups failed (${status}): ${error}")
endif()
string(REPLACE "\n" ";" groups "${groups}")
set(tests "")
macro(conformance_test name filter)
  string(APPEND tests "add_test([=[${name}]=] [==[${BINARY}]==] [==[--gtest_filter=${filter}]==])\n"
         "set_tests_properties([=[${name}]=] PROPERTIES ENVIRONMENT [==[${ENVIRONMENT}]==]\n"
         "  SKIP_REGULAR_EXPRESSION [==[is not available here \\(not required\\)]==] COST 100)\n")
endmacro()
foreach(group IN LISTS groups)
  if(NOT group STREQUAL "")
    conformance_test(conformance_${group} "Corpus/Conformance.MatchesReference/*_${group}")
  endif()
endforeach()
conformance_test(conformance_corpus "ConformanceCorpus.*")
file(WRITE "${OUTPUT}" "${tests}")
