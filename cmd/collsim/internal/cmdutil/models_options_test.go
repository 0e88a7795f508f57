package cmdutil

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/collsim/collsim/collectives"
)

// TestOptionsApply: an option is let through when some algorithm of the
// run takes it, and for the machine's node and group sizes; refused when
// none takes it, and with libraries alone the options they set themselves.
func TestOptionsApply(t *testing.T) {
	for _, tc := range []struct {
		c     collectives.Collective
		algos string
		args  []string
		ok    bool
	}{
		{collectives.Allreduce, "ring,segmented_ring", []string{"--segment", "64"}, true},
		// A library sets its segments and inner algorithms itself: they
		// changed nothing, silently (a new user's trial); --overlap and
		// --root apply to what it runs, and with an algorithm in the list
		// the option is that algorithm's.
		{collectives.Allreduce, "ompi", []string{"--segment", "64"}, false},
		{collectives.Allreduce, "ompi5,mpich", []string{"--inner", "ring"}, false},
		{collectives.Allreduce, "ompi", []string{"--overlap"}, true},
		{collectives.Bcast, "mpich4", []string{"--root", "3"}, true},
		{collectives.Allreduce, "ompi,segmented_ring", []string{"--segment", "64"}, true},
		{collectives.Allreduce, "ring", []string{"--node-size", "4", "--group-size", "8"}, true},
		{collectives.Bcast, "", []string{"--root", "3"}, true},
		{collectives.Allreduce, "suara", []string{"--groups", "2", "--steps", "3", "--inner", "ring"}, true},
		{collectives.Allreduce, "ring", []string{"--segment", "64"}, false},
		{collectives.Allreduce, "", []string{"--root", "3"}, false},
		{collectives.Alltoall, "linear", []string{"--overlap"}, false},
		// A default asks for nothing (a helper's audit: scripts pass
		// --root 0 to every collective).
		{collectives.Allreduce, "ring", []string{"--root", "0", "--segment", "0", "--overlap=false"}, true},
		// --overlap in algorithms the first table missed.
		{collectives.Alltoall, "two_procs", []string{"--overlap"}, true},
		{collectives.Bcast, "smp", []string{"--overlap"}, true},
		{collectives.Barrier, "han", []string{"--overlap"}, true},
	} {
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var s ShapeFlags
		s.Register(f)
		f.Int("root", 0, "")
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := OptionsApply(f, tc.c, tc.algos); (err == nil) != tc.ok {
			t.Errorf("%s -a %q %v: %v; want accepted %v", tc.c, tc.algos, tc.args, err, tc.ok)
		}
	}
}
