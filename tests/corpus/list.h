/* The corpus suite: the analyzer's outputs on a fixed set of traces, byte for byte. */
TEST_ENTRY(corpus_summary_text)
TEST_ENTRY(corpus_summary_json)
TEST_ENTRY(corpus_timeline)
TEST_ENTRY(corpus_dump)
