/* The structure suite: the project's checks of its own shape (issue 27), each run on the real
 * tree and on a small planted tree that proves it can fail. */
TEST_ENTRY(cycles_none_in_preload)
TEST_ENTRY(cycles_none_in_trace_format)
TEST_ENTRY(cycles_none_in_analyzer)
TEST_ENTRY(cycles_planted_in_a_subfolder_are_found)
TEST_ENTRY(cycles_planted_between_folders_are_found)
TEST_ENTRY(cycles_internal_header_may_be_shared)
TEST_ENTRY(names_prefixed_in_trace_format)
TEST_ENTRY(names_prefixed_in_preload)
TEST_ENTRY(names_prefixed_in_analyzer)
TEST_ENTRY(names_planted_bad_name_is_found)
TEST_ENTRY(lines_none_over_800_outside_tests)
TEST_ENTRY(lines_planted_long_file_is_found)
