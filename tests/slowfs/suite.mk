# slowfs (tests/slowfs/slowfs.c): the slow FUSE file system the loader tests read through, and
# the suite that checks what it promises them (sf.c starts and stops it from a test).
SLOWFS_BIN := $(B)/tests/slowfs/slowfs
$(SLOWFS_BIN): $(B)/tests/slowfs/slowfs.o
	$(CC) $(CFLAGS) -o $@ $^
$(eval $(call ctt_suite,slowfs,$(B)/tests/slowfs/sf.o,,$(SLOWFS_BIN)))
