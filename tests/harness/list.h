/* The harness's own tests: it must report what a child process did exactly, and share the
 * machine between suites as it says. */
TEST_ENTRY(run_captures_output_and_status)
TEST_ENTRY(run_reports_signal_and_env)
TEST_ENTRY(machine_alone_waits_and_holds_off_others)
TEST_ENTRY(machine_shared_again_past_a_waiting_runner)
TEST_ALONE(machine_alone_block_holds_it)
TEST_ENTRY(machine_alone_asked_by_a_shared_test_fails)
