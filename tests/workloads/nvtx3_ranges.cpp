/* nvtx3_ranges: NVTX's C++ API (nvtx3/nvtx3.hpp) as its documentation shows it. After one
 * cudaMalloc/cudaFree (a trace starts with the first CUDA call):
 *   - 5 steps, each a scoped_range_in<cutrace_domain> (domain "cutrace-cpp") of the registered
 *     string "step", in the named category 11 "io", payload the step number (int32), color
 *     rgb{255, 0, 0}; inside it a scoped_range "load" of the global domain;
 *   - nvtx3::mark("done");
 *   - start_range("cross") in the main thread, ended by end_range in a std::thread.
 * stdout is one line that does not depend on tracing. */
#include <cuda_runtime.h>
#include <nvtx3/nvtx3.hpp>

#include <cstdio>
#include <thread>

struct cutrace_domain {
    static constexpr char const *name{"cutrace-cpp"};
};
struct step_message {
    static constexpr char const *message{"step"};
};
struct io_category {
    static constexpr char const *name{"io"};
    static constexpr uint32_t id{11};
};

int main()
{
    void *p;
    if (cudaMalloc(&p, 1024) != cudaSuccess || cudaFree(p) != cudaSuccess) {
        std::fprintf(stderr, "nvtx3_ranges: CUDA failed\n");
        return 1;
    }
    for (int i = 0; i < 5; i++) {
        auto &msg = nvtx3::registered_string_in<cutrace_domain>::get<step_message>();
        auto &cat = nvtx3::named_category_in<cutrace_domain>::get<io_category>();
        nvtx3::scoped_range_in<cutrace_domain> step{msg, cat, nvtx3::payload{i},
                                                     nvtx3::rgb{255, 0, 0}};
        nvtx3::scoped_range load{"load"};
    }
    nvtx3::mark("done");
    nvtx3::range_handle h = nvtx3::start_range("cross");
    std::thread t([h] { nvtx3::end_range(h); });
    t.join();
    std::printf("nvtx3_ranges: steps=5\n");
    return 0;
}
