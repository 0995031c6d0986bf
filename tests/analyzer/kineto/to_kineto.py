#!/usr/bin/env python3
"""Writes the Kineto (PyTorch profiler) document the profiler would have written for a run that
cutrace traced: `cutrace dump --time-order TRACE` on stdin, the JSON on stdout. Kineto sees the
runtime calls (cuda_runtime, their correlation id) and the GPU work they enqueued (kernel,
gpu_memcpy, gpu_memset, with the runtime call's correlation id), not the driver calls: each GPU
interval is given to the runtime call its driver call nests in. Times in microseconds with the
nanoseconds as three decimals, as Kineto writes them at nanosecond resolution."""
import json, re, sys

FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"(?:#\d+)?|\S+)')
DIRS = {"1": "HtoD", "2": "DtoH", "3": "DtoD", "4": "HtoH", "5": "PtoP"}
KINDS = {"1": "Pageable", "2": "Pinned", "3": "Device", "4": "Managed", "5": "Array"}


def fields(line):
    out = {}
    for k, v in FIELD.findall(line):
        if v.startswith('"'):
            v = json.loads(v[: v.rindex('"') + 1])
        out[k] = v
    return out


def us(ns):
    return int(ns) / 1000.0


def main():
    parent, runtime, launch, copy, events = {}, {}, {}, {}, []
    pid = 1
    for line in sys.stdin:
        parts = line.split(None, 2)
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        kind, f = parts[1], fields(parts[2])
        if kind == "api":
            if f.get("parent", "0") != "0":
                parent[f["corr"]] = f["parent"]
            else:
                runtime[f["corr"]] = f
                events.append({"ph": "X", "cat": "cuda_runtime", "name": f["fn"], "pid": pid,
                               "tid": int(f["tid"]), "ts": us(f["start"]), "dur": us(f["dur"]),
                               "args": {"correlation": int(f["corr"])}})
        elif kind == "launch":
            launch[f["corr"]] = f
        elif kind == "copy":
            copy[f["corr"]] = f
        elif kind == "gpu":
            call = parent.get(f["corr"], f["corr"])
            args = {"device": int(f["device"]), "stream": int(f["stream"], 16),
                    "correlation": int(call)}
            ev = {"ph": "X", "pid": int(f["device"]), "tid": "stream %d" % args["stream"],
                  "ts": us(f["start"]), "dur": us(f["dur"]), "args": args}
            if f["kind"] == "1":
                l = launch[f["corr"]]
                ev.update(cat="kernel", name=l["kernel"])
                args["grid"] = [int(x) for x in l["grid"].split(",")]
                args["block"] = [int(x) for x in l["block"].split(",")]
            else:
                c = copy[f["corr"]]
                args["bytes"] = int(c["bytes"])
                if f["kind"] == "3":
                    ev.update(cat="gpu_memset", name="Memset (Device)")
                else:
                    ev.update(cat="gpu_memcpy", name="Memcpy %s (%s -> %s)" % (
                        DIRS.get(c["dir"], "HtoD"), KINDS.get(c["src_kind"], "Device"),
                        KINDS.get(c["dst_kind"], "Device")))
            events.append(ev)
    json.dump({"schemaVersion": 1, "distributedInfo": {"rank": 0},
               "deviceProperties": [{"id": 0, "name": "simulated", "numSms": 132}],
               "traceEvents": events}, sys.stdout)


if __name__ == "__main__":
    main()
