#!/usr/bin/env python3
"""Ground truth for cutrace's analysis of a Kineto trace, computed from the JSON alone (the
standard library's json and gzip), independently of cutrace: per-kernel counts and GPU time,
copies and sets per operation and host memory kind, each device's busy time (the union of its
kernel, memcpy and memset intervals) and the ProfilerStep iterations. Compares them with
`cutrace summary --json` of the same file (argv[2]) and prints each figure; exit status 1 on
any difference.

Times as cutrace converts them: Kineto's microseconds (a double) to nanoseconds, the whole
microseconds exactly and the fraction rounded half up; an interval ends at start + dur."""
import collections, gzip, json, math, sys


def ns(us):
    w = math.floor(us)
    return int(w) * 1000 + int(math.floor((us - w) * 1000 + 0.5))


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    op = gzip.open if head == b"\x1f\x8b" else open
    with op(path, "rt") as f:
        return json.load(f)


def copy_row(name):
    """(op, host kind) as cutrace's copies table names them."""
    if name.startswith("Memset"):
        return ("memset", "none")
    ops = {"HtoD": "H2D", "DtoH": "D2H", "DtoD": "D2D", "HtoH": "H2H", "PtoP": "P2P"}
    op = next((v for k, v in ops.items() if k in name), "?")
    host = "none"
    for word, kind in (("Pageable", "pageable"), ("Pinned", "pinned")):
        if word in name:
            host = kind
    return (op, host)


def union(iv):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def truth(doc):
    kernels = collections.defaultdict(lambda: [0, 0])
    copies = collections.defaultdict(lambda: [0, 0, 0])
    busy = collections.defaultdict(list)
    steps = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X" or "ts" not in e or "dur" not in e:
            continue
        cat, name = e.get("cat"), e.get("name", "")
        s = ns(e["ts"])
        end = s + ns(e["dur"])
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            busy[e["args"].get("device", 0)].append((s, end))
            if cat == "kernel":
                kernels[name][0] += 1
                kernels[name][1] += end - s
            else:
                row = copies[copy_row(name)]
                row[0] += 1
                row[1] += e["args"].get("bytes", 0)
                row[2] += end - s
        elif cat in ("cpu_op", "user_annotation", "python_function") and name.startswith("ProfilerStep#"):
            steps.append(end - s)
    return kernels, copies, {d: union(iv) for d, iv in busy.items()}, steps


def main():
    doc = load(sys.argv[1])
    with open(sys.argv[2]) as f:
        got = json.load(f)
    kernels, copies, busy, steps = truth(doc)
    bad = 0

    def check(what, want, have):
        nonlocal bad
        ok = want == have
        bad += not ok
        print(("ok   " if ok else "DIFF ") + what + ": truth " + str(want) + ", cutrace " + str(have))

    gk = {k["name"]: (k["instances"], k["total_ns"]) for k in got["kernels"]}
    check("kernel names", len(kernels), len(gk))
    for name, (n, t) in sorted(kernels.items()):
        check("kernel " + name[:60], (n, t), gk.get(name))
    gc = {(c["op"], c["host_kind"]): (c["count"], c["bytes"], c["total_ns"]) for c in got["copies"]}
    check("copy rows", sorted(copies), sorted(gc))
    for row, v in sorted(copies.items()):
        check("copies " + "/".join(row), tuple(v), gc.get(row))
    gb = {b["device"]: b.get("gpu_busy_ns") for b in got["breakdown"]}
    check("devices with GPU work", sorted(busy), sorted(gb))
    for d, v in sorted(busy.items()):
        check("GPU %d busy ns" % d, v, gb.get(d))
    its = [i for i in got.get("nvtx", {}).get("iterations", []) if i["name"].startswith("ProfilerStep")]
    if steps:
        med = sorted(steps)[(len(steps) - 1) // 2] if len(steps) % 2 else None
        check("ProfilerStep iterations", len(steps), its[0]["steps"] if its else None)
        if med is not None:
            check("ProfilerStep median ns", med, its[0]["median_ns"] if its else None)
    else:
        check("ProfilerStep iterations", 0, len(its))
    print("%d differences" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
