package sim

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// element returns the buffer index of a region's element j, from the
// definition: block j/Block starts Stride*(j/Block) after Off.
func element(r Region, j int64) int64 {
	if r.Block == 0 || r.Block >= r.Count {
		return r.Off + j
	}
	return r.Off + j/r.Block*r.Stride + j%r.Block
}

// TestRegionSpanNearTheLimit: a valid vector whose Count + Block would
// wrap still spans what it covers.
func TestRegionSpanNearTheLimit(t *testing.T) {
	r := Region{Count: math.MaxInt64 - 1, Block: 1 << 62, Stride: 1 << 62}
	if why := r.invalid(); why != "" {
		t.Fatalf("%+v refused: %s", r, why)
	}
	if n := r.Runs(); n != 2 {
		t.Errorf("%+v has %d runs, want 2", r, n)
	}
	if lo, hi := r.Span(); lo != 0 || hi != math.MaxInt64-1 {
		t.Errorf("%+v spans %d..%d, want 0..%d", r, lo, hi, int64(math.MaxInt64-1))
	}
}

func TestRegionByHand(t *testing.T) {
	buf := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	for _, c := range []struct {
		r      Region
		want   []uint64
		lo, hi int64
	}{
		{Region{Off: 2, Count: 3}, []uint64{2, 3, 4}, 2, 5},
		// Bruck's round 1 on 8 blocks of one element: the indices with
		// bit 1 set are 2,3 and 6,7: blocks of 2 every 4 from 2.
		{Region{Off: 2, Count: 4, Block: 2, Stride: 4}, []uint64{2, 3, 6, 7}, 2, 8},
		// On 11 blocks: 2,3, 6,7 and 10, a short last block.
		{Region{Off: 2, Count: 5, Block: 2, Stride: 4}, []uint64{2, 3, 6, 7, 10}, 2, 11},
		{Region{Off: 9, Count: 4, Block: 1, Stride: -1}, []uint64{9, 8, 7, 6}, 6, 10}, // backwards
		{Region{Off: 8, Count: 6, Block: 2, Stride: -3}, []uint64{8, 9, 5, 6, 2, 3}, 2, 10},
		{Region{Off: 1, Count: 2, Block: 5, Stride: 7}, []uint64{1, 2}, 1, 3}, // one block: contiguous
		{Region{Off: 4, Count: 0, Block: 2, Stride: 3}, nil, 4, 4},
	} {
		if why := c.r.invalid(); why != "" {
			t.Fatalf("%+v: %s", c.r, why)
		}
		if got := c.r.Gather(nil, buf); !slices.Equal(got, c.want) {
			t.Errorf("%+v gathers %v, want %v", c.r, got, c.want)
		}
		if lo, hi := c.r.Span(); lo != c.lo || hi != c.hi {
			t.Errorf("%+v spans %d..%d, want %d..%d", c.r, lo, hi, c.lo, c.hi)
		}
		out := make([]uint64, len(buf))
		c.r.Scatter(out, c.want, nil)
		for j, v := range c.want {
			if out[v] != v {
				t.Errorf("%+v scatters element %d to %v, want index %d", c.r, j, out, v)
			}
		}
	}
}

func TestRegionRefusals(t *testing.T) {
	for name, r := range map[string]Region{
		"negative count":       {Count: -1},
		"negative offset":      {Off: -1, Count: 1},
		"negative block":       {Count: 4, Block: -1, Stride: 2},
		"overlapping blocks":   {Count: 4, Block: 2, Stride: 1},
		"zero stride":          {Count: 4, Block: 2},
		"backwards before 0":   {Off: 2, Count: 4, Block: 1, Stride: -1},
		"past the last index":  {Off: math.MaxInt64 - 3, Count: 4, Block: 2, Stride: 4},
		"a stride that wraps":  {Off: 1, Count: 6, Block: 2, Stride: math.MaxInt64 / 2},
		"an offset that wraps": {Off: math.MaxInt64, Count: 2},
		// Count + Block wraps: counting the blocks must not.
		"blocks past the last index, counted without wrapping": {Count: math.MaxInt64, Block: 2, Stride: 4},
		"a second block before 0, counted without wrapping":    {Off: 5, Count: 1<<62 + 3, Block: 1 << 62, Stride: -(1 << 62)},
	} {
		if r.invalid() == "" {
			t.Errorf("%s: %+v accepted", name, r)
		}
		prog := []Program{{{Kind: OpSend, Peer: 1, Bytes: 8 * r.Count, Data: r}}, {{Kind: OpRecv, Peer: 0, Bytes: 8 * max(r.Count, 0)}}}
		if _, err := run(t, prog, Config{}); err == nil {
			t.Errorf("%s: a send of %+v ran", name, r)
		}
	}
}

// TestRegionProperty checks Gather, Scatter and Span against the
// definition for random vectors.
func TestRegionProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		block := rapid.Int64Range(0, 6).Draw(t, "block")
		count := rapid.Int64Range(0, 30).Draw(t, "count")
		stride := rapid.Int64Range(-12, 12).Draw(t, "stride")
		off := rapid.Int64Range(0, 200).Draw(t, "off")
		r := Region{Off: off, Count: count, Block: block, Stride: stride}
		if r.invalid() != "" {
			t.Skip()
		}
		lo, hi := r.Span()
		buf := make([]uint64, hi+3)
		for i := range buf {
			buf[i] = uint64(i)
		}
		got := r.Gather(nil, buf)
		seen := map[int64]bool{}
		wantLo, wantHi := off, off
		for j := range count {
			e := element(r, j)
			if got[j] != uint64(e) {
				t.Fatalf("%+v element %d: %d, want %d", r, j, got[j], e)
			}
			if seen[e] {
				t.Fatalf("%+v touches %d twice", r, e)
			}
			seen[e] = true
			if j == 0 || e < wantLo {
				wantLo = e
			}
			if j == 0 || e+1 > wantHi {
				wantHi = e + 1
			}
		}
		if int64(len(got)) != count || lo != wantLo || hi != wantHi {
			t.Fatalf("%+v: %d elements spanning %d..%d, want %d spanning %d..%d", r, len(got), lo, hi, count, wantLo, wantHi)
		}
		// Scattering a prefix writes exactly the prefix's elements.
		n := rapid.Int64Range(0, count).Draw(t, "prefix")
		out := make([]uint64, len(buf))
		src := make([]uint64, n)
		for j := range src {
			src[j] = uint64(1000 + j)
		}
		r.Scatter(out, src, nil)
		for j := range n {
			if out[element(r, j)] != uint64(1000+j) {
				t.Fatalf("%+v: element %d not scattered", r, j)
			}
			out[element(r, j)] = 0
		}
		if slices.ContainsFunc(out, func(v uint64) bool { return v != 0 }) {
			t.Fatalf("%+v: scattering %d elements wrote elsewhere: %v", r, n, out)
		}
	})
}

// TestStridedMessagesAndCopies runs a vector send into a backwards receive
// and a strided local copy, with a reduction, through the executor.
func TestStridedMessagesAndCopies(t *testing.T) {
	progs := []Program{
		{{Kind: OpSend, Peer: 1, Bytes: 32, Data: Region{Off: 1, Count: 4, Block: 2, Stride: 3}}}, // 1,2, 4,5
		{
			{Kind: OpRecv, Peer: 0, Bytes: 32, Data: Region{Off: 3, Count: 4, Block: 1, Stride: -1}}, // into 3,2,1,0
			{Kind: OpRecv, Peer: 0, Tag: 1, Bytes: 16, Reduce: true, Data: Region{Off: 4, Count: 2, Block: 1, Stride: 2}, After: []int32{0}},
			{Kind: OpCalc, Src: Region{Off: 0, Count: 4, Block: 2, Stride: 4}, Data: Region{Buf: 1, Off: 0, Count: 4}, After: []int32{1}},
		},
	}
	progs[0] = append(progs[0], Op{Kind: OpSend, Peer: 1, Tag: 1, Bytes: 16, Data: Region{Off: 0, Count: 2}})
	data := [][][]uint64{{{10, 11, 12, 13, 14, 15, 16, 17}}, {{0, 0, 0, 0, 1, 1, 1, 1}, make([]uint64, 4)}}
	if _, err := run(t, progs, Config{Data: data, Network: RandomLatency(50)}); err != nil {
		t.Fatal(err)
	}
	// Rank 1's buffer 0: 15,14,12,11 at 0..3, then 1+10 at 4, 1 at 5, 1+11 at 6.
	if got, want := data[1][0], []uint64{15, 14, 12, 11, 11, 1, 12, 1}; !slices.Equal(got, want) {
		t.Fatalf("rank 1 buffer 0: %v, want %v", got, want)
	}
	// The copy takes elements 0,1 and 4,5 of buffer 0.
	if got, want := data[1][1], []uint64{15, 14, 11, 1}; !slices.Equal(got, want) {
		t.Fatalf("rank 1 buffer 1: %v, want %v", got, want)
	}
}

// FuzzRegion: any region is either refused or gathers and scatters within
// its span, never out of it (go test ./sim -fuzz FuzzRegion).
func FuzzRegion(f *testing.F) {
	f.Add(int64(2), int64(5), int64(2), int64(4))
	f.Add(int64(9), int64(4), int64(1), int64(-1))
	f.Add(int64(math.MaxInt64-3), int64(4), int64(2), int64(4))
	f.Add(int64(1), int64(6), int64(2), int64(math.MaxInt64/2))
	f.Add(int64(0), int64(math.MaxInt64), int64(2), int64(4))
	f.Add(int64(0), int64(math.MaxInt64-1), int64(1<<62), int64(1<<62))
	f.Fuzz(func(t *testing.T, off, count, block, stride int64) {
		r := Region{Off: off, Count: count, Block: block, Stride: stride}
		if r.invalid() != "" {
			return
		}
		lo, hi := r.Span()
		if lo < 0 || hi < lo || hi-lo < count {
			t.Fatalf("%+v spans %d..%d for %d elements", r, lo, hi, count)
		}
		if hi > 1<<16 {
			return // valid, but too big to hold here
		}
		buf := make([]uint64, hi)
		src := make([]uint64, count)
		for i := range src {
			src[i] = uint64(i + 1)
		}
		r.Scatter(buf, src, nil)
		if got := r.Gather(nil, buf); !slices.Equal(got, src) {
			t.Fatalf("%+v: gathered %v after scattering %v", r, got, src)
		}
		written := 0
		for _, v := range buf[:lo] {
			written += int(min(v, 1))
		}
		if written != 0 {
			t.Fatalf("%+v wrote below its span", r)
		}
	})
}
