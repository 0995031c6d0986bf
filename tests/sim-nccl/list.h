/* The simulated NCCL's tests (tests/fakenccl). */
TEST_ENTRY(collectives_compute_what_nccl_documents)
TEST_ENTRY(split_groups_ranks_by_color_and_key)
TEST_ENTRY(init_all_runs_several_devices_in_one_process)
