package realrun_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim/realrun"
)

// runLocal runs fn on every rank of a loopback mesh of size ranks and
// returns the ranks' errors.
func runLocal(t *testing.T, size int, fn func(r *realrun.Rank, rank int) error) []error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meshes, err := realrun.ConnectLocal(ctx, size, 42)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, size)
	var wg sync.WaitGroup
	for rank, m := range meshes {
		wg.Go(func() {
			r := realrun.NewRank(m)
			r.Timeout = 10 * time.Second
			errs[rank] = fn(r, rank)
			if errs[rank] != nil {
				m.Abort()
				return
			}
			errs[rank] = m.Close(time.Now().Add(10 * time.Second))
		})
	}
	wg.Wait()
	return errs
}

// TestEveryAlgorithmOverTCP runs every algorithm of the library for real,
// each rank a goroutine with its own sockets, several calls in a row on the
// same connections, and checks every rank's data.
func TestEveryAlgorithmOverTCP(t *testing.T) {
	algos := collectives.All()
	for _, p := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			t.Parallel()
			errs := runLocal(t, p, func(r *realrun.Rank, rank int) error {
				for _, a := range algos {
					for _, count := range []int64{0, 1, 7, 1000} {
						params := collectives.Params{Ranks: p, Count: count, Root: p / 2, NodeSize: 2, GroupSize: 2}
						s, err := a.Build(params)
						if err != nil {
							continue // unsupported here; the collective library tests say why
						}
						seed := uint64(count)*31 + uint64(p)
						data, err := a.RankData(params, seed, rank)
						if err != nil {
							return err
						}
						if err := r.Execute(s, data); err != nil {
							return fmt.Errorf("%s count %d: %w", a.ID(), count, err)
						}
						if err := a.VerifyRank(params, seed, rank, data); err != nil {
							return fmt.Errorf("%s count %d: %w", a.ID(), count, err)
						}
						if err := r.Barrier(); err != nil {
							return err
						}
					}
				}
				return nil
			})
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}
