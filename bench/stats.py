"""stats.py: number crunching and markdown for bench/run.sh.

run.sh does the measuring; this script turns what it left behind into
records (one JSON object per line in a raw file) and renders the tables.

    stats.py walk RAW LABEL VARIANT REP PROG_JSON MAP_JSON OUT_JSON STEAL_TICKS [ERR PROG0 MAP0]
        one capture of section 1: bpftool's run_time_ns/run_cnt for the
        program, the target-sample counter (counters map, key 0) read at the
        same moment, the capture's tree JSON (frames per sample), and the
        target CPU's steal ticks during the capture.  Section 8 adds the
        agent's stderr (native frames per sample) and the pair read after
        the warm-up (subtracted when present).
    stats.py pair RAW HZ PAIR BASE_STDOUT WITH_STDOUT WITH_JSON VARIANT
        one without/with pair of section 2 (+ the agent figures, section 3);
        VARIANT: walker, or floor (--bench-floor: no records, interrupts only).
    stats.py multi RAW NSPAWNED OUT_JSON
        the many-processes capture of section 4.
    stats.py render RAW HEADER_ENV_FILE
        markdown on stdout.
    stats.py native RAW TCPU HZ
        section 8 (--native) as markdown on stdout.
    stats.py async RAW TCPU HZ
        section 9 (--async-aware) as markdown on stdout.
    stats.py anchors RAW TCPU HZ PY315
        section 10 (tachyon-bpf next to CPython 3.15's Tachyon, bench/anchors.py
        records, and the walk on the same 3.15 target) as markdown on stdout.

Exits non-zero only on broken input (missing/garbled files, a checksum that
differs between runs): slow numbers are never an error.
"""
import json
import os
import re
import statistics
import sys


def die(msg):
    print(f"stats.py: {msg}", file=sys.stderr)
    sys.exit(1)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read {path}: {e}")


def append(raw, rec):
    with open(raw, "a") as f:
        f.write(json.dumps(rec) + "\n")


def counter_total(dump, key=0):
    """Sum over CPUs of one key of a per-CPU array dumped by bpftool --json."""
    for ent in dump:
        fmt = ent.get("formatted")
        if fmt is not None and fmt.get("key") == key:
            return sum(int(v["value"]) for v in fmt["values"])
        if fmt is None and int(ent["key"][0], 16) == key:  # no BTF: raw bytes
            return sum(int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little")
                       for v in ent["values"])
    die("counters map dump has no key %d" % key)


def counter_or_none(dump, key):
    """A counter an older build may not have (thread-list walks skipped)."""
    try:
        return counter_total(dump, key)
    except SystemExit:
        return None


def native_per_sample(err_path):
    """Native frames walked per sample, from the agent's native line (or None)."""
    try:
        m = re.search(r"native: .*?, ([0-9.]+) native frames each", open(err_path).read())
    except OSError:
        return None
    return float(m.group(1)) if m else None


def cmd_walk(raw, label, variant, rep, prog_path, map_path, out_path, steal, err_path=None,
             prog0_path=None, map0_path=None):
    prog = load_json(prog_path)
    if "run_time_ns" not in prog or not prog.get("run_cnt"):
        die(f"{prog_path}: no run_time_ns/run_cnt (is kernel.bpf_stats_enabled on?)")
    counters = load_json(map_path)
    target = counter_total(counters, 0)
    run_time, run_cnt = prog["run_time_ns"], prog["run_cnt"]
    warm = False
    if prog0_path and os.path.exists(prog0_path) and os.path.exists(map0_path):
        prog0 = load_json(prog0_path)       # measured from the end of the warm-up
        if run_cnt - prog0["run_cnt"] >= 100:
            run_time -= prog0["run_time_ns"]
            run_cnt -= prog0["run_cnt"]
            target -= counter_total(load_json(map0_path), 0)
            warm = True
        else:                               # a slow machine polled too late: the whole run
            print(f"stats.py: {label}: too few runs after the warm-up, whole run measured",
                  file=sys.stderr)
    meta = load_json(out_path)["meta"]
    ps = meta.get("python_samples", 0)
    append(raw, {
        "kind": "walk", "label": label, "variant": variant, "rep": int(rep),
        "prog": prog.get("name"), "tag": prog.get("tag"),
        "run_time_ns": run_time, "run_cnt": run_cnt,
        "target_runs": target,
        "native_per_sample": native_per_sample(err_path) if err_path else None,
        "walks": counter_or_none(counters, 2), "walks_skipped": counter_or_none(counters, 3),
        "ns_per_run": run_time / run_cnt,
        "warm": warm,
        "samples": meta.get("samples", 0), "python_samples": ps,
        "frames_per_sample": meta.get("frames", 0) / ps if ps else None,
        "kernel_frames_per_sample": (meta.get("kernel_stacks") or {}).get("frames", 0) / ps if ps else None,
        "kernel_sample_share": (meta.get("kernel_stacks") or {}).get("samples", 0) / ps if ps else None,
        "task_samples": (load_json(out_path).get("tasks") or {}).get("samples"),
        "truncated": meta.get("truncated", 0), "partial": meta.get("partial", 0),
        "lost": meta.get("lost", 0),
        "steal_pct": int(steal) / os.sysconf("SC_CLK_TCK") / meta["duration_s"] * 100
        if meta.get("duration_s") else 0.0,
    })


def parse_workload(path):
    try:
        text = open(path).read()
    except OSError as e:
        die(f"cannot read {path}: {e}")
    m = re.search(r"^elapsed_s ([0-9.]+)$", text, re.M)
    c = re.search(r"^checksum (\S+)", text, re.M)
    u = re.search(r"^cpu_s ([0-9.]+)$", text, re.M)
    if not m or not c or not u:
        die(f"{path}: no 'elapsed_s'/'cpu_s'/'checksum' line from the workload:\n{text[-500:]}")
    return float(m.group(1)), c.group(1), float(u.group(1))


def cmd_pair(raw, hz, pair, base_path, with_path, json_path, variant):
    t0, c0, _ = parse_workload(base_path)
    t1, c1, cpu1 = parse_workload(with_path)
    if c0 != c1:
        die(f"workload checksum differs without/with the profiler: {c0} vs {c1}")
    meta = load_json(json_path)["meta"]
    samples = meta.get("samples", 0)
    append(raw, {
        "kind": "pair", "hz": int(hz), "pair": int(pair), "variant": variant,
        "base_s": t0, "with_s": t1, "ratio": t1 / t0, "with_cpu_s": cpu1,
        "samples": samples, "python_samples": meta.get("python_samples", 0),
        "lost": meta.get("lost", 0), "duration_s": meta.get("duration_s", 0),
        "agent_cpu_s": meta.get("agent_cpu_s", 0),
        "frames": meta.get("frames", 0),
    })


def cmd_multi(raw, spawned, json_path):
    meta = load_json(json_path)["meta"]
    procs = meta.get("processes", [])
    append(raw, {
        "kind": "multi", "spawned": int(spawned), "profiled": len(procs),
        "samples": meta.get("samples", 0), "python_samples": meta.get("python_samples", 0),
        "lost": meta.get("lost", 0), "duration_s": meta.get("duration_s", 0),
        "agent_cpu_s": meta.get("agent_cpu_s", 0), "rate_hz": meta.get("rate_hz"),
    })


# ---------------------------------------------------------------- render

def med(xs):
    return statistics.median(xs) if xs else None


def fmt_ns(x):
    return "—" if x is None else f"{x:,.0f}"


def fmt_pct(r):
    return f"{(r - 1) * 100:+.1f}%"


def per_target(r, miss_ns):
    """ns per sample of the target: the program also runs for the other tasks on the CPU (a
    pid-map miss), counted at miss_ns each (the floor's cost) and left out."""
    tg = r.get("target_runs") or 0
    if not tg or miss_ns is None or r["variant"] != "walker":
        return r["ns_per_run"]
    return max(0.0, (r["run_time_ns"] - (r["run_cnt"] - tg) * miss_ns) / tg)


def fit(pts):
    """Least squares y = a + b x; returns (a, b)."""
    n = len(pts)
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else 0.0
    return my - b * mx, b


def render(raw, header_path):
    recs = []
    if os.path.exists(raw):
        with open(raw) as f:
            recs = [json.loads(line) for line in f if line.strip()]
    hdr = {}
    with open(header_path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                hdr[k] = v
    out = []
    w = out.append
    w("# tachyon-bpf benchmarks")
    w("")
    w(f"- date: {hdr.get('DATE')}; host: {hdr.get('NPROC')} CPUs ({hdr.get('CPU')}), "
      f"kernel {hdr.get('KERNEL')}")
    w(f"- target Python: `{hdr.get('PY')}` ({hdr.get('PYVER')}); tachyon-bpf {hdr.get('GITREV')}")
    tags = sorted({r["tag"] + " (" + r["prog"] + ")" for r in recs if r["kind"] == "walk"})
    if tags:
        w(f"- BPF program tags measured: {', '.join(tags)}")
    if hdr.get("SYSCALL_US"):
        w(f"- kernel speed check: `perf bench syscall basic` (getppid) on CPU {hdr.get('TCPU')}: "
          f"{hdr.get('SYSCALL_US')} µs per call; CPU vulnerabilities not 'Not affected': "
          f"{hdr.get('VULNS') or 'none'}")
    w(f"- load average before / after: {hdr.get('LOAD0')} / {hdr.get('LOAD1')}; "
      f"total run time {hdr.get('ELAPSED')} s")
    w(f"- knobs: {hdr.get('KNOBS')}")
    w("- **This VM is shared and noisy** (other jobs, steal time): medians move by tens of "
      "percent between runs of this script. Read the tables as orders of magnitude and "
      "ratios between rows of the same run, not as precise figures.")
    w("")

    walks = [r for r in recs if r["kind"] == "walk"
             and not r["label"].startswith(("threads", "native:", "anchors:", "async:"))]
    if walks:
        w("## 1. BPF run time per sample")
        w("")
        w(f"`deep.py DEPTH` pinned to CPU {hdr.get('TCPU')} (own session, nice and autogroup nice {hdr.get('NICE')}), "
          f"`tachyon-bpf -p PID --cpu {hdr.get('TCPU')} -r {hdr.get('WALK_HZ')} "
          f"-d {hdr.get('SECS')} --max-depth {hdr.get('MAXD')}` (agent pinned to CPU "
          f"{hdr.get('ACPU')}), `kernel.bpf_stats_enabled=1`, `bpftool prog show` "
          f"run_time_ns / run_cnt read just before the program is unloaded. "
          f"{hdr.get('REPS')} runs per cell: median (min). Floor = `--bench-floor` "
          "(pid-map lookup, counter, return). frames/sample counts deep.py's own "
          "`<module>` and `leaf`. Target share = the target's runs / all runs of the "
          "program on that CPU (the rest are other tasks: a pid lookup miss; the walker's "
          "ns/sample is per target sample, those runs counted at the floor's median cost and "
          "left out). Each run is measured from a warm-up on (the ring buffer, "
          f"{hdr.get('WALK_RING_MB')} MiB, has wrapped: {hdr.get('WALK_WARM_MS')} ms).")
        w("")
        w("| case | frames/sample | walker ns/sample | floor ns/sample | walker − floor | target share | steal on the CPU |")
        w("|---|---:|---:|---:|---:|---:|---:|")
        labels = []
        for r in walks:
            if r["label"] not in labels:
                labels.append(r["label"])
        fit_pts, fit_min = [], []
        bounded_pts = []
        cell = {}
        miss = med([r["ns_per_run"] for r in walks if r["variant"] == "floor"])
        for lab in labels:
            wk = [r for r in walks if r["label"] == lab and r["variant"] == "walker"]
            fl = [r for r in walks if r["label"] == lab and r["variant"] == "floor"]
            wn = [per_target(r, miss) for r in wk]
            fn = [r["ns_per_run"] for r in fl]
            fps = [r["frames_per_sample"] for r in wk if r["frames_per_sample"] is not None]
            share = [r["target_runs"] / r["run_cnt"] for r in wk + fl if r["run_cnt"]]
            trunc = sum(r["truncated"] + r["partial"] for r in wk)
            mw, mf = med(wn), med(fn)
            f = med(fps)
            cell[lab] = (mw, f)
            if lab.startswith("depth ") and lab.split()[1].isdigit() and f and wn:
                fit_pts.append((f, mw))
                fit_min.append((f, min(wn)))
            if lab.startswith("bounded shape, depth ") and f and wn:
                bounded_pts.append((f, mw))
            steal = max(r.get("steal_pct", 0) for r in wk + fl)
            wcol = f"{fmt_ns(mw)} ({fmt_ns(min(wn))})" if wn else "—"
            fcol = f"{fmt_ns(mf)} ({fmt_ns(min(fn))})" if fn else "—"
            diff = fmt_ns(mw - mf) if (mw is not None and mf is not None) else "—"
            sh = f"{min(share) * 100:.0f}–{max(share) * 100:.0f}%" if share else "—"
            fcell = f"{f:.1f}" if f else "—"
            if trunc:
                fcell += f" ({trunc} truncated/partial!)"
            w(f"| {lab} | {fcell} | {wcol} | {fcol} | {diff} | {sh} | ≤{steal:.1f}% |")
        w("")
        if len(fit_pts) >= 2:
            (i1, s1), (i2, s2) = fit(fit_pts), fit(fit_min)
            w(f"- Least-squares fit over the depth rows: medians **≈ {i1:,.0f} ns fixed + "
              f"{s1:,.0f} ns per frame**; minimums ≈ {i2:,.0f} ns fixed + {s2:,.0f} ns per frame. "
              "Reference prototype on this kind of VM (minimum of runs): ~700–900 ns fixed + "
              "~14 ns/frame with one 64-byte read per frame, ~35 ns/frame with three small "
              "reads (/work/shared/reference/bpf-walk-costs.md).")
        if len(bounded_pts) >= 2:
            i3, s3 = fit(bounded_pts)
            w(f"- The bounded shape (kernels without bpf_loop; forced here with TB_BPF_BOUNDED=1): "
              f"medians **≈ {i3:,.0f} ns fixed + {s3:,.0f} ns per frame** (one tail call per "
              "64 frames, and one from the thread state to the frames).")
        def find(word):
            for lab in labels:
                if lab.startswith("depth 50, " + word) and cell[lab][0]:
                    return cell[lab][0]
            return None
        base = cell.get("depth 50", (None, None))
        noop, allop, nocode = find("--no-opcodes"), find("--opcodes"), find("--bench-walk 1")
        kflag = find("--kernel")
        sys_off = cell.get("syscalls.py (reads of /dev/zero)", (None, None))[0]
        sys_on = cell.get("syscalls.py, --kernel", (None, None))[0]
        if base[0] and kflag:
            w(f"- `--kernel` on samples taken in user mode (no kernel stack): walker − walker "
              f"without it at depth 50 = {kflag - base[0]:,.0f} ns per sample (within noise if small).")
        if sys_off and sys_on:
            on = [r for r in walks if r["label"] == "syscalls.py, --kernel" and r["variant"] == "walker"]
            kf = med([r["kernel_frames_per_sample"] for r in on if r.get("kernel_frames_per_sample")])
            ks = med([r["kernel_sample_share"] for r in on if r.get("kernel_sample_share")])
            w(f"- Kernel stack (`--kernel`, `bpf_get_stack` in the record) on syscalls.py: "
              f"{sys_on - sys_off:,.0f} ns per sample ({(sys_on - sys_off) / sys_on * 100:.0f}% of that "
              "sample's cost)"
              + (f"; {ks * 100:.0f}% of its samples had kernel frames, {kf / ks:.1f} on average" if kf and ks else "")
              + ". The cost is mostly fixed (the kernel's unwinder starting), not per frame.")
        if base[0] and base[1]:
            d50, f50 = base
            if noop:
                w(f"- Opcode byte, default (innermost frame only): walker − `--no-opcodes` at "
                  f"depth 50 = {d50 - noop:,.0f} ns per sample ({(d50 - noop) / d50 * 100:.0f}% "
                  "of the walker's time; within noise if small).")
            if noop and allop:
                w(f"- Opcode byte of every frame (`--opcodes`): {allop - noop:,.0f} ns per sample "
                  f"at depth 50 = {(allop - noop) / f50:,.0f} ns per frame "
                  f"({(allop - noop) / allop * 100:.0f}% of that walk).")
            if nocode:
                w(f"- Code-object read (`--bench-walk 1`, a benchmark switch, skips it): "
                  f"{d50 - nocode:,.0f} ns per sample at depth 50 = "
                  f"{(d50 - nocode) / f50:,.0f} ns per frame ({(d50 - nocode) / d50 * 100:.0f}% "
                  "of the walker's time).")
        w("")

    threads = [r for r in recs if r["kind"] == "walk" and r["label"].startswith("threads")]
    if threads:
        w("### 1b. Thread-list walks")
        w("")
        w("`many_threads.py NATIVE 500`: NATIVE threads without a Python state spinning in C "
          "(churning: each lives ~1 ms, new thread ids all the time) behind 500 idle Python "
          "threads, so that a walk after a thread-state cache miss visits ~500 entries; pinned "
          "and sampled as above. The per-thread retry limit (50 ms) and the per-process walk "
          "budget (include/tachyon.h: TB_WALK_BUDGET entries per TB_WALK_WINDOW_NS) bound "
          "the walks. Per sample of the target: walks made and skipped (counters map).")
        w("")
        w("| case | walker ns/sample | floor ns/sample | walks per sample | skipped per sample |")
        w("|---|---:|---:|---:|---:|")
        for lab in dict.fromkeys(r["label"] for r in threads):
            wk = [r for r in threads if r["label"] == lab and r["variant"] == "walker"]
            fl = [r for r in threads if r["label"] == lab and r["variant"] == "floor"]
            wn, fn = [r["ns_per_run"] for r in wk], [r["ns_per_run"] for r in fl]
            per = lambda k: med([r[k] / r["target_runs"] for r in wk
                                 if r.get(k) is not None and r["target_runs"]])
            wcol = f"{fmt_ns(med(wn))} ({fmt_ns(min(wn))})" if wn else "—"
            fcol = f"{fmt_ns(med(fn))} ({fmt_ns(min(fn))})" if fn else "—"
            pw, ps = per("walks"), per("walks_skipped")
            w(f"| {lab} | {wcol} | {fcol} | {'%.3f' % pw if pw is not None else '—'} | "
              f"{'%.3f' % ps if ps is not None else '— (no budget in this build)'} |")
        w("")

    allpairs = [r for r in recs if r["kind"] == "pair"]
    pairs = [r for r in allpairs if r.get("variant", "walker") == "walker"]
    if allpairs:
        rates = sorted({r["hz"] for r in pairs})
        w("## 2. Slowdown of a CPU-bound Python program")
        w("")
        prio = hdr.get("ONICE", "0")
        prio_txt = (f"each run in its own session with autogroup nice {prio} (profiler and "
                    "workload alike), so other jobs on the shared VM take less from it"
                    if prio != "0" else "at normal priority")
        w(f"`bench/cpu_bound.py` (deterministic, ~2–3 s, its own perf_counter time), "
          f"unpinned, {prio_txt}; alternating without / with `tachyon-bpf -q -r HZ -o "
          f"x.json -- PY bench/cpu_bound.py` (order swapped every pair). ratio = with / "
          f"without per pair; slowdown = median ratio − 1. The profiler samples every CPU "
          f"at HZ; the agent runs on the same {hdr.get('NPROC')} CPUs. Two runs without the "
          "profiler differ by several percent here: differences below ~5% are not "
          "meaningful.")
        w("")
        w("| rate | pairs | median slowdown | spread (min..max) | median time without | median time with |")
        w("|---|---:|---:|---:|---:|---:|")
        for hz, variant in sorted({(r["hz"], r.get("variant", "walker")) for r in allpairs},
                                  key=lambda k: (k[0], k[1] != "walker")):
            ps = [r for r in allpairs if r["hz"] == hz and r.get("variant", "walker") == variant]
            rs = [r["ratio"] for r in ps]
            tag = " (stress)" if hz >= 5000 else ""
            if variant == "floor":
                tag += ", `--bench-floor` (interrupt + empty program only)"
            w(f"| {hz} Hz{tag} | {len(ps)} | {fmt_pct(med(rs))} | "
              f"{fmt_pct(min(rs))} .. {fmt_pct(max(rs))} | "
              f"{med([r['base_s'] for r in ps]):.3f} s | {med([r['with_s'] for r in ps]):.3f} s |")
        w("")
        w("## 3. Agent cost and ring-buffer traffic (the \"with\" runs of section 2)")
        w("")
        w("Agent CPU = the agent's user+system time during the capture (meta.agent_cpu_s); "
          "records/s = meta.samples / meta.duration_s (one ring-buffer record per sample, "
          "bounded by the CPU time the workload gets); samples per workload CPU-s = "
          "meta.samples / the workload's own process_time (≈ the rate if no tick is missed; "
          "start-up samples make it slightly higher); lost = ring buffer full (kernel "
          "counter), summed over the runs. The agent drains the ring on a timer, not per record, so "
          "at low rates its CPU per sample is mostly that timer's fixed cost: read the "
          "% of a core there.")
        w("")
        w("| rate | samples/run | records/s | samples per workload CPU-s | frames/sample | agent CPU per sample | agent CPU, % of a core | lost (total) |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|")
        for hz in rates:
            ps = [r for r in pairs if r["hz"] == hz]
            per = [1e6 * r["agent_cpu_s"] / r["samples"] for r in ps if r["samples"]]
            rps = [r["samples"] / r["duration_s"] for r in ps if r["duration_s"]]
            core = [100 * r["agent_cpu_s"] / r["duration_s"] for r in ps if r["duration_s"]]
            fps = [r["frames"] / r["python_samples"] for r in ps if r["python_samples"]]
            spc = [r["samples"] / r["with_cpu_s"] for r in ps if r.get("with_cpu_s")]
            tag = " (stress)" if hz >= 5000 else ""
            percol = (f"{med(per):.1f} µs ({min(per):.1f}..{max(per):.1f})" if per else "—")
            w(f"| {hz} Hz{tag} | {med([r['samples'] for r in ps]):.0f} | "
              f"{med(rps):,.0f} | {med(spc):,.0f} | {med(fps):.1f} | {percol} | {med(core):.1f}% | "
              f"{sum(r['lost'] for r in ps)} |")
        w("")

    multi = [r for r in recs if r["kind"] == "multi"]
    if multi:
        m = multi[-1]
        w("## 4. Many processes at once")
        w("")
        w(f"{m['spawned']} spinning Python processes (`deep.py 10`, unpinned) and "
          f"`tachyon-bpf -q --all-python -d {hdr.get('MULTI_SECS')} -r {m['rate_hz']}`; "
          "`--all-python` also picks up any other Python process on the machine.")
        w("")
        w("| processes profiled | duration | samples | records/s | lost | agent CPU per sample | agent CPU, % of a core |")
        w("|---:|---:|---:|---:|---:|---:|---:|")
        per = 1e6 * m["agent_cpu_s"] / m["samples"] if m["samples"] else 0
        w(f"| {m['profiled']} | {m['duration_s']:.2f} s | {m['samples']} | "
          f"{m['samples'] / m['duration_s']:,.0f} | {m['lost']} | {per:.1f} µs | "
          f"{100 * m['agent_cpu_s'] / m['duration_s']:.1f}% |")
        w("")
    print("\n".join(out))


def walk_rows(raw, prefix):
    """The walk records of RAW whose label starts with prefix (a section of their own)."""
    with open(raw) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    return [r for r in recs if r["kind"] == "walk" and r["label"].startswith(prefix)]


def native(raw, tcpu, hz):
    """Section 8: the walk's cost with --native, next to the Python-only walk and the floor."""
    rows = walk_rows(raw, "native:")
    if not rows:
        return
    out = []
    w = out.append
    w("\n## 8. Native frames (`--native`)\n")
    w(f"`deep.py 50` as in section 1 (pinned to CPU {tcpu}, {hz} Hz, one CPU sampled), measured "
      "from the moment the process's unwind tables are loaded (the first pair of counters read "
      "after the warm-up is subtracted). Native frames/sample: the words the BPF walk recorded "
      "(the agent's native line). Extra = ns/sample − the same interpreter's Python-only walker; "
      "per native frame = extra / native frames. Median (min) of the runs.")
    w("")
    w("| case | Python frames/sample | native frames/sample | ns/sample | extra | per native frame |")
    w("|---|---:|---:|---:|---:|---:|")
    labels = list(dict.fromkeys(r["label"] for r in rows))
    base = {}
    pts = {}
    for lab in labels:
        for variant in ("floor", "walker"):
            sel = [r for r in rows if r["label"] == lab and r["variant"] == variant]
            if not sel:
                continue
            ns = [r["ns_per_run"] for r in sel]
            m = med(ns)
            py = lab.split(":", 1)[1].rsplit(",", 1)[0].strip()
            nat = med([r["native_per_sample"] for r in sel if r.get("native_per_sample") is not None])
            fps = med([r["frames_per_sample"] for r in sel if r["frames_per_sample"] is not None])
            name = lab.split(":", 1)[1].strip() + (" (floor)" if variant == "floor" else "")
            extra = per = "—"
            if variant == "walker" and lab.endswith("Python only"):
                base[py] = m
            elif variant == "walker" and py in base and nat:
                extra = fmt_ns(m - base[py])
                per = fmt_ns((m - base[py]) / nat)
                pts.setdefault(py, []).append((nat, m))
            w(f"| {name} | {'%.1f' % fps if fps else '—'} | {'%.1f' % nat if nat else '—'} | "
              f"{fmt_ns(m)} ({fmt_ns(min(ns))}) | {extra} | {per} |")
    w("")
    for py, p in pts.items():
        if len(p) >= 2:
            i, s = fit(p)
            w(f"- {py}: least-squares over its `--native-depth` rows: **≈ {s:,.0f} ns per native "
              f"frame** ({i:,.0f} ns at 0 frames, against {fmt_ns(base[py])} for the Python-only walk).")
    print("\n".join(out))


def asyncio_section(raw, tcpu, hz):
    """Section 9: the walk's cost with --async-aware, next to the walk without it and the floor."""
    rows = walk_rows(raw, "async:")
    if not rows:
        return
    out = []
    w = out.append
    w("\n## 9. asyncio tasks (`--async-aware`)\n")
    w(f"`tests/workloads/async_tasks.py` (two named tasks spinning in their own coroutines under a "
      f"gathering parent task; pinned to CPU {tcpu}, {hz} Hz, one CPU sampled), as section 1. "
      "The program also runs for the other tasks on that CPU (and returns at once): per target "
      "sample = (run time − other runs × the floor's ns/run) / target runs, per run. "
      "Extra = per target sample − the same interpreter's walk without the flag (the two reads "
      "of the running task and its coroutine); with `--bench-task-reads N` those two reads are "
      "made N more times per sample: extra / N is what they cost, out of the noise between runs; "
      "task share = samples given task frames / Python samples. Median (min) of the runs.")
    w("")
    w("| case | frames/sample | ns/run | ns per target sample | extra | task share |")
    w("|---|---:|---:|---:|---:|---:|")
    base, floor, aware, pair = {}, {}, {}, {}
    for lab in dict.fromkeys(r["label"] for r in rows):
        py = lab.split(":", 1)[1].rsplit(",", 1)[0].strip()
        fl = [r["ns_per_run"] for r in rows if r["label"] == lab and r["variant"] == "floor"]
        if fl:
            floor[py] = med(fl)
    for lab in dict.fromkeys(r["label"] for r in rows):
        for variant in ("floor", "walker"):
            sel = [r for r in rows if r["label"] == lab and r["variant"] == variant]
            if not sel:
                continue
            ns = [r["ns_per_run"] for r in sel]
            py = lab.split(":", 1)[1].rsplit(",", 1)[0].strip()
            fps = med([r["frames_per_sample"] for r in sel if r["frames_per_sample"] is not None])
            name = lab.split(":", 1)[1].strip() + (" (floor)" if variant == "floor" else "")
            per = extra = share = "—"
            if variant == "walker" and py in floor:
                pts = [(r["run_time_ns"] - (r["run_cnt"] - r["target_runs"]) * floor[py]) / r["target_runs"]
                       for r in sel if r["target_runs"]]
                if pts:
                    m = med(pts)
                    per = f"{fmt_ns(m)} ({fmt_ns(min(pts))})"
                    rd = re.search(r"--bench-task-reads (\d+)$", lab)
                    if lab.endswith("without the flag"):
                        base[py] = m
                    elif lab.endswith("--async-aware"):
                        aware[py] = m
                    if rd and py in aware and int(rd.group(1)):
                        pair[py] = (m - aware[py]) / int(rd.group(1))
                        extra = fmt_ns(pair[py]) + " per read pair"
                    elif py in base and not lab.endswith("without the flag"):
                        extra = fmt_ns(m - base[py])
                    if not lab.endswith("without the flag"):
                        tasks = [r["task_samples"] / r["python_samples"] for r in sel
                                 if r.get("task_samples") is not None and r["python_samples"]]
                        share = "%.0f%%" % (100 * med(tasks)) if tasks else "—"
            w(f"| {name} | {'%.1f' % fps if fps else '—'} | {fmt_ns(med(ns))} ({fmt_ns(min(ns))}) | "
              f"{per} | {extra} | {share} |")
    if pair:
        w("")
        w("The two reads of `--async-aware` cost **≈ " + " / ".join(f"{fmt_ns(v)} ns ({k})" for k, v in pair.items())
          + " per sample** (the `--bench-task-reads` rows: their extra over `--async-aware`, divided by N); "
          "the goal is under 100 ns. The direct difference (`--async-aware` − without) is within the "
          "run-to-run noise of a loaded machine.")
def anchors(raw, tcpu, hz, py):
    """Section 10: the walk's fit on the 3.15 target, and the overhead rounds of bench/anchors.py."""
    with open(raw) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    walks = [r for r in recs if r["kind"] == "walk" and r["label"].startswith("anchors:")]
    runs = [r for r in recs if r["kind"] == "anchor"]
    if not walks and not runs:
        return
    out = []
    w = out.append
    w("\n## 10. Anchors: CPython 3.15's Tachyon next to tachyon-bpf\n")
    w(f"Target interpreter `{py}` for everything in this section.")
    if walks:
        w("")
        w(f"**BPF run time per sample**, as section 1 (`deep.py DEPTH` pinned to CPU {tcpu}, {hz} Hz, "
          "leaf opcode on, stats kept on by a BPF_ENABLE_STATS descriptor): median (min) of the runs.")
        w("")
        w("| depth | frames/sample | walker ns/sample | floor ns/sample | walker / floor |")
        w("|---|---:|---:|---:|---:|")
        pts, pmin = [], []
        miss = med([r["ns_per_run"] for r in walks if r["variant"] == "floor"])
        for lab in dict.fromkeys(r["label"] for r in walks):
            wk = [per_target(r, miss) for r in walks if r["label"] == lab and r["variant"] == "walker"]
            fl = [r["ns_per_run"] for r in walks if r["label"] == lab and r["variant"] == "floor"]
            fps = med([r["frames_per_sample"] for r in walks if r["label"] == lab
                       and r["variant"] == "walker" and r["frames_per_sample"]])
            if not wk:
                continue
            if fps:
                pts.append((fps, med(wk)))
                pmin.append((fps, min(wk)))
            ratio = f"{med(wk) / med(fl):.1f}×" if fl else "—"
            w(f"| {lab.split(':', 1)[1].strip()} | {'%.1f' % fps if fps else '—'} | "
              f"{fmt_ns(med(wk))} ({fmt_ns(min(wk))}) | "
              f"{fmt_ns(med(fl)) + ' (' + fmt_ns(min(fl)) + ')' if fl else '—'} | {ratio} |")
        if len(pts) >= 2:
            (i1, s1), (i2, s2) = fit(pts), fit(pmin)
            w("")
            w(f"- Fit: medians **≈ {i1:,.0f} ns fixed + {s1:,.1f} ns per frame → "
              f"{i1 + 50 * s1:,.0f} ns at 50 frames**; minimums ≈ {i2:,.0f} ns + {s2:,.1f} ns per frame "
              f"→ {i2 + 50 * s2:,.0f} ns at 50 frames.")
    if runs:
        rates = sorted({r["hz"] for r in runs})
        w("")
        w("**Overhead**: `bench/cpu_bound.py` held at a gate until the profiler is attached, then "
          "run to the end (unpinned, 2 CPUs); per rate, rounds of four runs in rotated order: none, "
          "`tachyon-bpf -p PID -r HZ`, `tachyon-bpf --bench-floor` (perf interrupts + the empty "
          "program), `python3.15 -m profiling.sampling attach -r HZ PID --collapsed`. Slowdown = "
          "with / the same round's run without, median (min..max). Profiler CPU = the run time of "
          "all its threads (schedstat) while the target works (start-up and output writing left "
          "out); for tachyon-bpf that is the agent only: the BPF program's time is in the target's "
          "slowdown (and in the walk table above). Per sample: that CPU / the samples of the work "
          "(tachyon-bpf: all, on-CPU; Tachyon samples wall time by default: its stacks in "
          "`one_round`, the gate's wait left out). RSS: the profiler's peak.")
        w("")
        w("| rate | profiler | rounds | target slowdown | profiler CPU, % of a core | "
          "profiler CPU per sample | samples/run | peak RSS |")
        w("|---|---|---:|---:|---:|---:|---:|---:|")
        summary = {}
        for hz in rates:
            base = {r["round"]: r for r in runs if r["hz"] == hz and r["variant"] == "none"}
            for variant, name in (("tachyon-bpf", "tachyon-bpf"), ("floor", "empty program (floor)"),
                                  ("tachyon", "Tachyon (3.15)")):
                sel = [r for r in runs if r["hz"] == hz and r["variant"] == variant
                       and r["round"] in base]
                if not sel:
                    continue
                rs = [r["elapsed_s"] / base[r["round"]]["elapsed_s"] for r in sel]
                cpu = [r["cpu_s"] for r in sel if r.get("cpu_s") is not None]
                core = [100 * r["cpu_s"] / r["elapsed_s"] for r in sel if r.get("cpu_s") is not None]
                per = [1e6 * r["cpu_s"] / r["samples"] for r in sel
                       if r.get("cpu_s") is not None and r.get("samples")]
                summary[(hz, variant)] = (med(rs), med(core), med(per))
                percol = f"{med(per):,.2f} µs" if per and variant != "floor" else "—"
                w(f"| {hz} Hz | {name} | {len(sel)} | {fmt_pct(med(rs))} "
                  f"({fmt_pct(min(rs))}..{fmt_pct(max(rs))}) | {med(core):.1f}% | {percol} | "
                  f"{med([r['samples'] for r in sel]):,.0f} | "
                  f"{med([r['rss_kib'] for r in sel]) / 1024:.1f} MiB |")
        w("")
        for hz in rates:
            t, b, fl = summary.get((hz, "tachyon")), summary.get((hz, "tachyon-bpf")), summary.get((hz, "floor"))
            if not t or not b:
                continue
            parts = []
            if b[2] and t[2]:
                parts.append(f"profiler CPU per sample Tachyon / tachyon-bpf agent = {t[2] / b[2]:,.0f}×")
            if b[1] and t[1]:
                parts.append(f"% of a core {t[1] / b[1]:,.0f}×")
            parts.append(f"target slowdown Tachyon {fmt_pct(t[0])}, tachyon-bpf {fmt_pct(b[0])}"
                         + (f", floor {fmt_pct(fl[0])}" if fl else ""))
            w(f"- {hz} Hz: " + "; ".join(parts) + ".")
    print("\n".join(out))


def main(argv):
    if len(argv) < 2:
        die("usage: see the top of this file")
    cmd, args = argv[1], argv[2:]
    table = {"walk": (cmd_walk, (8, 11)), "pair": (cmd_pair, (7,)), "multi": (cmd_multi, (3,)),
             "render": (render, (2,)), "native": (native, (3,)),
             "async": (asyncio_section, (3,)), "anchors": (anchors, (4,))}
    if cmd not in table or len(args) not in table[cmd][1]:
        die(f"bad command line: {argv[1:]}")
    table[cmd][0](*args)


if __name__ == "__main__":
    main(sys.argv)
