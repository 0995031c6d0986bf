/* The harness's own tests: it must report what a child process did exactly. */
TEST_ENTRY(run_captures_output_and_status)
TEST_ENTRY(run_reports_signal_and_env)
