/* Reports opened in headless Chromium, and the negative controls of their checker. */
TEST_ENTRY(demo_report_in_chromium)
TEST_ENTRY(ranks_report_in_chromium)
TEST_ENTRY(lost_records_in_report)
TEST_ENTRY(hostile_names_stay_text)
TEST_ENTRY(control_script_error_is_caught)
TEST_ENTRY(control_external_image_is_caught)
TEST_ENTRY(control_fetch_is_caught)
TEST_ENTRY(control_wrong_value_is_caught)
