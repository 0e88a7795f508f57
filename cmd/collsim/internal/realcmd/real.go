// Package realcmd implements `collsim real`: the library's algorithms run
// for real, one OS process per rank, over shared memory or TCP, with their
// data checked and their time measured as the OSU micro-benchmarks measure
// it.
package realcmd

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/trace"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
	"github.com/collsim/collsim/sim/workers"
)

type options struct {
	Launcher
	collective   string
	algos        string
	sizes        string
	pingpong     string
	exchange     string
	pairsAgain   bool
	interleave   bool
	peer         int
	iterations   int
	warmup       int
	verify       bool
	seed         uint64
	timeout      time.Duration
	rendezvous   string
	rendezvousAt string // a shared file rank 0 writes its rendezvous address to
	secretFile   string // a file holding the job's secret (cluster runs)
	bind         string
	transport    string
	singleCopy   string
	nodeSize     int
	groupSize    int
	json         bool
	fault        string
	timeline     string
	prtt         string // sizes of a PRTT measurement (--prtt)
	prttN        int
	prttOut      string
	prttDelays   string // the second PRTT launch's d per size
	// skipped says which calls of a list buildJobs left out (collectives
	// a library selector's rules do not cover, sizes that send nothing or
	// make a call already made), and notes what else it did to them
	// (sizes an alltoall rounds down).
	skipped, notes []string
}

// skip notes, once, that buildJobs left a call out, and why.
func (o *options) skip(why string) {
	if !slices.Contains(o.skipped, why) {
		o.skipped = append(o.skipped, why)
	}
}

// note notes, once, what buildJobs did to a call.
func (o *options) note(what string) {
	if !slices.Contains(o.notes, what) {
		o.notes = append(o.notes, what)
	}
}

// New returns the real command.
func New(streams *cmdutil.IO) *cobra.Command { return newCmd(streams, &options{}) }

// npUnderLauncher is the refusal of --np np in rank rank of size
// processes that srun or mpirun started: mpirun -np 2 collsim real --np 2
// would run two separate jobs of two ranks each, silently. instead says
// what to do.
func npUnderLauncher(np, rank, size int, instead string) error {
	return cmdutil.Flagf("--np %d under a launcher that started %d processes (this is rank %d): each would start a job of its own; %s", np, size, rank, instead)
}

// RefuseUnderLauncher refuses a command that starts its own np local
// ranks (validate --real) in a process that srun or mpirun started among
// others: each would run the whole command.
func RefuseUnderLauncher(np int) error {
	rank, size, found, err := rankFromEnv(os.Getenv)
	const instead = "validate --real starts its ranks itself, with --np: run it outside srun or mpirun"
	switch {
	case err != nil || !found || size <= 1:
		return err
	case np == 0:
		return cmdutil.Flagf("a launcher started %d processes (this is rank %d); %s", size, rank, instead)
	}
	return npUnderLauncher(np, rank, size, instead)
}

// Check parses args as the rank processes of a launcher will ("real" and
// its flags) and builds their jobs for ranks ranks, so that a launcher
// reports bad flags once, before it starts any rank, and that this
// machine holds ranks local ranks running them (threads, memory).
func Check(args []string, ranks int) error {
	o := &options{}
	cmd := newCmd(&cmdutil.IO{Out: io.Discard, Err: io.Discard}, o)
	if err := cmd.ParseFlags(args[1:]); err != nil {
		return &cmdutil.FlagError{Err: err}
	}
	jobs, _, err := buildJobs(o, 0, ranks)
	if err != nil {
		return err
	}
	return launchRoom(jobs, ranks, o.interleave)
}

func newCmd(streams *cmdutil.IO, o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "real",
		Short: "Run algorithms for real: one process per rank, over shared memory or TCP, data checked, OSU-style timing",
		Long: `real runs the same programs the simulator runs, for real: one OS process
per rank, real bytes between them (through shared memory between ranks on
one host, as MPI libraries do, over TCP otherwise; --transport tcp keeps
every pair on TCP), real reductions, and every rank's result checked after
every iteration. Each call is timed as the OSU micro-benchmarks time it
(warm-up iterations, then timed ones with a barrier before and after each,
the check after the second; with --interleave, in rounds of one iteration
of every call instead of each call's iterations in turn); the table
gives the average over ranks of each rank's average time, and the least and
greatest of them.

Three ways to start the ranks:
  collsim real --np 4 ...            4 processes on this machine, through shared
                                     memory (--transport tcp: over loopback TCP)
  collsim real --np 8 --netns --hosts 4 --link-bandwidth 1Gbps ...
                                     an emulated cluster: one network namespace
                                     per host, shaped links (needs root)
  srun -n 64 collsim real --rendezvous-file $HOME/.collsim-rdv ...
  mpirun -np 64 collsim real --rendezvous node001:29500 ...
                                     a real cluster: each rank reads its rank and
                                     size from the launcher's environment
                                     (SLURM_PROCID/SLURM_NTASKS,
                                     OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE)
                                     and meets the others at rank 0's rendezvous.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return run(cmd, streams, o) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.collective, "collective", "c", "allreduce", `collectives to run: one, a comma-separated list, or "all"`)
	f.StringVarP(&o.algos, "algo", "a", "", `algorithms, comma-separated, or "all" (default: the collective's default)`)
	f.StringVarP(&o.sizes, "sizes", "s", "8,1KiB,64KiB,1MiB", `message sizes: a list "8,1KiB" or a doubling range "8..64MiB"`)
	o.AddFlags(f)
	f.StringVar(&o.pingpong, "pingpong", "", `also time a ping-pong between rank 0 and --pingpong-peer at these sizes ("8..4MiB"), as osu_latency does, and fit alpha and beta to it`)
	f.StringVar(&o.exchange, "exchange", "", `also time an exchange between rank 0 and --pingpong-peer at these sizes ("4MiB,16MiB"): both send and receive at once, then again with the receives reducing; against the ping-pong, whether a rank sends and takes in at once, and what a reduction costs as the transport does it (validate --real fits its machine so on one host)`)
	f.BoolVar(&o.pairsAgain, "pairs-again", false, "time the --pingpong and --exchange calls again after the collectives, as well as before them (validate --real compares the two, to see whether the machine changed during the run)")
	f.BoolVar(&o.interleave, "interleave", false, "time the calls in rounds, one iteration of each call and then the next, instead of each call's iterations one after another: a machine whose speed changes during the run then slows every call alike (each call keeps its buffers between rounds, so the rounds hold all of them at once)")
	f.IntVar(&o.peer, "pingpong-peer", -1, "the ping-pong's (and the exchange's and PRTT's) other rank (default: the last rank, on another host under block placement)")
	f.StringVar(&o.prtt, "prtt", "", `instead of collectives, measure Netgauge's LogGP round trips PRTT(1,0,s), PRTT(n,0,s) and PRTT(n,PRTT(1,0,s),s) between rank 0 and --pingpong-peer at these sizes ("1..1MiB"; needs --np) and fit L, o, g and G`)
	f.IntVar(&o.prttN, "prtt-n", 10, "messages per PRTT burst (Netgauge's n)")
	f.StringVar(&o.prttOut, "prtt-out", "", "write the PRTT series to this file in Netgauge's loggp format, for collsim calibrate --prtt")
	f.StringVar(&o.prttDelays, "prtt-delays", "", "internal: the delays of the second PRTT launch")
	f.MarkHidden("prtt-delays")
	f.IntVar(&o.iterations, "iterations", 10, "timed iterations per call")
	f.IntVar(&o.warmup, "warmup", 2, "untimed iterations before them")
	f.BoolVar(&o.verify, "verify", true, "carry real data and check every rank's result after every iteration")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the input data")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up when a rank waits this long without progress (starting, registering and connecting get at least 30s)")
	f.StringVar(&o.rendezvous, "rendezvous", "", "host:port of the rendezvous rank 0 listens on (cluster runs)")
	f.StringVar(&o.rendezvousAt, "rendezvous-file", "", "a file on a shared filesystem where rank 0 writes its rendezvous address (cluster runs)")
	f.StringVar(&o.secretFile, "secret-file", "", "a file only you can read (chmod 600) holding the job's secret in hex, the same for every rank (cluster runs; default $COLLSIM_SECRET, or a secret rank 0 makes and passes on through --rendezvous-file)")
	f.StringVar(&o.bind, "bind", "", "IP address this rank listens on for its peers (default: the one that reaches the rendezvous)")
	f.StringVar(&o.transport, "transport", "shm", `how ranks on one host talk: "shm" (shared memory, as MPI libraries do; TCP between hosts) or "tcp" (every pair over TCP, as Open MPI's --mca btl tcp,self)`)
	f.StringVar(&o.singleCopy, "single-copy", "auto", `which messages with data ranks that share memory copy once, straight out of the sender's memory (process_vm_readv), as Open MPI's shared-memory transport does above 4KiB: "auto" (each rank times 128 KiB and 2 MiB exchanges both ways before the run, and copies once those above 64 KiB if that was faster at 128 KiB, else those too large for a ring, 1 MiB in jobs of up to 33 ranks, if that was faster at 2 MiB: which is faster depends on the machine), "ring" (those too large for a ring, without timing), a size such as 4KiB (those above it), or "off" (none, as Open MPI's --mca btl_vader_single_copy_mechanism none); "auto" and "ring" copy none on a machine with more ranks than the cores they may run on`)
	f.IntVar(&o.nodeSize, "node-size", 0, "ranks per node, for hierarchical algorithms (default: ranks per host)")
	f.IntVar(&o.groupSize, "group-size", 0, "ranks per group, for group-aligned algorithms (default: the node size)")
	f.BoolVar(&o.json, "json", false, "write JSON")
	f.StringVar(&o.timeline, "timeline", "", "write every op of each call's last iteration, on every rank, to this file: a name ending in .svg as a Gantt chart by rank (as collsim run draws one), any other as a Chrome trace (open it in Perfetto or chrome://tracing)")
	f.StringVar(&o.fault, "inject-fault", "", "for tests: crash@R, killed@R (SIGKILL), stall@R or garbage@R makes rank R fail that way before its third call")
	f.MarkHidden("inject-fault")
	return cmd
}

func run(cmd *cobra.Command, streams *cmdutil.IO, o *options) (err error) {
	rank, size, found, err := rankFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	_, child := os.LookupEnv("COLLSIM_RANK")
	if cpu := os.Getenv("COLLSIM_CPU"); child && cpu != "" {
		if err := bindToCPU(cpu); err != nil {
			return err
		}
	}
	if !child {
		if err := o.CheckFlags(cmd.Flags()); err != nil {
			return err
		}
		// Before the run: a timeline in a missing directory failed after
		// it, and took the table with it (a new user's trial).
		for _, out := range [][2]string{{"--timeline", o.timeline}, {"--prtt-out", o.prttOut}} {
			if out[1] != "" {
				if err := cmdutil.OutputFile(out[0], out[1]); err != nil {
					return err
				}
			}
		}
		switch strings.ToLower(filepath.Ext(o.timeline)) {
		case ".png", ".jpg", ".jpeg", ".pdf", ".gif":
			// It wrote a Chrome trace under the picture's name without a
			// word (a new user's trial).
			return cmdutil.Flagf("--timeline %s: a timeline is drawn as SVG (a name ending in .svg) or written as a Chrome trace (any other name, such as .json), not as %s", o.timeline, filepath.Ext(o.timeline))
		}
		if n := max(size, o.NP); svgTimeline(o.timeline) && n > trace.MaxTimelineRanks {
			return cmdutil.Flagf("--timeline %s: a timeline of %d ranks is unreadable; draw at most %d, or write a Chrome trace (a name not ending in .svg) for Perfetto", o.timeline, n, trace.MaxTimelineRanks)
		}
	}
	if !child && o.prtt != "" {
		if err := cmdutil.NotApplicable(cmd.Flags(), "--prtt measures round trips instead of collectives and ping-pongs", "pingpong", "exchange", "pairs-again", "interleave", "collective", "algo", "sizes"); err != nil {
			return err
		}
		return runPRTT(cmd, streams.Out, streams.Err, o)
	}
	if !child && o.interleave {
		if err := cmdutil.NotApplicable(cmd.Flags(), "--interleave times every call in every round, so nothing is timed after the collectives", "pairs-again"); err != nil {
			return err
		}
	}
	// (Taken and ignored before: a new user's trial.)
	if !child {
		if err := cmdutil.NotApplicable(cmd.Flags(), "it sets --prtt's measurement, and none is asked for", "prtt-n", "prtt-out"); err != nil {
			return err
		}
	}
	if !child && o.pingpong == "" && o.exchange == "" {
		if err := cmdutil.NotApplicable(cmd.Flags(), "it picks the other rank of --pingpong, --exchange and --prtt, and none is asked for", "pingpong-peer"); err != nil {
			return err
		}
		if err := cmdutil.NotApplicable(cmd.Flags(), "it times --pingpong and --exchange again, and neither is asked for", "pairs-again"); err != nil {
			return err
		}
	}
	if !child && o.transport == realrun.TCP.String() && o.singleCopy != "auto" { // auto, the default, has nothing to choose
		if err := cmdutil.NotApplicable(cmd.Flags(), "it chooses how ranks that share memory move large messages, and with --transport tcp none do", "single-copy"); err != nil {
			return err
		}
	}
	if _, _, ok := parseFault(o.fault); o.fault != "" && !ok {
		// (A mistyped fault, bogus@1 or crash, ran without one, and the
		// test it was for passed: a new user's trial.)
		return cmdutil.Flagf("--inject-fault %q: give crash@R, killed@R, stall@R or garbage@R, R a rank", o.fault)
	}
	if !child && o.NP == 0 {
		if err := cmdutil.NotApplicable(cmd.Flags(), "it binds the ranks that --np starts; under srun or mpirun, their own binding options do (srun --cpu-bind, mpirun --bind-to)", "bind-to"); err != nil {
			return err
		}
	}
	if !child && o.NP > 0 && found && size > 1 {
		return npUnderLauncher(o.NP, rank, size, "let the launcher start the ranks (drop --np), or run collsim real --np outside it")
	}
	if !child && o.NP > 0 {
		if err := cmdutil.NotApplicable(cmd.Flags(), "with --np, collsim serves the rendezvous and makes each run's secret itself (these flags are for ranks that srun or mpirun start)",
			"secret-file", "rendezvous", "rendezvous-file"); err != nil {
			return err
		}
		// Check the flags here, once, rather than in every rank, and
		// that the machine holds the ranks.
		jobs, _, err := buildJobs(o, 0, o.NP)
		if err != nil {
			return err
		}
		if err := launchRoom(jobs, o.NP, o.interleave); err != nil {
			return err
		}
		printNotes(streams.Err, o)
		o.Timeout = realrun.SetupTimeout(o.timeout)
		reports, err := o.Launch(ChildArgs(cmd, "real"), streams.Err)
		if err != nil {
			return err
		}
		return report(streams.Out, o, o.NP, reports)
	}
	if !found {
		return cmdutil.Flagf("no ranks: give --np N to start N local processes, or start collsim under srun or mpirun (which set SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK)")
	}
	if n := localRanks(os.Getenv); !child && n > 0 && os.Getenv("GOMAXPROCS") == "" {
		// Under mpirun or srun, the share of this host's cores that collsim's
		// own launcher gives each rank (RankProcs).
		runtime.GOMAXPROCS(RankProcs(runtime.NumCPU(), n))
	}
	jobs, hash, err := buildJobs(o, rank, size)
	if err != nil {
		return err
	}
	if !child && rank == 0 { // under srun or mpirun: rank 0 speaks
		printNotes(streams.Err, o)
	}
	ctx, caught, stop := cmdutil.SignalContext()
	defer stop()
	defer func() {
		// A rank stopped by a signal (srun's on scancel, mpirun's on
		// Ctrl-C) exits as the signal does (it exited 1: an audit).
		sig := caught()
		if sig == nil && peerInterrupted(err) {
			sig = awaitSignal(ctx, caught, peerSignalGrace)
		}
		switch {
		case err != nil && sig != nil:
			err = &cmdutil.Interrupted{Signal: sig, Err: err}
		case realrun.WrongResult(err):
			// Wrong data exits 3, as a simulated run's does (it
			// exited 1: a new user's trial).
			err = &cmdutil.ValidationError{Err: err}
		}
	}()
	secret, err := givenSecret(o.secretFile, os.Getenv)
	if err != nil {
		return err
	}
	addr := os.Getenv("COLLSIM_RENDEZVOUS")
	var serve func() ([]realrun.Report, error)
	switch {
	case addr != "" && secret == nil:
		return fmt.Errorf("rank %d: the launcher set COLLSIM_RENDEZVOUS but no $%s", rank, secretEnv)
	case addr == "":
		addr, serve, secret, err = clusterRendezvous(ctx, o, rank, size, hash, secret)
		if err != nil {
			return err
		}
	}
	var server workers.Group
	var reports []realrun.Report
	var serr error
	if serve != nil {
		server.Go(func() { reports, serr = serve() })
	}
	transport, err := parseTransport(o.transport)
	if err != nil {
		return err
	}
	singleCopy, err := parseSingleCopy(o.singleCopy)
	if err != nil {
		return err
	}
	err = realrun.RunRank(ctx, realrun.RankOptions{
		Rank: rank, Size: size, Rendezvous: addr, Bind: o.bind, Job: hash, Secret: secret, Jobs: jobs, Transport: transport, SingleCopyAbove: singleCopy,
		Warmup: o.warmup, Iterations: o.iterations, Interleave: o.interleave, Timeout: o.timeout, Hook: faultHook(o.fault, rank), Timeline: o.timeline != "",
	})
	if serve == nil {
		return err
	}
	server.Wait()
	if serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	return report(streams.Out, o, size, reports)
}

// localRanks is how many ranks share this host, as Open MPI, MPICH's
// Hydra or Slurm says (0: not said).
func localRanks(getenv func(string) string) int {
	for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"} {
		if n, err := strconv.Atoi(getenv(v)); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// rankFromEnv finds this process's rank and the run's size in the
// environment of collsim's own launcher, Slurm, Open MPI or a PMI launcher
// (MPICH's Hydra, Intel MPI). found is false when none is set.
func rankFromEnv(getenv func(string) string) (rank, size int, found bool, err error) {
	for _, v := range [][2]string{
		{"COLLSIM_RANK", "COLLSIM_SIZE"},
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		{"PMI_RANK", "PMI_SIZE"},
		{"SLURM_PROCID", "SLURM_NTASKS"},
	} {
		rs, ss := getenv(v[0]), getenv(v[1])
		if rs == "" && ss == "" {
			continue
		}
		r, rerr := strconv.Atoi(rs)
		s, serr := strconv.Atoi(ss)
		switch {
		case rerr != nil || serr != nil:
			return 0, 0, false, fmt.Errorf("%s=%q and %s=%q: both must be whole numbers; is the launcher setting them?", v[0], rs, v[1], ss)
		case s < 1 || r < 0 || r >= s:
			return 0, 0, false, fmt.Errorf("%s=%d is not a rank of %s=%d (0..%d)", v[0], r, v[1], s, s-1)
		}
		return r, s, true, nil
	}
	return 0, 0, false, nil
}

// RankProfile is where this process writes the CPU profile asked for as
// path: path itself, unless the process is one rank of a job of several
// (started by collsim real --np, srun, mpirun), which all get the same
// flag; then path.rank<N>, so that the ranks do not write over each
// other's profiles in one file.
func RankProfile(path string, getenv func(string) string) string {
	rank, size, found, err := rankFromEnv(getenv)
	if !found || err != nil || size < 2 {
		return path
	}
	return fmt.Sprintf("%s.rank%d", path, rank)
}

// parseTransport reads --transport.
func parseTransport(s string) (realrun.Transport, error) {
	for _, t := range []realrun.Transport{realrun.SharedMemory, realrun.TCP} {
		if s == t.String() {
			return t, nil
		}
	}
	return 0, cmdutil.Flagf("--transport %q: want shm (shared memory between ranks on one host) or tcp", s)
}

// parseSingleCopy reads --single-copy: the message size above which ranks
// copy once (0: those too large for a ring; realrun.SingleCopyAuto: those,
// if a probe finds that faster).
func parseSingleCopy(s string) (int64, error) {
	switch s {
	case "auto":
		return realrun.SingleCopyAuto, nil
	case "ring":
		return 0, nil
	case "off":
		return realrun.SingleCopyOff, nil
	}
	n, err := configs.ParseSize(s)
	if err != nil || n < 0 {
		return 0, cmdutil.Flagf("--single-copy %q: want auto (the faster way, timed before the run), ring (messages too large for a ring), off, or a size such as 4KiB (messages above it)", s)
	}
	// Messages carry whole 8-byte elements: above 0 bytes is above 1.
	return max(n, 1), nil
}

// buildJobs makes the calls every rank times, and the hash of everything
// that must agree between ranks.
func buildJobs(o *options, rank, size int) ([]realrun.Job, uint64, error) {
	switch {
	case o.iterations < 1:
		return nil, 0, cmdutil.Flagf("--iterations %d: give 1 or more timed iterations", o.iterations)
	case o.warmup < 0:
		return nil, 0, cmdutil.Flagf("--warmup %d: give 0 or more untimed iterations", o.warmup)
	case o.nodeSize < 0 || o.groupSize < 0:
		// (-1 reached the algorithm as no node size given: a hierarchical
		// run said it needed --node-size, exit 1; a new user's trial.)
		return nil, 0, cmdutil.Flagf("--node-size %d, --group-size %d: give 1 or more (or 0 for the default)", o.nodeSize, o.groupSize)
	}
	if o.timeout <= 0 {
		return nil, 0, cmdutil.Flagf("--timeout must be more than 0, not %v: it is how long a rank waits without progress before it gives up", o.timeout)
	}
	transport, err := parseTransport(o.transport)
	if err != nil {
		return nil, 0, err
	}
	singleCopy, err := parseSingleCopy(o.singleCopy)
	if err != nil {
		return nil, 0, err
	}
	if o.prtt != "" {
		jobs, _, err := prttJobs(o, size)
		spec := fmt.Sprintf("prtt|%s|%d|%s|%d|%d|%d", o.prtt, o.prttN, o.prttDelays, o.peer, o.iterations, o.warmup)
		return jobs, realrun.JobHash(buildID(), spec), err
	}
	colls, err := cmdutil.Collectives(o.collective)
	if err != nil {
		return nil, 0, err
	}
	sizes, err := cmdutil.Sizes(o.sizes)
	if err != nil {
		return nil, 0, &cmdutil.FlagError{Err: fmt.Errorf("--sizes: %w", err)}
	}
	if err := carried("--sizes", sizes); err != nil {
		return nil, 0, err
	}
	nodeSize := o.nodeSize
	if nodeSize == 0 {
		nodeSize = size / max(o.Netns.hosts, 1)
	}
	groupSize := o.groupSize
	if groupSize == 0 {
		groupSize = nodeSize
	}
	many := len(colls) > 1 || o.algos == "all" || strings.Contains(o.algos, ",")
	jobs, err := pairJobs(o, size, rank)
	if err != nil {
		return nil, 0, err
	}
	for _, c := range colls {
		algos, err := algorithmsOf(c, o.algos)
		if err != nil {
			return nil, 0, err
		}
		for _, entry := range algos {
			for _, bytes := range sizes {
				p, err := collsim.Call(c, size, bytes, 8, 0)
				if err != nil && bytes%8 != 0 {
					// Call's advice (--elem-size 1) is the simulator's:
					// real runs move whole 64-bit words.
					return nil, 0, wholeWords("--sizes", bytes)
				}
				if err != nil {
					return nil, 0, err
				}
				// An alltoall's size splits over the ranks in whole
				// elements, as in collsim run; in a list, a size that
				// sends nothing is left out.
				rounding, err := collsim.Shortfall(c, p, bytes)
				switch {
				case err != nil && (many || len(sizes) > 1):
					o.skip(fmt.Sprintf("%s of %dB on %s: nothing would be sent (a multiple of %dB moves everything)", c, bytes, collsim.RankCount(size), 8*size))
					continue
				case err != nil:
					return nil, 0, cmdutil.Flagf("--sizes %dB: nothing would be sent: %s splits each rank's data evenly over %s in whole 8-byte elements; a multiple of %dB moves everything", bytes, c, collsim.RankCount(size), 8*size)
				}
				p.NodeSize, p.GroupSize = nodeSize, groupSize
				a, name := entry.algo, ""
				if entry.selector != "" {
					// The library's own choice at this size, and the
					// parameters it gives it (segments, parts).
					sel, err := collectives.Select(entry.selector, c, p)
					var nt *collectives.NotTranscribed
					if errors.As(err, &nt) && len(colls) > 1 {
						o.skip(fmt.Sprintf("%s's fixed rules for %s are not transcribed", nt.Library, nt.Collective))
						continue // a list runs what the library's rules cover
					}
					if err != nil {
						return nil, 0, &cmdutil.FlagError{Err: err}
					}
					a, p, name = sel.Algorithm, sel.Params, entry.selector+": "+sel.Algorithm.ID()
				}
				s, err := a.Build(p)
				var u *collectives.Unsupported
				switch {
				case errors.As(err, &u) && many:
					// A list runs what can run here, and says what it left out.
					o.skip(fmt.Sprintf("%s on %s: %v", a.ID(), collsim.RankCount(size), u))
					continue
				case errors.As(err, &u):
					// Ranks that do not fit: an error (exit 1), as in collsim run.
					return nil, 0, err
				case err != nil:
					return nil, 0, &cmdutil.FlagError{Err: err}
				}
				j := realrun.Job{Name: cmp.Or(name, a.ID()), Bytes: p.SizeBytes(c), Schedule: s}
				if slices.ContainsFunc(jobs, func(k realrun.Job) bool { return k.Name == j.Name && k.Bytes == j.Bytes }) {
					// Sizes that make the same call (a barrier's, blocks
					// that round to the same elements) run once; only a
					// rounded size says so (a barrier has no size).
					if rounding != "" {
						o.skip(fmt.Sprintf("%s of %dB on %s: the same call as the %dB it rounds to, run once", j.Name, bytes, collsim.RankCount(size), j.Bytes))
					}
					continue
				}
				if rounding != "" {
					o.note(rounding)
				}
				if o.verify {
					j.Data = func() ([][]uint64, error) { return a.RankData(p, o.seed, rank) }
					j.Verify = func(b [][]uint64) error { return a.VerifyRank(p, o.seed, rank, b) }
				}
				jobs = append(jobs, j)
			}
		}
	}
	if o.pairsAgain {
		// The same calls again, after the collectives: built anew, with
		// data of their own.
		again, err := pairJobs(o, size, rank)
		if err != nil {
			return nil, 0, err
		}
		jobs = append(jobs, again...)
	}
	if len(jobs) == 0 && len(o.skipped) > 0 {
		return nil, 0, cmdutil.Flagf("nothing to run: %s", strings.Join(o.skipped, "; "))
	}
	if len(jobs) == 0 {
		return nil, 0, cmdutil.Flagf("none of the algorithms asked for can run on %s", collsim.RankCount(size))
	}
	// The calls themselves, in order, rather than the flags as typed: ranks
	// started with -s 64KiB and -s 65536, or -c all and the list it means,
	// run the same job. The transport and --single-copy too: under auto
	// the ranks that share memory probe before the jobs, and ranks that
	// disagree would pair the probe's calls with another rank's jobs.
	spec := fmt.Sprintf("%d|%d|%t|%d|%d|%d|%d|%v|%v|%t", o.iterations, o.warmup, o.verify, o.seed, nodeSize, groupSize, o.peer, transport, singleCopy, o.interleave)
	for _, j := range jobs {
		spec += fmt.Sprintf("|%s:%d", j.Name, j.Bytes)
	}
	return jobs, realrun.JobHash(buildID(), spec), nil
}

// pairSizes parses the sizes of flag, a benchmark between rank 0 and
// peer (-1: the last of ranks), and returns them (none for "") and the
// peer.
func pairSizes(flag, sizes string, peer, ranks int) ([]int64, int, error) {
	if sizes == "" {
		return nil, peer, nil
	}
	ss, err := cmdutil.Sizes(sizes)
	if err != nil {
		return nil, peer, &cmdutil.FlagError{Err: fmt.Errorf("%s: %w", flag, err)}
	}
	if err := carried(flag, ss); err != nil {
		return nil, peer, err
	}
	for _, bytes := range ss {
		if bytes%8 != 0 {
			return nil, peer, wholeWords(flag, bytes)
		}
	}
	if peer < 0 {
		peer = ranks - 1
	}
	return ss, peer, nil
}

// pairJobs are the ping-pongs of --pingpong, then the exchanges of
// --exchange, for rank of a job of size ranks.
func pairJobs(o *options, size, rank int) ([]realrun.Job, error) {
	jobs, err := pingPongJobs(o.pingpong, o.peer, size, rank, o.verify, o.seed)
	if err != nil {
		return nil, err
	}
	exchanges, err := exchangeJobs(o.exchange, o.peer, size, rank, o.verify, o.seed)
	if err != nil {
		return nil, err
	}
	return append(jobs, exchanges...), nil
}

// pingPongJobs are the ping-pongs of --pingpong: rank 0 with peer (-1:
// the last rank) at each size.
func pingPongJobs(sizes string, peer, ranks, rank int, verify bool, seed uint64) ([]realrun.Job, error) {
	ss, peer, err := pairSizes("--pingpong", sizes, peer, ranks)
	if err != nil {
		return nil, err
	}
	var jobs []realrun.Job
	for _, bytes := range ss {
		s, err := collectives.PingPong(ranks, 0, peer, bytes, PairRounds(bytes))
		if err != nil {
			return nil, &cmdutil.FlagError{Err: fmt.Errorf("--pingpong: %w", err)}
		}
		j := realrun.Job{Name: s.Name, Bytes: bytes, Schedule: s}
		if verify {
			// Each iteration's echo is checked, as the collectives are.
			j.Data = func() ([][]uint64, error) {
				bufs, _ := collectives.PingPongData(0, peer, bytes, seed, rank)
				return bufs, nil
			}
			j.Verify = func(b [][]uint64) error {
				_, check := collectives.PingPongData(0, peer, bytes, seed, rank)
				return check(b)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// exchangeJobs are the exchanges of --exchange: rank 0 with peer (-1: the
// last rank) at each size, plain, then with reducing receives.
func exchangeJobs(sizes string, peer, ranks, rank int, verify bool, seed uint64) ([]realrun.Job, error) {
	ss, peer, err := pairSizes("--exchange", sizes, peer, ranks)
	if err != nil {
		return nil, err
	}
	var jobs []realrun.Job
	for _, bytes := range ss {
		for _, reduce := range []bool{false, true} {
			rounds := PairRounds(bytes)
			s, err := collectives.Exchange(ranks, 0, peer, bytes, rounds, reduce)
			if err != nil {
				return nil, &cmdutil.FlagError{Err: fmt.Errorf("--exchange: %w", err)}
			}
			j := realrun.Job{Name: s.Name, Bytes: bytes, Schedule: s}
			if verify {
				j.Data = func() ([][]uint64, error) {
					bufs, _ := collectives.ExchangeData(0, peer, bytes, rounds, reduce, seed, rank)
					return bufs, nil
				}
				j.Verify = func(b [][]uint64) error {
					_, check := collectives.ExchangeData(0, peer, bytes, rounds, reduce, seed, rank)
					return check(b)
				}
			}
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// printNotes tells w what buildJobs did to the calls asked for, and
// which it left out and why.
func printNotes(w io.Writer, o *options) {
	for _, what := range o.notes {
		fmt.Fprintf(w, "note: %s\n", what)
	}
	for _, why := range o.skipped {
		fmt.Fprintf(w, "note: skipped: %s\n", why)
	}
}

// wholeWords refuses size bytes of flag, not a multiple of 8.
func wholeWords(flag string, bytes int64) error {
	return cmdutil.Flagf("%s: size %dB is not a whole number of 8-byte words, which real runs move (each element a 64-bit word, checked): use a multiple of 8", flag, bytes)
}

// carried refuses sizes (of flag) larger than a real run's message.
func carried(flag string, sizes []int64) error {
	if big := slices.Max(sizes); big > realrun.MaxMessageBytes {
		return cmdutil.Flagf("%s: %s is more than a real run carries in one message, %s", flag, configs.FormatBytes(big), configs.FormatBytes(realrun.MaxMessageBytes))
	}
	return nil
}

// PairRounds is how many rounds one timed ping-pong or exchange call
// makes: enough that small messages take far longer than the barrier
// before the call and the clock's resolution, and one above 32 KiB, as a
// collective's step moves its message once. (Validate fits a band of its
// channel to the ping-pong and the exchange at each size: with 2 rounds
// at 512 KiB, the second ran in warm caches.)
func PairRounds(bytes int64) int { return int(min(100, max(1, (64<<10)/max(bytes, 1)))) }

// IsPingPong reports whether a summary is of a ping-pong call.
func IsPingPong(s realrun.Summary) bool { return strings.HasPrefix(s.Name, "pingpong/") }

// IsExchange reports whether a summary is of an exchange call, and
// whether its receives reduce.
func IsExchange(s realrun.Summary) (ok, reduces bool) {
	switch {
	case strings.HasPrefix(s.Name, "exchange/"):
		return true, false
	case strings.HasPrefix(s.Name, "exchange-reduce/"):
		return true, true
	}
	return false, false
}

// IsPair reports whether a summary is of a benchmark between two ranks
// (a ping-pong or an exchange), not of a collective.
func IsPair(s realrun.Summary) bool {
	ex, _ := IsExchange(s)
	return ex || IsPingPong(s)
}

// perRound turns the times of an exchange call into the time of one
// round: one message each way, at once.
func perRound(s realrun.Summary) realrun.Summary {
	return divideTimes(s, time.Duration(PairRounds(s.Bytes)))
}

// divideTimes divides every time of s by n.
func divideTimes(s realrun.Summary, n time.Duration) realrun.Summary {
	s.Avg, s.Min, s.Max, s.Median = s.Avg/n, s.Min/n, s.Max/n, s.Median/n
	s.Slowest = slices.Clone(s.Slowest)
	for i := range s.Slowest {
		s.Slowest[i] /= n
	}
	return s
}

// OneWay turns the times of a ping-pong call into the one-way time of one
// message, as osu_latency reports it.
func OneWay(s realrun.Summary) realrun.Summary {
	return divideTimes(s, time.Duration(2*PairRounds(s.Bytes)))
}

// Summaries combines the ranks' reports call by call (realrun.Summarize),
// except that ping-pongs are rank 0's own times, one way, as osu_latency
// reports them (the other ranks idle or only answer), and exchanges the
// times of the slower of their two ranks in each iteration, a round (the
// other ranks idle): as a collective's, the time of the last rank to
// finish, which a simulation's makespan predicts. (Rank 0's own times
// left out the iterations its peer started late in, and made exchanges
// look faster than the collectives made of them.)
func Summaries(reports []realrun.Report) []realrun.Summary {
	sums := realrun.Summarize(reports)
	first := realrun.Summarize(reports[:min(1, len(reports))])
	byPair := map[string][]realrun.Summary{} // each pair's two ranks, summarized once
	for i, s := range sums {
		if IsPingPong(s) {
			sums[i] = OneWay(first[i])
		}
		if ex, _ := IsExchange(s); ex {
			_, pair, _ := strings.Cut(s.Name, "/")
			if byPair[pair] == nil {
				byPair[pair] = realrun.Summarize(pairReports(reports, pair))
			}
			sums[i] = perRound(byPair[pair][i])
		}
	}
	return sums
}

// pairReports are the reports of the two ranks pair ("0-3", a pair
// call's name after its "exchange/") names, or all of them if it names
// none.
func pairReports(reports []realrun.Report, pair string) []realrun.Report {
	as, bs, _ := strings.Cut(pair, "-")
	a, errA := strconv.Atoi(as)
	b, errB := strconv.Atoi(bs)
	if errA != nil || errB != nil {
		return reports
	}
	var out []realrun.Report
	for _, r := range reports {
		if r.Rank == a || r.Rank == b {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return reports
	}
	return out
}

// SummariesOfIterations is Summaries over the timed iterations lo to
// hi-1 of every call only: in a run with --interleave, the rounds lo to
// hi-1, a stretch of the run's time.
func SummariesOfIterations(reports []realrun.Report, lo, hi int) []realrun.Summary {
	part := make([]realrun.Report, len(reports))
	for i, rep := range reports {
		part[i] = rep
		part[i].Results = make([]realrun.Result, len(rep.Results))
		for k, res := range rep.Results {
			times := res.Times[min(lo, len(res.Times)):min(hi, len(res.Times))]
			var sum time.Duration
			for _, t := range times {
				sum += t
			}
			res.Times, res.Iterations = times, len(times)
			res.Avg, res.Min, res.Max = 0, 0, 0
			if len(times) > 0 {
				res.Avg, res.Min, res.Max = sum/time.Duration(len(times)), slices.Min(times), slices.Max(times)
			}
			part[i].Results[k] = res
		}
	}
	return Summaries(part)
}

// BetaText is a fit's beta with its error, or, when beta comes from the one
// slope of two large sizes, says so rather than print NaN.
func BetaText(fit cost.HockneyFit) string {
	if math.IsNaN(fit.BetaErr) {
		return fmt.Sprintf("%.4g s/B (one slope, between the two sizes large enough: no spread to give an error; more sizes of several MiB give one)", fit.Model.Beta)
	}
	return fmt.Sprintf("%.4g s/B ± %.2g", fit.Model.Beta, fit.BetaErr)
}

// AlphaText is a fit's alpha with its error, or, when alpha comes from a
// single latency-bound size, says so rather than claim a zero error.
func AlphaText(fit cost.HockneyFit) string {
	if fit.AlphaSizes == 1 {
		return cmdutil.Seconds(fit.Model.Alpha) + " (from one latency-bound size: no spread to give an error)"
	}
	return cmdutil.Seconds(fit.Model.Alpha) + " ± " + cmdutil.Seconds(fit.AlphaErr)
}

// FitPingPong fits alpha and beta to the one-way median times of the
// ping-pong calls among sums (as Summaries gives them): the first of each
// size (--pairs-again times them again after the collectives).
func FitPingPong(sums []realrun.Summary) (cost.HockneyFit, error) {
	var samples []cost.Sample
	seen := map[int64]bool{}
	for _, s := range sums {
		if IsPingPong(s) && !seen[s.Bytes] {
			seen[s.Bytes] = true
			samples = append(samples, cost.Sample{Bytes: float64(s.Bytes), Seconds: s.Median.Seconds()})
		}
	}
	return cost.FitHockneyRobust(samples)
}

// PairsAgain splits sums of a run with --pairs-again: the ping-pongs and
// exchanges timed before the collectives, and those timed after them (the
// last as many summaries); ok is false when sums do not have them twice.
func PairsAgain(sums []realrun.Summary) (before, after []realrun.Summary, ok bool) {
	k := 0
	for k < len(sums) && IsPair(sums[k]) {
		k++
	}
	if k == 0 || 2*k >= len(sums) {
		return nil, nil, false
	}
	before, after = sums[:k], sums[len(sums)-k:]
	for i := range before {
		if before[i].Name != after[i].Name || before[i].Bytes != after[i].Bytes {
			return nil, nil, false
		}
	}
	return before, after, true
}

// algoEntry is one name of -a: an algorithm, or a library whose choice
// is made per size (Select).
type algoEntry struct {
	algo     collectives.Algorithm
	selector string
}

// algorithmsOf parses -a for collective c: "" for c's default, "all", or a
// comma-separated list (names that c does not have are skipped when
// several collectives run, so that "-c all -a ring" runs every ring).
func algorithmsOf(c collectives.Collective, spec string) ([]algoEntry, error) {
	var out []algoEntry
	switch spec {
	case "":
		a, err := collectives.Lookup(c, collectives.DefaultAlgorithm(c))
		return []algoEntry{{algo: a}}, err
	case "all":
		for _, a := range collectives.All() {
			if a.Collective == c {
				out = append(out, algoEntry{algo: a})
			}
		}
		return out, nil
	}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if collectives.IsSelector(name) {
			out = append(out, algoEntry{selector: name})
			continue
		}
		a, err := collectives.Lookup(c, name)
		if err != nil {
			// As run says it (real's list left the selectors out; a new
			// user's trial).
			return nil, &cmdutil.FlagError{Err: fmt.Errorf("%w (or a library's choice: %s)", err, strings.Join(collectives.Selectors, ", "))}
		}
		out = append(out, algoEntry{algo: a})
	}
	return out, nil
}

var buildIDOnce = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(exe)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil))
})

// buildID identifies this collsim binary, so that ranks running different
// builds refuse each other.
func buildID() string { return buildIDOnce() }

// clusterRendezvous sets up the rendezvous of a cluster run: rank 0 listens
// (on --rendezvous, or on a free port whose address it writes to
// --rendezvous-file) and serves; the others find its address. It returns
// the job's secret: the one given (secret), else, through the rendezvous
// file, one rank 0 makes.
func clusterRendezvous(ctx context.Context, o *options, rank, size int, hash uint64, secret realrun.Secret) (string, func() ([]realrun.Report, error), realrun.Secret, error) {
	switch {
	case o.rendezvous == "" && o.rendezvousAt == "":
		return "", nil, nil, cmdutil.Flagf("rank %d of %d: give --rendezvous host:port (rank 0's host and a free port) or --rendezvous-file on a filesystem every rank sees", rank, size)
	case secret == nil && o.rendezvousAt == "":
		return "", nil, nil, cmdutil.Flagf("rank %d of %d: a run that meets at --rendezvous needs the job's secret, the same on every rank, so that no other program can join it: export %s=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n') before srun (which passes it on; mpirun needs -x %s), or give --secret-file, or meet through --rendezvous-file, which carries a secret of its own", rank, size, secretEnv, secretEnv)
	case rank != 0 && o.rendezvous != "":
		return o.rendezvous, nil, secret, nil
	case rank != 0:
		addr, fileSecret, err := readRendezvousFile(ctx, o.rendezvousAt, fileKey(hash, os.Getenv), realrun.SetupTimeout(o.timeout))
		switch {
		case err != nil:
			return "", nil, nil, err
		case secret == nil && fileSecret == nil:
			return "", nil, nil, fmt.Errorf("rank %d: rank 0 was given the job's secret and this rank was not: give every rank the same $%s or --secret-file", rank, secretEnv)
		case secret == nil:
			secret = fileSecret
		}
		return addr, nil, secret, nil
	}
	own := secret == nil
	if own {
		var err error
		if secret, err = realrun.NewSecret(); err != nil {
			return "", nil, nil, err
		}
	}
	listen := o.rendezvous
	if listen == "" {
		ip := o.bind
		if ip == "" {
			host, _ := os.Hostname()
			ips, err := net.LookupHost(host)
			if err != nil || len(ips) == 0 {
				return "", nil, nil, fmt.Errorf("rank 0: cannot find this host's address (%v); give --bind", err)
			}
			ip = ips[0]
		}
		listen = net.JoinHostPort(ip, "0")
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", nil, nil, fmt.Errorf("rank 0: cannot listen for the rendezvous on %s: %w (is the port in use?)", listen, err)
	}
	addr := ln.Addr().String()
	if o.rendezvousAt != "" {
		var passOn realrun.Secret
		if own {
			passOn = secret
		}
		if err := writeRendezvousFile(o.rendezvousAt, addr, fileKey(hash, os.Getenv), passOn); err != nil {
			ln.Close()
			return "", nil, nil, err
		}
	}
	written := o.rendezvousAt // the file rank 0 wrote, to remove after
	serve := func() ([]realrun.Report, error) {
		defer ln.Close()
		if written != "" {
			defer removeRendezvousFile(written, addr)
		}
		return realrun.Serve(ctx, ln, size, realrun.SetupTimeout(o.timeout), secret, hash)
	}
	return addr, serve, secret, nil
}

// fileKey is what a rendezvous file is written for: the job's hash, and
// the launch that started the ranks (Slurm's job and step, Open MPI's or
// PMIx's job), which every rank of one launch shares: a file left by a
// killed run, or written by another job of the same command at the same
// path, is not taken for this one's.
func fileKey(hash uint64, getenv func(string) string) uint64 {
	var launch []string
	for _, v := range []string{"SLURM_JOB_ID", "SLURM_STEP_ID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"} {
		launch = append(launch, v+"="+getenv(v))
	}
	return realrun.JobHash(append([]string{fmt.Sprintf("%016x", hash)}, launch...)...)
}

// The rendezvous file holds "ADDRESS KEY [SECRET]" (KEY: fileKey): a file
// left by an earlier run, or another launch's, is not taken for this one's. The secret
// is there when rank 0 made it, so the file is only ever the user's own
// (mode 600), and ranks refuse one that is not.
func writeRendezvousFile(path, addr string, hash uint64, secret realrun.Secret) error {
	if cmdutil.NotRegular(path) {
		return fmt.Errorf("rank 0: the rendezvous file %s is not a regular file; name a file", path)
	}
	if b, err := os.ReadFile(path); err == nil && !isRendezvous(b) {
		// A file of the user's own at that path (a typo, or the wrong
		// variable) was replaced, then removed after the run (a new
		// user's trial): only a rendezvous file is written over.
		return fmt.Errorf("rank 0: %s exists and is not a rendezvous file collsim wrote; name a file that does not exist (rank 0 writes it and removes it after the run)", path)
	}
	line := fmt.Sprintf("%s %016x", addr, hash)
	if secret != nil {
		line += " " + secret.String()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp") // mode 600
	if err == nil {
		_, err = fmt.Fprintln(tmp, line)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		return fmt.Errorf("rank 0: writing the rendezvous file: %w", err)
	}
	return nil
}

// isRendezvous reports whether b is what writeRendezvousFile writes:
// "HOST:PORT KEY [SECRET]", KEY 16 hexadecimal digits.
func isRendezvous(b []byte) bool {
	f := strings.Fields(string(b))
	if len(f) != 2 && len(f) != 3 || len(f[1]) != 16 || strings.Trim(f[1], "0123456789abcdef") != "" {
		return false
	}
	_, _, err := net.SplitHostPort(f[0])
	return err == nil
}

// removeRendezvousFile removes the rendezvous file at path where it still
// holds rank 0's address addr: never a file another run or the user has
// put there since.
func removeRendezvousFile(path, addr string) {
	if b, err := os.ReadFile(path); err == nil && isRendezvous(b) && strings.Fields(string(b))[0] == addr {
		os.Remove(path)
	}
}

func readRendezvousFile(ctx context.Context, path string, hash uint64, timeout time.Duration) (string, realrun.Secret, error) {
	deadline := time.Now().Add(timeout)
	want := fmt.Sprintf("%016x", hash)
	var last error
	other := false // the file holds another job's address
	for {
		b, err := readPrivateFile(path, "the rendezvous file")
		if err == nil {
			f := strings.Fields(string(b))
			switch {
			case len(f) == 2 && f[1] == want:
				return f[0], nil, nil
			case len(f) == 3 && f[1] == want:
				secret, err := realrun.ParseSecret(f[2], "the rendezvous file's secret")
				return f[0], secret, err
			}
			// An address for another key; once seen, it stays the
			// likely reason, even after rank 0, timing out first, has
			// removed its file (the message blamed a missing rank 0: a
			// new user's trial).
			other = other || len(f) == 2 || len(f) == 3
		} else if !errors.Is(err, os.ErrNotExist) {
			last = err
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("rank 0 did not write its rendezvous address to %s within %v (is the file on a filesystem every rank sees, and did rank 0 start?)", path, timeout)
			if other {
				msg = fmt.Sprintf("the rendezvous file %s is another job's: rank 0 runs with other options than this rank (every rank must be given the same), or the file is left from an earlier launch and rank 0 did not write it anew within %v", path, timeout)
			}
			if last != nil {
				msg += "; the file there: " + last.Error()
			}
			return "", nil, errors.New(msg)
		}
		select {
		case <-ctx.Done():
			return "", nil, context.Cause(ctx)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// parseFault reads --inject-fault's KIND@RANK; ok is false for anything
// else (the empty spec too).
func parseFault(spec string) (kind string, rank int, ok bool) {
	kind, at, found := strings.Cut(spec, "@")
	rank, err := strconv.Atoi(at)
	ok = found && err == nil && rank >= 0 && slices.Contains([]string{"crash", "killed", "stall", "garbage"}, kind)
	return kind, rank, ok
}

// faultHook returns the fault injection of --inject-fault for this rank.
func faultHook(spec string, rank int) func(int, *realrun.Mesh) {
	kind, target, ok := parseFault(spec)
	if !ok || target != rank {
		return nil
	}
	return func(call int, m *realrun.Mesh) {
		if call != 2 {
			return
		}
		switch kind {
		case "crash":
			fmt.Fprintf(os.Stderr, "rank %d: crashing (injected fault)\n", rank)
			os.Exit(7)
		case "killed": // as the kernel's out-of-memory killer ends a process
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		case "stall":
			fmt.Fprintf(os.Stderr, "rank %d: stalling (injected fault)\n", rank)
			select {}
		case "garbage":
			fmt.Fprintf(os.Stderr, "rank %d: sending garbage (injected fault)\n", rank)
			m.Corrupt()
		}
	}
}

// pingPongFit is real --json's fit of the ping-pongs (FitPingPong), or
// why there is none.
type pingPongFit struct {
	Alpha          float64 `json:"alpha_s,omitempty"`
	AlphaErr       float64 `json:"alpha_stderr_s,omitempty"`
	Beta           float64 `json:"beta_s_per_byte,omitempty"`
	BetaErr        float64 `json:"beta_stderr_s_per_byte,omitempty"`
	MaxRelResidual float64 `json:"max_rel_residual,omitempty"`
	Error          string  `json:"error,omitempty"`
}

// finite is x, or 0 when it is NaN or infinite (which JSON cannot hold).
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// report prints the summary of every call (and writes the timeline).
func report(w io.Writer, o *options, size int, reports []realrun.Report) error {
	if o.timeline != "" {
		if err := writeTimeline(o.timeline, reports); err != nil {
			return err
		}
	}
	sums := Summaries(reports)
	fit, fitErr := FitPingPong(sums)
	// With --pairs-again the pairs' rows come twice, by the same names:
	// the last ones were timed after the collectives, and say so (they
	// could not be told apart: a new user's trial).
	again := len(sums)
	if _, after, ok := PairsAgain(sums); ok && o.pairsAgain {
		again = len(sums) - len(after)
	}
	if o.json {
		type row struct {
			realrun.Summary
			Ranks   int     `json:"ranks"`
			AlgBW   float64 `json:"algbw_GBps"`
			BusBW   float64 `json:"busbw_GBps"`
			AvgSecs float64 `json:"avg_s"`
			// AfterCollectives: a pair's call timed again after the
			// collectives (--pairs-again).
			AfterCollectives bool `json:"after_collectives,omitempty"`
		}
		out := struct {
			Collective string   `json:"collective"`
			Ranks      int      `json:"ranks"`
			Hosts      []string `json:"hosts"`
			// CPUs each rank may run on (one each when bound).
			CPUs      []string `json:"cpus"`
			Transport string   `json:"transport"`
			// SharedPairs of the Pairs of ranks talked through shared
			// memory, the others over TCP.
			SharedPairs int `json:"shared_pairs"`
			Pairs       int `json:"pairs"`
			// In SingleCopyWays of the 2*SharedPairs ordered pairs
			// (reader, sender), messages above the --single-copy limit
			// went straight out of the sender's memory; SingleCopies
			// messages did, over the run (warm-up included).
			SingleCopyWays int   `json:"single_copy_ways"`
			SingleCopies   int64 `json:"single_copies"`
			// Oversubscribed: some machine had more of the run's ranks
			// than the cores they may run on (its ranks yielded their
			// cores between looks, and under --single-copy ring copied
			// no message once).
			Oversubscribed bool `json:"oversubscribed"`
			// SingleCopyProbes are what each rank measured before the
			// run under --single-copy auto (null: it did not probe).
			SingleCopyProbes []*realrun.Probe `json:"single_copy_probes"`
			// Iterations timed after Warmup untimed ones, each call's one
			// after another, or in rounds of every call when Interleaved.
			Iterations  int   `json:"iterations"`
			Warmup      int   `json:"warmup"`
			Interleaved bool  `json:"interleaved"`
			Results     []row `json:"results"`
			// PingPongFit is the text's fit of the ping-pongs' one-way
			// times (with --pingpong; it was left out of the JSON).
			PingPongFit *pingPongFit `json:"pingpong_fit,omitempty"`
		}{Collective: o.collective, Ranks: size, Transport: o.transport, SharedPairs: sharedPairs(reports), Pairs: size * (size - 1) / 2,
			Iterations: o.iterations, Warmup: o.warmup, Interleaved: o.interleave,
			SingleCopyWays: singleCopyWays(reports), SingleCopies: singleCopyCount(reports), Oversubscribed: oversubscribed(reports)}
		for _, r := range reports {
			out.Hosts = append(out.Hosts, r.Host)
			out.CPUs = append(out.CPUs, r.CPUs)
			out.SingleCopyProbes = append(out.SingleCopyProbes, r.SingleCopyProbe)
		}
		for i, s := range sums {
			alg := bandwidth(s.Bytes, s.Avg)
			out.Results = append(out.Results, row{Summary: s, Ranks: size, AlgBW: alg, BusBW: alg * busFactor(s.Name, size), AvgSecs: s.Avg.Seconds(), AfterCollectives: i >= again})
		}
		if o.pingpong != "" {
			out.PingPongFit = &pingPongFit{}
			if fitErr != nil {
				out.PingPongFit.Error = fitErr.Error()
			} else {
				out.PingPongFit.Alpha, out.PingPongFit.Beta = fit.Model.Alpha, fit.Model.Beta
				// An error that cannot be known (NaN: no spread) is left out.
				out.PingPongFit.AlphaErr, out.PingPongFit.BetaErr = finite(fit.AlphaErr), finite(fit.BetaErr)
				out.PingPongFit.MaxRelResidual = fit.MaxRelResidual
			}
		}
		return cmdutil.JSON(w, out)
	}
	// (It read "1 timed iterations"; a new user's trial.)
	timed := fmt.Sprintf("%s after %d warm-up", cmdutil.Count(o.iterations, "timed iteration", "timed iterations"), o.warmup)
	if o.interleave {
		timed = fmt.Sprintf("%s of every call, one iteration each, after %d warm-up", cmdutil.Count(o.iterations, "timed round", "timed rounds"), o.warmup)
	}
	fmt.Fprintf(w, "real %s on %s (%s; times: average over ranks of each rank's average, and the least and greatest of them)\n", o.collective, collsim.RankCount(size), timed)
	fmt.Fprintf(w, "channels: %s%s\n", channels(o.transport, sharedPairs(reports), size*(size-1)/2), singleCopies(o.singleCopy, sharedPairs(reports), singleCopyWays(reports), singleCopyCount(reports), oversubscribed(reports), probed(reports), o.verify, movesData(sums), chosenLimits(reports)))
	rows := [][]string{{"algorithm", "size", "avg", "min", "max", "algbw", "busbw", "data"}}
	for i, s := range sums {
		alg := bandwidth(s.Bytes, s.Avg)
		data := "checked"
		if !s.Verified {
			data = "off"
		}
		name := s.Name
		if i >= again {
			name += " (again, after)"
		}
		rows = append(rows, []string{name, fmt.Sprintf("%dB", s.Bytes), cmdutil.Seconds(s.Avg.Seconds()), cmdutil.Seconds(s.Min.Seconds()), cmdutil.Seconds(s.Max.Seconds()),
			fmt.Sprintf("%.3f GB/s", alg), fmt.Sprintf("%.3f GB/s", alg*busFactor(s.Name, size)), data})
	}
	if err := cmdutil.Table(w, rows); err != nil {
		return err
	}
	if o.pingpong != "" {
		if fitErr != nil {
			fmt.Fprintf(w, "ping-pong fit: %v\n", fitErr)
		} else {
			fmt.Fprintf(w, "ping-pong times (one way, as osu_latency) fit alpha = %s, beta = %s (%s), worst residual %.1f%%\n",
				AlphaText(fit), BetaText(fit), configs.FormatBandwidth(1/fit.Model.Beta), 100*fit.MaxRelResidual)
		}
	}
	return nil
}

// sharedPairs is how many pairs of ranks talked through shared memory.
func sharedPairs(reports []realrun.Report) int {
	n := 0
	for _, r := range reports {
		n += r.SharedPeers
	}
	return n / 2
}

// singleCopyWays is how many ordered pairs of ranks (reader, sender) sent
// messages above the single-copy limit straight out of the sender's memory.
func singleCopyWays(reports []realrun.Report) int {
	n := 0
	for _, r := range reports {
		n += r.SingleCopyPeers
	}
	return n
}

// singleCopyCount is how many messages ranks copied straight out of their
// peers' memory.
func singleCopyCount(reports []realrun.Report) int64 {
	var n int64
	for _, r := range reports {
		n += r.SingleCopies
	}
	return n
}

// oversubscribed reports whether some rank's machine had more of the run's
// ranks than the cores they may run on.
func oversubscribed(reports []realrun.Report) bool {
	for _, r := range reports {
		if r.Oversubscribed {
			return true
		}
	}
	return false
}

// singleCopies says how shared-memory pairs moved large messages under
// --single-copy limit: in ways of the 2*shared directions those messages
// go straight out of the sender's memory, and copies of them did; over,
// some machine had more ranks than cores; probe is what the ranks' probes
// measured under auto, and chosen which messages they chose to copy once;
// verify, the calls carry data; moves, some call moves some.
func singleCopies(limit string, shared, ways int, copies int64, over bool, probe string, verify, moves bool, chosen string) string {
	which := "messages too large for a ring"
	switch {
	case limit == "auto" && chosen != "":
		which = chosen
	case limit != "ring" && limit != "auto":
		which = "messages above " + limit
		if n, err := configs.ParseSize(limit); err == nil {
			which = "messages above " + configs.FormatBytes(n) // 8 read as a count ("above 8"; a new user's trial)
			if n < 8 {
				which = "all messages with data" // of whole 8-byte elements
			}
		}
	}
	did := fmt.Sprintf("%d copied so", copies)
	if copies == 0 {
		did = "none this run: no message was that large"
	}
	rings := limit == "ring" || limit == "auto"
	switch {
	case shared == 0:
		return ""
	case limit == "off":
		return "; every message through the rings (--single-copy off; --single-copy 4KiB copies as Open MPI's vader does)"
	case !verify:
		return "; every message through the rings (the calls carry no data under --verify=false, and only data is copied once)"
	case ways == 0 && !moves:
		return "; every message through the rings (no call moves data: nothing to copy once)"
	case ways == 0 && rings && over:
		return "; every message through the rings (more ranks than cores on a machine: faster there than single copies; --single-copy 1MiB copies those above 1 MiB once)"
	case ways == 0 && probe != "":
		return "; every message through the rings, the faster way: " + probe
	case ways == 0:
		return "; every message through the rings (the ranks may not read each other's memory)"
	case ways == 2*shared:
		return fmt.Sprintf("; %s go straight between the ranks' memories, copied once (%s)%s", which, did, prefixed(", the faster way: ", probe))
	}
	return fmt.Sprintf("; %s go straight between the ranks' memories in %d of the %d directions, through the rings in the others (%s)%s", which, ways, 2*shared, did, prefixed(": ", probe))
}

// movesData reports whether some call of sums moves data (a barrier's
// size is 0).
func movesData(sums []realrun.Summary) bool {
	return slices.ContainsFunc(sums, func(s realrun.Summary) bool { return s.Bytes > 0 })
}

// prefixed is s after prefix, or nothing if s is empty.
func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// probed says what the ranks' single-copy probes measured: the range of
// their medians each way at each size, or "" if none probed.
func probed(reports []realrun.Report) string {
	var rings, single, midRings, midSingle []time.Duration
	for _, r := range reports {
		if p := r.SingleCopyProbe; p != nil {
			rings, single = append(rings, p.Rings), append(single, p.Single)
			midRings, midSingle = append(midRings, p.MidRings), append(midSingle, p.MidSingle)
		}
	}
	if len(rings) == 0 {
		return ""
	}
	span := func(ds []time.Duration) string {
		lo, hi := slices.Min(ds), slices.Max(ds)
		if lo == hi {
			return cmdutil.Seconds(lo.Seconds())
		}
		return cmdutil.Seconds(lo.Seconds()) + "-" + cmdutil.Seconds(hi.Seconds())
	}
	return fmt.Sprintf("the ranks' exchanges before the run took, through the rings and copied once, %s and %s at 2 MiB, %s and %s at 128 KiB (--single-copy auto)",
		span(rings), span(single), span(midRings), span(midSingle))
}

// chosenLimits says which messages the ranks' probes chose to copy once,
// or "" if none chose any.
func chosenLimits(reports []realrun.Report) string {
	var above []int64
	for _, r := range reports {
		if p := r.SingleCopyProbe; p != nil && p.Chose && !slices.Contains(above, p.Above) {
			above = append(above, p.Above)
		}
	}
	slices.Sort(above)
	var says []string
	for _, a := range above {
		if a == realrun.SingleCopyMidAbove {
			says = append(says, "messages above "+configs.FormatBytes(a))
		} else {
			says = append(says, "messages too large for a ring")
		}
	}
	if len(says) > 1 {
		return strings.Join(says, " or ") + ", as each rank chose,"
	}
	return strings.Join(says, "")
}

// channels says how the pairs of ranks talked.
func channels(transport string, shared, pairs int) string {
	switch {
	case pairs == 0:
		return "none (one rank)"
	case shared == pairs && pairs == 1:
		return "shared memory between the two ranks"
	case shared == pairs:
		return fmt.Sprintf("shared memory between all %d pairs of ranks", pairs)
	case shared > 0:
		return fmt.Sprintf("shared memory between %d of %d pairs of ranks (those on one host), TCP between the others", shared, pairs)
	case transport == realrun.TCP.String():
		return "TCP between every pair of ranks (--transport tcp)"
	}
	return "TCP between every pair of ranks (none share a host: separate hosts or network namespaces)"
}

// busFactor is the bus bandwidth factor of the collective a job (named
// "collective/algorithm") runs.
func busFactor(job string, ranks int) float64 {
	if _, chosen, ok := strings.Cut(job, ": "); ok {
		job = chosen // a library's choice: "ompi: alltoall/linear"
	}
	c, _, _ := strings.Cut(job, "/")
	return collectives.BusFactor(collectives.Collective(c), ranks)
}

// bandwidth is nccl-tests' algorithm bandwidth in GB/s.
func bandwidth(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds() / 1e9
}

// writeTimeline writes the ranks' op spans as a Chrome trace: one process
// per rank, one thread per call, times in microseconds from the first op.
func writeTimeline(path string, reports []realrun.Report) error {
	if svgTimeline(path) {
		return drawTimeline(path, reports)
	}
	type event struct {
		Name string         `json:"name"`
		Ph   string         `json:"ph"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		Args map[string]any `json:"args,omitempty"`
	}
	t0 := int64(math.MaxInt64)
	for _, rep := range reports {
		for _, res := range rep.Results {
			for _, sp := range res.Timeline {
				t0 = min(t0, sp.Start)
			}
		}
	}
	var events []event
	for _, rep := range reports {
		events = append(events, event{Name: "process_name", Ph: "M", Pid: rep.Rank, Args: map[string]any{"name": fmt.Sprintf("rank %d (%s)", rep.Rank, rep.Host)}})
		for call, res := range rep.Results {
			// Every rank's track named (rank 0's only were: a new user's
			// trial).
			events = append(events, event{Name: "thread_name", Ph: "M", Pid: rep.Rank, Tid: call, Args: map[string]any{"name": fmt.Sprintf("%s %s", res.Name, configs.FormatBytes(res.Bytes))}})
			for _, sp := range res.Timeline {
				events = append(events, event{Name: sp.Op, Ph: "X", Ts: float64(sp.Start-t0) / 1e3, Dur: float64(sp.End-sp.Start) / 1e3,
					Pid: rep.Rank, Tid: call, Args: map[string]any{"call": res.Name, "op": sp.Index}})
			}
		}
	}
	b, err := json.Marshal(map[string]any{"traceEvents": events, "displayTimeUnit": "ms"})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// svgTimeline reports whether a --timeline file is to be drawn as an SVG
// Gantt chart, as collsim run draws one, rather than written as a Chrome
// trace (a name ending in .svg got the trace's JSON: a new user's trial).
func svgTimeline(path string) bool { return strings.EqualFold(filepath.Ext(path), ".svg") }

// drawTimeline draws every op of each call's last iteration, on every
// rank, as collsim run --timeline draws a simulated run, on the ranks'
// wall clocks from the first op's start.
func drawTimeline(path string, reports []realrun.Report) error {
	rec := trace.NewRecorder()
	rec.Clock = "wall time (each call's last iteration)"
	t0 := int64(math.MaxInt64)
	var calls []string
	for _, rep := range reports {
		for call, res := range rep.Results {
			if call == len(calls) {
				calls = append(calls, fmt.Sprintf("%s %s", res.Name, configs.FormatBytes(res.Bytes)))
			}
			for _, sp := range res.Timeline {
				t0 = min(t0, sp.Start)
			}
		}
	}
	for _, rep := range reports {
		for _, res := range rep.Results {
			for _, sp := range res.Timeline {
				rec.Spans = append(rec.Spans, trace.Span{Rank: int32(rep.Rank), Kind: sp.Kind, Peer: sp.Peer, Tag: sp.Tag, Bytes: sp.Bytes,
					Start: sim.Time(sp.Start-t0) * sim.Nanosecond, End: sim.Time(sp.End-t0) * sim.Nanosecond})
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rec.WriteSVG(f, len(reports), "real "+strings.Join(calls, ", ")+" on "+collsim.RankCount(len(reports))); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// peerSignalGrace is how long a rank whose peer stopped the run waits for
// a signal of its own before it exits as a failure.
const peerSignalGrace = time.Second

// peerInterrupted reports whether err is this rank stopped by a peer that
// a signal stopped: this rank's own signal is then on its way. A peer
// that crashed or failed gives none to wait for (a rank waited a second
// for one: an audit).
func peerInterrupted(err error) bool {
	reason, ok := realrun.PeerReason(err)
	return ok && cmdutil.SaysInterrupted(reason)
}

// awaitSignal waits up to grace for the signal that ctx (a SignalContext)
// catches, and returns it, or nil. A launcher stops a job by signalling
// every rank (mpirun on Ctrl-C, srun on scancel), one after another: a
// rank can hear first from a peer that its own signal stopped, and it
// would then exit 1 where its signal, a moment later, says 130 or 143.
func awaitSignal(ctx context.Context, caught func() os.Signal, grace time.Duration) os.Signal {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return caught()
}
