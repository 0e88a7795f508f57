package collsim_test

import (
	"runtime"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/workloads/dnn"
	"github.com/collsim/collsim/workloads/fft"
	"github.com/collsim/collsim/workloads/redist"
	"github.com/collsim/collsim/workloads/tiles"
)

// The workloads' scale targets (issue: GPT-3 step under 60 s and 4 GiB,
// the strategy search under 10 minutes, a 4096^3 FFT on 4,096 ranks under
// 60 s, on 2 cores). Benchmarks, not tests: go test -run - -bench
// 'GPT3|Search|FFT4096' -benchtime 1x . (compare runs with benchstat).

func gpu1024(b *testing.B) *configs.Machine {
	src, data, err := configs.Source("gpu-cluster")
	if err != nil {
		b.Fatal(err)
	}
	m, err := configs.WithOverrides(src, data, []configs.Override{override(b, "network.fat_tree.levels", "3")})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkGPT3Step(b *testing.B) {
	e := collsim.Experiment{Machine: gpu1024(b), Network: collsim.Flow, Seed: 1}
	j := dnn.Job{Model: dnn.GPT3(), Device: dnn.Devices["a100"], Strategy: dnn.Strategy{DP: 8, TP: 8, PP: 16, Microbatches: 64}}
	for b.Loop() {
		r, err := e.RunDNN(j, false)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.Step, "simulated_s")
	}
}

func BenchmarkStrategySearch(b *testing.B) {
	e := collsim.Experiment{Machine: gpu1024(b), Network: collsim.Flow, Seed: 1}
	base := dnn.Job{Model: dnn.GPT3(), Device: dnn.Devices["a100"], NodeSize: 8, Strategy: dnn.Strategy{MicroBatch: 1}}
	s := collsim.Strategies(base, 1024, 512)
	for b.Loop() {
		if _, err := e.Search(base, s, runtime.GOMAXPROCS(0), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFFT4096(b *testing.B) {
	m, err := configs.Resolve("xc40")
	if err != nil {
		b.Fatal(err)
	}
	e := collsim.Experiment{Machine: m, Network: collsim.Flow, Seed: 1}
	j := fft.Job{Nx: 4096, Ny: 4096, Nz: 4096, Pr: 64, Pc: 64, FLOPs: 20e9, Pack: "device", PackRate: 100e9}
	for b.Loop() {
		if _, err := e.RunFFT(j, false); err != nil {
			b.Fatal(err)
		}
	}
}

func override(b *testing.B, path, value string) configs.Override {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(value), &n); err != nil {
		b.Fatal(err)
	}
	return configs.Override{Path: path, Value: n.Content[0], Where: "benchmark"}
}

// BenchmarkCholesky64 is the tile DAGs' scale target (issue: a 64 x 64
// tile Cholesky on 8 devices under 10 s): N = 65,536 in tiles of 1,024 on
// gpu-node-pcie's 8 GPUs, flow network.
func BenchmarkCholesky64(b *testing.B) {
	m, err := configs.Resolve("gpu-node-pcie")
	if err != nil {
		b.Fatal(err)
	}
	e := collsim.Experiment{Machine: m, Network: collsim.Flow, Seed: 1}
	j := tiles.Job{Algorithm: "cholesky", Tiles: 64, B: 1024, Elem: 8, Devices: 8, Peak: 9.7e12, HalfTile: 256, Capacity: 2048, Scheduler: "locality"}
	for b.Loop() {
		r, err := e.RunTiles(j)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.Elapsed, "simulated_s")
	}
}

// BenchmarkRedistribute16K: a 16,384^2 matrix of doubles (2 GiB) from a
// 16x1 to a 1x16 grid of 64x64 tiles (every rank to every rank, 65,536
// messages) on the flow network.
func BenchmarkRedistribute16K(b *testing.B) {
	m, err := configs.Resolve("small")
	if err != nil {
		b.Fatal(err)
	}
	e := collsim.Experiment{Machine: m, Network: collsim.Flow, Seed: 1}
	j := redist.Job{M: 16384, N: 16384, Elem: 8, From: redist.Layout{MB: 64, NB: 64, P: 16, Q: 1}, To: redist.Layout{MB: 64, NB: 64, P: 1, Q: 16},
		Schedule: "caterpillar", Messages: "tile", CopyRate: 10e9}
	for b.Loop() {
		if _, err := e.RunRedistribution(j); err != nil {
			b.Fatal(err)
		}
	}
}
