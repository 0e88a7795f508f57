package sim

// RunParallel runs g in parts partitions when the schedule allows a
// parallel run, whatever its size, and reports whether it did.
func (g *GOAL) RunParallel(p LogGOPS, seed uint64, parts int) (*Result, bool) {
	if !g.parallelizable(p, nil) || parts > g.Ranks {
		return nil, false
	}
	return g.runParallel(p, seed, parts, nil)
}

// RunParallelProgress is RunParallel telling progress how far it got.
func (g *GOAL) RunParallelProgress(p LogGOPS, seed uint64, parts int, progress func(Progress)) (*Result, bool) {
	if !g.parallelizable(p, nil) || parts > g.Ranks {
		return nil, false
	}
	return g.runParallel(p, seed, parts, progress)
}

// SetQuickStatements turns the parser's quick path on or off, returning
// the setting before.
func SetQuickStatements(on bool) bool {
	before := quickStatements
	quickStatements = on
	return before
}

// SetBlockRanks stores ranks in blocks (on) or by id (off), and returns a
// function that restores the setting.
func SetBlockRanks(on bool) (restore func()) {
	before := blockRanks
	blockRanks = on
	return func() { blockRanks = before }
}

// SetMaxBlockOps bounds the ops of a block of ranks (see planLayout), so
// that tests can have blocks of few ranks, and returns a function that
// restores the bound.
func SetMaxBlockOps(n uint32) (restore func()) {
	before := maxBlockOps
	maxBlockOps = n
	return func() { maxBlockOps = before }
}

// SetFinishInOrder lets the GOAL parser store a rank whose dependencies
// are written in order in one pass (on), or sort every rank's (off), and
// returns a function that restores the setting.
func SetFinishInOrder(on bool) (restore func()) {
	before := finishInOrder
	finishInOrder = on
	return func() { finishInOrder = before }
}

// SetMaxBig sets how many sizes and durations a schedule may keep beside
// its ops, and returns a function that restores it.
func SetMaxBig(n int) (restore func()) {
	before := maxBig
	maxBig = n
	return func() { maxBig = before }
}

// SetMaxRankOps sets the most ops one rank may have, and returns a
// function that restores it.
func SetMaxRankOps(n int) (restore func()) {
	before := maxRankOps
	maxRankOps = n
	return func() { maxRankOps = before }
}

// SetArenaFrom sets the sizes from which a GOAL run's tables of messages
// and ready ops, its queues and their indexes move to the run's arena, and
// returns a function that restores them.
func SetArenaFrom(tables, items, slots int) (restore func()) {
	t, i, s := arenaFrom, arenaItems, arenaSlots
	arenaFrom, arenaItems, arenaSlots = tables, items, slots
	return func() { arenaFrom, arenaItems, arenaSlots = t, i, s }
}

// BlockedRanks returns how many of g's ranks are stored in blocks.
func (g *GOAL) BlockedRanks() int { return int(g.lay.cutRank) }

// SetMaxUsers sets the most entries a schedule's users lists may have,
// and returns a function that restores the limit.
func SetMaxUsers(n uint64) (restore func()) {
	before := maxUsers
	maxUsers = n
	return func() { maxUsers = before }
}

// SetMaxDeps sets the most dependencies a schedule may have, and returns
// a function that restores the limit.
func SetMaxDeps(n uint64) (restore func()) {
	before := maxDeps
	maxDeps = n
	return func() { maxDeps = before }
}

// SetMaxHostSlots sets the most clocks (ranks times distinct CPU or NIC
// indices) a schedule may need, and returns the setting to restore.
func SetMaxHostSlots(n int) (restore func()) {
	before := maxHostSlots
	maxHostSlots = n
	return func() { maxHostSlots = before }
}
