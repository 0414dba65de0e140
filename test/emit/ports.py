"""Rendezvous ports for the tests' local process groups.

`free_ports(n)` returns n distinct ports on 127.0.0.1 that were free when
asked, drawn at random from below the kernel's ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range). Two reasons:

- ports asked for one after the other by binding port 0 and closing the
  socket can repeat (3 of 2,000 runs of 7 such calls here gave one port
  twice; runtime-errors.test once launched two cases on one port), so the
  n sockets stay bound until all n are chosen;
- between the choice and the rendezvous store's listen (seconds under load:
  each rank imports torch first) an ephemeral port can be taken by any
  connection on the machine, gloo's among them (a parallel test's); a port
  below the ephemeral range is never handed out that way, only by an
  explicit choice like this one.
"""

import random
import socket


def _ephemeral_start():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(n):
    low = 10000
    high = max(low + 1000, _ephemeral_start() - 1)
    held, ports = [], []
    try:
        while len(ports) < n:
            port = random.randint(low, high)
            if port in ports:
                continue
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            held.append(s)
            ports.append(port)
    finally:
        for s in held:
            s.close()
    return ports


def free_port():
    return free_ports(1)[0]
