"""The course's exercise checks. Each computes its expected value from the
machine's parameters and the closed forms the notebooks derive (not from a
simulation), and passes the answer to collsim_nb.check. The reference
answers are in solutions.ipynb."""

import math

from collsim_nb import check

# The small machine (configs/builtin/small.yaml): one switch, 100 Gbit/s
# links of 500 ns, so host to host alpha = 1 us and beta = 1/12.5 GB/s;
# reductions at 10 GB/s; messages above 64 KiB use rendezvous.
ALPHA, BETA, GAMMA, EAGER = 1e-6, 1 / 12.5e9, 1 / 10e9, 64 * 1024


# 1. The alpha-beta model
def alpha_beta_bandwidth(gbps, strict=False):
    check("1.1 bandwidth (GB/s)", gbps, 1 / BETA / 1e9, strict=strict)


def alpha_beta_alpha(us, strict=False):
    check("1.2 alpha (us)", us, ALPHA * 1e6, strict=strict)


def alpha_beta_rendezvous(us, strict=False):
    # Above the eager limit a message waits for a request and a reply: two
    # more latencies before its data leaves.
    check("1.3 rendezvous intercept (us)", us, 3 * ALPHA * 1e6, strict=strict)


# 2. Allreduce
def alpha(m):
    """A message's latency: above the eager limit a request and a reply go
    first (rendezvous), two latencies more."""
    return ALPHA * (3 if m > EAGER else 1)


def ring(p, m):
    b = m / p  # each step moves one block
    return 2 * (p - 1) * (alpha(b) + b * BETA) + (p - 1) * b * GAMMA


def recursive_doubling(p, m):
    return math.log2(p) * (alpha(m) + m * BETA + m * GAMMA)


def allreduce_crossover(size, strict=False):
    # The smallest power-of-two size at which ring beats recursive doubling
    # on 64 ranks: from the closed forms with the protocol's latencies.
    m = 8
    while ring(64, m) >= recursive_doubling(64, m):
        m *= 2
    check("2.1 crossover size (bytes)", size, m, rel=0, strict=strict)


def allreduce_rd_steps(steps, strict=False):
    # On 48 ranks the 16 surplus ranks (0, 2, ..., 30) fold into their
    # partners (1, 3, ..., 31), the 32 left run log2(32) = 5 rounds, and the
    # partners send the result back: 7 steps of messages, but not 7
    # latencies. The 16 ranks that did not fold (32..47) are the upper half
    # of the 32: they pair among themselves in rounds 0-3, a step ahead of
    # the folded half, and meet it only in round 4, where their message is
    # already there when the folded half gets to it. So the last round and
    # the unfold overlap: floor(log2 48) + 1 = 6 latencies. (On 7 ranks the
    # surplus falls otherwise and the overlap is lost: 4 = floor(log2 7) + 2.)
    check("2.2 latencies of recursive doubling on 48 ranks", steps, math.floor(math.log2(48)) + 1, rel=0, strict=strict)


# 3. Trees and pipelines
def optimal_segment(segment_bytes, strict=False):
    # With a CPU overhead o per send and per receive, a middle rank of the
    # chain spends 2o per segment, its link s beta: the pipeline's period is
    # max(2o, s beta). Below s* = 2o / beta the period is 2o and the m/s
    # segments cost m/s x 2o (fewer, larger segments are better); above it
    # the period is s beta, the m/s periods sum to m beta, and the fill,
    # (p-1)(alpha + s beta + 2o), grows with s. So s* = 2o / beta.
    o = 1e-6
    check("3.1 optimal segment (bytes)", segment_bytes, 2 * o / BETA, rel=0.02, strict=strict)


def lp_limit(seconds, strict=False):
    # Linear Pipelining's allreduce: a middle rank's NIC sends each segment
    # twice (up the chain reduced, down it broadcast) while its CPU reduces
    # it once, side by side: each segment takes max(2 s beta, s gamma), so
    # the m/s segments take max(2 m beta, m gamma), plus a fill that grows
    # with P but not with m. (m (beta + gamma), the answer first expected
    # here, was above the simulated total itself.)
    check("3.2 the P-independent term (s) of linear_pipeline for 64 MiB", seconds, 64 * 2**20 * max(2 * BETA, GAMMA), rel=0.02, strict=strict)


# 4. Topology
def taper_bisection(ratio, strict=False):
    # A 2:1 taper halves the uplinks: half the bisection bandwidth.
    check("4.1 bisection, tapered over full", ratio, 0.5, strict=strict)


def dragonfly_minimal_hops(hops, strict=False):
    # Minimal routing between groups: host-router, at most one local hop, the
    # global hop, at most one local hop, router-host.
    check("4.2 most links on a minimal route between groups", hops, 5, rel=0, strict=strict)


# 5. Noise
def noise_share(share, strict=False):
    check("5.1 CPU share taken by 25 us every 1 ms", share, 25e-6 / 1e-3, strict=strict)


def noise_stretch(factor, strict=False):
    # A CPU interval of length t is stretched by the detours that fall in it:
    # on average by 1 / (1 - share).
    check("5.2 average stretch of CPU work", factor, 1 / (1 - 0.025), rel=0.001, strict=strict)


# 6. Hierarchy
def nic_bytes_ring(gb, strict=False):
    # A ring over 512 GPUs, 8 a node in rank order: the ring enters and
    # leaves each node once, so the node's link carries one ring edge's
    # traffic: 2 (p-1)/p m out.
    p, m = 512, 2**30
    check("6.1 bytes out of a node's link, flat ring (GB)", gb, 2 * (p - 1) / p * m / 1e9, strict=strict)


def nic_bytes_hier(gb, strict=False):
    # Hierarchical with --inner ring: reduce in the node, a ring over the 64
    # node leaders, bcast in the node: the node's link carries 2 (n-1)/n m.
    n, m = 64, 2**30
    check("6.2 bytes out of a node's link, hierarchical with a ring inside (GB)", gb, 2 * (n - 1) / n * m / 1e9, strict=strict)


# 7. Training
def resnet_gradient_bytes(mb, strict=False):
    # ResNet-50's 25,557,032 parameters, 16-bit gradients (mixed precision).
    check("7.1 gradient bytes per step (MB)", mb, 25_557_032 * 2 / 1e6, strict=strict)


def ring_allreduce_bytes(gb, strict=False):
    # A ring allreduce sends 2 (p-1)/p of the buffer from each rank.
    p = 64
    check("7.2 bytes each GPU sends per step (GB)", gb, 2 * (p - 1) / p * 25_557_032 * 2 / 1e9, strict=strict)
