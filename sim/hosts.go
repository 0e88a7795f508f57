package sim

// hosts is what the executors know of every rank's host: when each of its
// CPUs is next free, the OS noise that stretches CPU work, and in the
// LogGOPS model when each NIC's send and receive sides are next free and
// what a message costs them. Both executors (Execute and GOAL.RunLogGOPS)
// charge their hosts through it, so they cannot price the model apart.
type hosts struct {
	cpus, nics int
	cpuFree    []Time // per rank and CPU
	noise      *Noise
	// The LogGOPS model; nil otherwise.
	lg           *LogGOPS
	costs        sizeCost
	nicTx, nicRx []Time // per rank and NIC
}

// newHosts is the hosts of ranks ranks. It keeps its own copy of noise,
// whose start sets a run's offsets and stragglers: one Noise may serve
// runs at once (it raced, and panicked with ranks of two sizes: a new
// user's trial).
func newHosts(ranks, cpus, nics int, noise *Noise, lg *LogGOPS) hosts {
	if noise != nil {
		own := *noise
		noise = &own
	}
	h := hosts{cpus: cpus, nics: nics, cpuFree: make([]Time, ranks*cpus), noise: noise, lg: lg}
	if lg != nil {
		h.costs = newSizeCost(lg)
		h.nicTx = make([]Time, ranks*nics)
		h.nicRx = make([]Time, ranks*nics)
	}
	return h
}

// cpu and nic index the per-CPU and per-NIC tables.
func (h *hosts) cpu(r int32, cpu uint16) int { return int(r)*h.cpus + int(cpu) }
func (h *hosts) nic(r int32, nic uint16) int { return int(r)*h.nics + int(nic) }

// stretch returns how much OS noise stretches the CPU interval [t, t+d)
// of rank r.
func (h *hosts) stretch(r int32, t, d Time) Time {
	if h.noise == nil {
		return 0
	}
	return h.noise.extra(r, t, d)
}

// occupy runs CPU cpu of rank r for d from now, after whatever it is
// doing, stretched by noise; it returns when the work starts and ends.
func (h *hosts) occupy(r int32, cpu uint16, now, d Time) (start, end Time) {
	c := h.cpu(r, cpu)
	start = max(now, h.cpuFree[c])
	end = start.Plus(d).Plus(h.stretch(r, start, d))
	h.cpuFree[c] = end
	return start, end
}

// idle returns when every CPU of rank r is free.
func (h *hosts) idle(r int) Time {
	var t Time
	for _, f := range h.cpuFree[r*h.cpus : (r+1)*h.cpus] {
		t = max(t, f)
	}
	return t
}

// send starts a LogGOPS send of size bytes on CPU cpu and NIC nic of rank
// r, whose NIC is free at now, once the CPU is free too. The CPU is busy
// until start+o+(size-1)O, the NIC until start+g+(size-1)G; the message
// leaves at start+o and reaches its receiver L later. A straggler's o is
// longer, and its message leaves after it (it left after an o of the
// usual length, before its sender had sent it: a new user's trial); an
// OS detour in o is charged after the message left, as LogGOPSim charges
// it.
func (h *hosts) send(r int32, cpu, nic uint16, size int64, now Time) (start, leaves, cpuEnd Time) {
	c, n := h.cpu(r, cpu), h.nic(r, nic)
	p := h.lg
	start = max(now, h.cpuFree[c], h.nicTx[n])
	perO, perG := h.costs.of(size)
	leaves = start.Plus(p.O)
	if h.noise != nil {
		leaves = leaves.Plus(h.noise.slowdown(r, p.O))
		perO = perO.Plus(h.noise.slowdown(r, perO)) // a straggler's per-byte work too (an audit)
	}
	cpuEnd = start.Plus(p.O).Plus(h.stretch(r, start, p.O)).Plus(perO)
	h.cpuFree[c] = cpuEnd
	h.nicTx[n] = start.Plus(p.G).Plus(perG)
	return start, leaves, cpuEnd
}

// intake takes in a message of size bytes through NIC nic of rank r,
// whose receive gap has passed at now: CPU cpu takes it in once free, busy
// for o + max((size-1)O, (size-1)G), and the NIC for g + (size-1)G from
// then. It returns when the CPU starts and when it is done.
func (h *hosts) intake(r int32, cpu, nic uint16, size int64, now Time) (start, end Time) {
	c := h.cpu(r, cpu)
	p := h.lg
	start = max(now, h.cpuFree[c])
	perO, perG := h.costs.of(size)
	if h.noise != nil {
		perO = perO.Plus(h.noise.slowdown(r, perO)) // a straggler's per-byte work too (an audit)
	}
	h.cpuFree[c] = start.Plus(p.O).Plus(h.stretch(r, start, p.O)).Plus(max(perO, perG))
	h.nicRx[h.nic(r, nic)] = start.Plus(p.G).Plus(perG)
	return start, h.cpuFree[c]
}
