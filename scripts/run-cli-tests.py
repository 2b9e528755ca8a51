#!/usr/bin/env python3
"""Run the TAP shell tests in tests/cli/ against a colltune binary; fail if any fails.

Usage: scripts/run-cli-tests.py ./colltune [tests/cli/tNNNN-*.sh ...]

One script at a time, in order, by default, as the shell runner before it did: its header,
then its output once every process holding it has closed it. CT_CLI_LANES=N runs N at a
time, for a machine with cores to spare: each in a mount namespace and a /dev/shm of its own
(unshare -m and a tmpfs of the host's /dev/shm size), so that the scripts that count the
shared-memory objects a job leaves see their own jobs' alone; a script whose header says
"# cli-lane: alone" (its verdicts time things: a bandwidth, a pass against a ceiling) runs
with no other beside it, after the rest; one that says "# cli-lane: long" starts first.
Where a private /dev/shm cannot be had (not root, no unshare), they run one by one. On the
2-core VM two lanes took the CLI scripts from 19 to 15.5 minutes but slowed the MPI
libraries' scripts 1.8-2.4x (their ranks poll) and failed a check of t3125 that timed a
sweep: the default stays one. Each script's output is printed whole as it ends, with its
seconds; then one summary line.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def lane_of(path):
    with open(path, errors="replace") as f:
        for _, line in zip(range(20), f):
            m = re.match(r"#\s*cli-lane:\s*(\w+)", line)
            if m:
                return m.group(1)
    return ""


def private_shm_cmd():
    """The command prefix that runs a script with a /dev/shm of its own, or None."""
    if os.geteuid() != 0:
        return None
    st = os.statvfs("/dev/shm")
    size = st.f_blocks * st.f_frsize
    inner = 'mount -t tmpfs -o mode=1777,size=%d ct-shm /dev/shm && exec sh "$0"' % size
    cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", inner]
    try:
        ok = subprocess.run(cmd + ["/dev/null"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return cmd if ok else None


def main():
    if len(sys.argv) < 2:
        print("usage: scripts/run-cli-tests.py ./colltune [tests/cli/tNNNN-*.sh ...]",
              file=sys.stderr)
        return 2
    os.environ["COLLTUNE"] = os.path.abspath(sys.argv[1])
    scripts = sys.argv[2:]
    if not scripts:
        d = "tests/cli"
        scripts = sorted(os.path.join(d, f) for f in os.listdir(d)
                         if re.match(r"t[0-9].*\.sh$", f))
    try:
        lanes = max(1, int(os.environ.get("CT_CLI_LANES", "1") or 1))
    except ValueError:
        print("CT_CLI_LANES: a whole number of scripts at a time", file=sys.stderr)
        return 2
    prefix = private_shm_cmd() if lanes > 1 else None
    if lanes > 1 and prefix is None:
        print("# cli: one script at a time (a /dev/shm of each one's own needs root and unshare)")
        lanes = 1
    kinds = {t: lane_of(t) for t in scripts}
    if lanes > 1:
        print("# cli: %d scripts at a time, each with a /dev/shm of its own; "
              "those marked alone after, one by one" % lanes)
        # the long ones first, the rest in order, the ones that run alone last
        order = {"long": 0, "": 1, "alone": 2}
        scripts = sorted(scripts, key=lambda t: order.get(kinds[t], 1))
    tmp = tempfile.mkdtemp(prefix="ct-cli-")
    running = {}  # pid -> (script, Popen, output file, start time)
    stats = {"pass": 0, "fail": 0, "skip": 0}
    failed = []

    def report(t, rc, out, secs):
        if isinstance(out, str):
            with open(out, errors="replace") as f:
                text = f.read()
            os.unlink(out)
            print("== " + t)
        else:  # one at a time: its header is out, its output read to the end
            text = out.decode(errors="replace")
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        print("# %s: %d s" % (t, secs))
        lines = text.split("\n")
        p = sum(1 for l in lines if l.startswith("ok "))
        s = sum(1 for l in lines if l.startswith("ok ") and "# SKIP" in l)
        f = sum(1 for l in lines if l.startswith("not ok "))
        stats["pass"] += p - s
        stats["skip"] += s
        stats["fail"] += f
        if rc != 0 and f == 0:
            stats["fail"] += 1
            print("not ok - %s exited %d" % (t, rc))
        if f > 0 or rc != 0:
            failed.append(t)
        sys.stdout.flush()

    def stop(sig, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    pending = list(scripts)
    if lanes == 1:
        # as the shell runner did: the header first, the output once every process holding
        # it has closed it (a script's stray background job holds the next one back)
        current = None
        try:
            for t in pending:
                print("== " + t)
                sys.stdout.flush()
                t0 = time.time()
                current = subprocess.Popen(["sh", t], stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
                text = current.stdout.read()
                rc = current.wait()
                current = None
                report(t, rc if rc >= 0 else 128 - rc, text, time.time() - t0)
        except KeyboardInterrupt:
            if current:
                current.terminate()
                current.wait()
            os.rmdir(tmp)
            return 130
        pending = []
    try:
        while pending or running:
            alone_running = any(kinds[r[0]] == "alone" for r in running.values())
            while pending and len(running) < lanes and not alone_running:
                t = pending[0]
                if kinds[t] == "alone" and lanes > 1 and running:
                    break
                pending.pop(0)
                out = os.path.join(tmp, "%d.out" % len(pending))
                with open(out, "w") as f:
                    p = subprocess.Popen(prefix + [t],
                                         stdout=f, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
                running[p.pid] = (t, p, out, time.time())
                alone_running = kinds[t] == "alone" and lanes > 1
            pid, status = os.wait()
            if pid not in running:
                continue
            t, p, out, t0 = running.pop(pid)
            p.returncode = os.waitstatus_to_exitcode(status)
            rc = p.returncode if p.returncode >= 0 else 128 - p.returncode
            report(t, rc, out, time.time() - t0)
    except KeyboardInterrupt:
        for t, p, out, t0 in running.values():
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except OSError:
                pass
        return 130
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    print("cli: %d passed, %d failed, %d skipped" % (stats["pass"], stats["fail"], stats["skip"]))
    if failed:
        print("cli: failed:" + "".join(" " + t for t in failed))
    return 1 if stats["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
