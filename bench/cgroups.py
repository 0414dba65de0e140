"""CPU cgroups for the measuring benches (bench/hetero_run.py,
bench/real_run.py): groups with a CPU quota and a high weight under the
cgroup v1 `cpu` hierarchy or the v2 unified one.

A group's weight, far above the default one, keeps other processes on the
machine (builds, tests) from setting its speed: the quota, or with no quota
the cores themselves, does. Every caller removes its groups on exit
(Cgroups.remove kills what is left in them, then rmdirs them); where the
groups cannot be written, the constructor or make() raises Skip with the
reason.
"""
import os
import signal
import time

PERIOD_US = 5000  # short (quotas >= 1 ms): a throttled rank stalls its peers briefly
SHARES_V1, WEIGHT_V2 = 16384, 1600  # 16 times the default weight
# The largest weight each version takes: a group that should run as if the
# machine were quiet.
TOP_SHARES_V1, TOP_WEIGHT_V2 = 262144, 10000


class Skip(Exception):
    pass


class Cgroups:
    """Groups named TAG-NAME; make() returns the group's cgroup.procs."""

    def __init__(self, tag, log=None):
        self.tag = tag
        self.log = log or (lambda message: None)
        self.dirs = []
        v1 = "/sys/fs/cgroup/cpu"
        v2 = "/sys/fs/cgroup"
        if os.path.exists(os.path.join(v1, "cpu.cfs_quota_us")):
            self.version, self.root = 1, v1
        elif os.path.exists(os.path.join(v2, "cgroup.controllers")):
            self.version, self.root = 2, v2
            with open(os.path.join(v2, "cgroup.controllers")) as f:
                if "cpu" not in f.read().split():
                    raise Skip("cgroup v2 without the cpu controller")
        else:
            raise Skip("no cgroup cpu controller at /sys/fs/cgroup")

    def make(self, name, percent=None, top_weight=False):
        """A group of `percent` % of one core (None: no quota), weighted 16
        times the default, or at the largest weight with `top_weight`."""
        path = os.path.join(self.root, "%s-%s" % (self.tag, name))
        shares, weight = ((TOP_SHARES_V1, TOP_WEIGHT_V2) if top_weight
                          else (SHARES_V1, WEIGHT_V2))
        try:
            if self.version == 2:
                control = os.path.join(self.root, "cgroup.subtree_control")
                with open(control) as f:
                    enabled = f.read().split()
                if "cpu" not in enabled:
                    with open(control, "w") as f:
                        f.write("+cpu")
            os.mkdir(path)
            self.dirs.append(path)
            quota = -1 if percent is None else int(PERIOD_US * percent / 100)
            if self.version == 1:
                self.write(path, "cpu.cfs_period_us", PERIOD_US)
                self.write(path, "cpu.cfs_quota_us", quota)
                self.write(path, "cpu.shares", shares)
            else:
                limit = "max" if quota < 0 else str(quota)
                self.write(path, "cpu.max", "%s %d" % (limit, PERIOD_US))
                self.write(path, "cpu.weight", weight)
        except OSError as e:
            raise Skip("cannot write cgroup %s (%s)" % (path, e.strerror))
        return os.path.join(path, "cgroup.procs")

    def enter(self, procs):
        """Moves this process (and so every child it starts) into a group."""
        try:
            self.write(os.path.dirname(procs), "cgroup.procs", os.getpid())
        except OSError as e:
            raise Skip("cannot join cgroup %s (%s)" % (procs, e.strerror))

    def leave(self):
        """Moves this process back to the hierarchy's root group."""
        try:
            self.write(self.root, "cgroup.procs", os.getpid())
        except OSError:
            pass

    @staticmethod
    def write(path, name, value):
        with open(os.path.join(path, name), "w") as f:
            f.write(str(value))

    def remove(self):
        """Kills what is left in the groups (never this process: call
        leave() first if it joined one) and removes them."""
        me = os.getpid()
        for path in reversed(self.dirs):
            procs = os.path.join(path, "cgroup.procs")
            for _ in range(50):
                try:
                    with open(procs) as f:
                        pids = [int(p) for p in f.read().split()]
                except OSError:
                    break
                for pid in pids:
                    if pid == me:
                        continue
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                try:
                    os.rmdir(path)
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                self.log("could not remove %s" % path)
        self.dirs = []
