# Fault injection on traced programs (tests/faults): victim (a CUDA runtime program that closes
# descriptors, forks under threads, kills itself, changes directory...) and the workloads run
# under `cutrace run` on the simulated CUDA stack; each test compares stdout and exit status with
# an untraced run and checks what the trace holds. libenospc.so fills the disk for trace files.
FAULTS_B := $(B)/tests/faults

$(FAULTS_B)/victim: $(FAULTS_B)/victim.o $(FAULTS_B)/victim_bare.o
	$(CC) $(CFLAGS) -o $@ $^ -L$(CUDA_HOME)/lib64 -lcudart -lpthread
# no unwind tables, a frame pointer: see victim_bare.c
$(FAULTS_B)/victim_bare.o: CFLAGS += -fno-asynchronous-unwind-tables -fno-unwind-tables \
                                     -fno-omit-frame-pointer

$(FAULTS_B)/libenospc.so: $(FAULTS_B)/enospc.o
	$(CC) -shared -o $@ $^

all: $(FAULTS_B)/victim $(FAULTS_B)/libenospc.so

$(eval $(call ctt_suite,faults,$(FAULTS_B)/fl.o $(B)/tests/tracer/tr.o $(CTTRACE_LIB),$(CTTRACE_LDLIBS),\
  $(CUTRACE_SO) $(CUTRACE_BIN) $(FAKECUDA_DIR)/libcudart.so.13 $(FAKECUDA_DIR)/libcuda.so.1 \
  $(FAULTS_B)/victim $(FAULTS_B)/libenospc.so $(WORKLOADS)))
$(B)/tests/faults/%.o: CFLAGS += -Itests/tracer
