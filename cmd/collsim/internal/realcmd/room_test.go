package realcmd

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

// fakeProc serves /proc files from a map; others do not exist.
func fakeProc(files map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
}

// --np is refused where its ranks' threads (np + 8 each) would pass the
// kernel's room: on this machine's limits (pid_max 32,768 below
// threads-max, 135 threads running) 176 ranks need 176 x 184 = 32,384 of
// the 32,633 left and run, 177 need 177 x 185 = 32,745 and do not (by
// hand). Where /proc cannot be read, nothing is refused.
func TestThreadRoom(t *testing.T) {
	proc := fakeProc(map[string]string{
		"/proc/sys/kernel/threads-max": "190000\n",
		"/proc/sys/kernel/pid_max":     "32768\n",
		"/proc/loadavg":                "1.53 2.09 1.97 3/135 13200\n",
	})
	if err := threadRoom(176, proc); err != nil {
		t.Errorf("176 ranks: %v", err)
	}
	err := threadRoom(200, proc)
	// Exit 1, as ranks that do not fit a machine (not a usage error).
	if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitError || !strings.Contains(err.Error(), "200 ranks need about 41600 threads") || !strings.Contains(err.Error(), "lets 32633 more run") || !strings.Contains(err.Error(), "give --np 176 or fewer") {
		t.Errorf("200 ranks: %v", err)
	}
	if err := threadRoom(177, proc); err == nil {
		t.Errorf("177 ranks need 32745 threads of 32633, and were let run")
	}
	if err := threadRoom(256, fakeProc(nil)); err != nil {
		t.Errorf("without /proc: %v", err)
	}
}

// A launch is refused where its ranks' buffers, held twice, pass the
// memory available: 4 ranks of one 8 MiB buffer each hold 64 MiB; with
// --interleave two such jobs hold 128 MiB (by hand). Jobs without data
// hold none.
func TestMemoryRoom(t *testing.T) {
	job := func(name string, withData bool) realrun.Job {
		j := realrun.Job{Name: name, Schedule: sim.Schedule{Buffers: func(int) []int64 { return []int64{1 << 20} }}}
		if withData {
			j.Data = func() ([][]uint64, error) { return nil, nil }
		}
		return j
	}
	avail := func(mib int) func(string) ([]byte, error) {
		return fakeProc(map[string]string{"/proc/meminfo": "MemTotal: 99999999 kB\nMemAvailable: " + strconv.Itoa(mib<<10) + " kB\n"})
	}
	two := []realrun.Job{job("a", true), job("b", true)}
	for _, c := range []struct {
		jobs       []realrun.Job
		interleave bool
		mib        int
		refused    bool
	}{
		{two[:1], false, 63, true},
		{two[:1], false, 64, false},
		{two, false, 64, false},
		{two, true, 127, true},
		{two, true, 128, false},
		{[]realrun.Job{job("nodata", false)}, false, 1, false},
	} {
		err := memoryRoom(c.jobs, 4, c.interleave, avail(c.mib))
		if (err != nil) != c.refused {
			t.Errorf("%d jobs, interleave %v, %d MiB available: %v", len(c.jobs), c.interleave, c.mib, err)
		}
	}
	// Ranks hold buffers of their own sizes: rank r one of (r+1) Mi
	// words, 8, 16, 24 and 32 MiB, 80 MiB held twice (by hand).
	byRank := realrun.Job{Name: "byrank", Data: two[0].Data, Schedule: sim.Schedule{Buffers: func(r int) []int64 { return []int64{int64(r+1) << 20} }}}
	if err := memoryRoom([]realrun.Job{byRank}, 4, false, avail(159)); err == nil || !strings.Contains(err.Error(), "byrank's buffers on 4 ranks") {
		t.Errorf("160 MiB of buffers by rank, 159 MiB available: %v", err)
	}
	if err := memoryRoom([]realrun.Job{byRank}, 4, false, avail(160)); err != nil {
		t.Errorf("160 MiB of buffers by rank, 160 MiB available: %v", err)
	}
	if err := memoryRoom(two, 4, true, fakeProc(nil)); err != nil {
		t.Errorf("without /proc/meminfo: %v", err)
	}
}

// RefuseUnderLauncher refuses validate --real in one of several processes
// a launcher started, with or without --np, and lets it run alone or in
// a launcher's only process (a batch script's step); a launcher's
// variables that are not a rank of a size are an error.
func TestRefuseUnderLauncher(t *testing.T) {
	// The other launchers' variables, read before Open MPI's or after,
	// are cleared: the test may itself run under one.
	for _, v := range []string{"COLLSIM_RANK", "COLLSIM_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS"} {
		t.Setenv(v, "")
	}
	for _, c := range []struct {
		rank, size string
		np         int
		want       string // "" for no refusal
	}{
		{"", "", 2, ""},
		{"0", "1", 2, ""},
		{"0", "1", 0, ""},
		{"1", "2", 2, "--np 2 under a launcher that started 2 processes (this is rank 1)"},
		{"0", "3", 0, "a launcher started 3 processes (this is rank 0)"},
		{"2", "2", 2, "is not a rank of"},
		{"x", "2", 2, "must be whole numbers"},
	} {
		t.Setenv("OMPI_COMM_WORLD_RANK", c.rank)
		t.Setenv("OMPI_COMM_WORLD_SIZE", c.size)
		err := RefuseUnderLauncher(c.np)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("rank %q of %q, --np %d: %v; want %q", c.rank, c.size, c.np, err, c.want)
		}
	}
}
