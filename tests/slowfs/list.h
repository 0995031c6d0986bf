/* slowfs, the slow file system of the loader tests (issue 19): what it promises them. */
TEST_ENTRY(slowfs_serves_its_file_no_faster_than_its_rate)
TEST_ENTRY(slowfs_reader_waits_in_uninterruptible_sleep)
