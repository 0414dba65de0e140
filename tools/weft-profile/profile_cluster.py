"""weft-profile --cluster-out: the cluster spec of N ranks on this machine.

The ranks run on this machine's cores with one torch thread each; cores of
one machine are one speed, so the spec has one device type (`--device`) and
one node of N devices. Its figures come from the DB just measured:

- fp32_peak: the fastest standard `linear` sample (FLOP/s), with matmul
  efficiency 1; conv, elementwise, reduction and gather efficiencies are
  their best sample's rate over that peak (FLOPs for conv, bytes over the
  memory bandwidth for the others, capped to (0, 1]);
- memory_bandwidth: the fastest `gelu` sample's bytes per second;
- memory: this machine's RAM divided among the ranks;
- intra_bandwidth and intra_latency: the send_recv samples of the runtime's
  collectives (profile_comm.link_figures).

The DB's op, kernel and collective samples replace these figures wherever
they apply; the spec's figures price what the DB does not cover.
"""

import os
import socket

import profile_comm


def best_rate(db, kernel, per):
    rates = [s[per] / s["seconds"] for s in db.get("kernels", [])
             if s["kernel"] == kernel and s[per] > 0]
    return max(rates) if rates else None


def ram_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def write_spec(args, db, log):
    peak = best_rate(db, "linear", "flops")
    bandwidth = best_rate(db, "gelu", "bytes")
    if not peak or not bandwidth:
        raise SystemExit("weft-profile: error: --cluster-out needs the kernel "
                         "samples (drop --no-kernels)")
    eff = {"matmul": 1.0}
    conv = best_rate(db, "conv2d", "flops")
    if conv:
        eff["conv"] = min(1.0, conv / peak)
    for cls, kernel in (("reduction", "layer_norm"), ("gather", "embedding"),
                        ("elementwise", "gelu")):
        rate = best_rate(db, kernel, "bytes")
        if rate:
            eff[cls] = max(0.01, min(1.0, rate / bandwidth))
    link = profile_comm.link_figures(db.get("collectives", []))
    if not link:
        raise SystemExit("weft-profile: error: --cluster-out needs the "
                         "collective samples (drop --no-collectives)")
    link_bw, latency = link
    memory_gb = ram_bytes() / args.ranks / 1e9
    lines = [
        "# %d rank(s) on %s, one torch thread each, gloo: written by weft-profile"
        % (args.ranks, socket.gethostname()),
        "# from its measurements (tools/weft-profile/profile_cluster.py).",
        "name: %s-%d" % (args.device.lower(), args.ranks),
        "device_types:",
        "  - name: %s" % args.device,
        "    fp32_peak: %.6g TFLOPS" % (peak / 1e12),
        "    memory: %.3g GB" % memory_gb,
        "    memory_bandwidth: %.6g GB/s" % (bandwidth / 1e9),
        "    memory_efficiency: 1.0",
        "    efficiency: {%s}" % ", ".join("%s: %.4g" % kv for kv in sorted(eff.items())),
        "nodes:",
        "  - name: host",
        "    type: %s" % args.device,
        "    devices: %d" % args.ranks,
        "    intra_bandwidth: %.6g GB/s" % (link_bw / 1e9),
        "    intra_latency: %.6g us" % (latency * 1e6),
    ]
    tmp = args.cluster_out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, args.cluster_out)
    log("wrote the cluster spec %s" % args.cluster_out)
