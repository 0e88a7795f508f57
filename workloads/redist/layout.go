// Package redist simulates the redistribution of a distributed matrix
// (the PaRSEC seed's problem, ScaLAPACK's PxGEMR2D): an M x N matrix of
// E-byte elements moves from one tiled distribution to another, 2D
// block-cyclic on one process grid to block-cyclic on another grid with
// another tile size, or to and from an irregular tile-to-owner map.
//
// A rank stores the tiles it owns one after another, in column-major
// order of the tiles (the tile column outer), each tile column-major and
// as tall and wide as it is (edge tiles are smaller): PaRSEC's tiled
// storage. What moves is the pieces where a tile of the source layout
// overlaps a tile of the target: each lies in one source tile and one
// target tile, so it has one sender and one receiver.
package redist

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Layout is how the matrix is cut into MB x NB tiles and which rank owns
// each: block-cyclic over a P x Q grid (ranks numbered row-major, rank =
// p Q + q, as BLACS's default grid), or, when Owners is set, the owner of
// tile (i, j) at Owners[i*tileColumns + j].
type Layout struct {
	MB, NB int
	P, Q   int
	Owners []int32
	// Name describes an irregular layout in output (its map file).
	Name string
}

// String describes the layout.
func (l *Layout) String() string {
	if l.Owners != nil {
		return fmt.Sprintf("map %s, %dx%d tiles", l.Name, l.MB, l.NB)
	}
	return fmt.Sprintf("%dx%d grid, %dx%d tiles", l.P, l.Q, l.MB, l.NB)
}

// tiles returns how many tile rows and columns cut an M x N matrix.
func (l *Layout) tiles(m, n int) (rows, cols int) {
	return (m + l.MB - 1) / l.MB, (n + l.NB - 1) / l.NB
}

// owner is the rank holding tile (i, j) of a layout cols tiles wide.
func (l *Layout) owner(i, j, cols int) int {
	if l.Owners != nil {
		return int(l.Owners[i*cols+j])
	}
	return (i%l.P)*l.Q + j%l.Q
}

// ranks is how many ranks the layout names: P x Q, or the largest owner
// in the map plus one.
func (l *Layout) ranks() int {
	if l.Owners == nil {
		return l.P * l.Q
	}
	n := 0
	for _, o := range l.Owners {
		n = max(n, int(o)+1)
	}
	return n
}

func (l *Layout) check(what string, m, n, ranks int) error {
	if l.MB < 1 || l.NB < 1 {
		return fmt.Errorf("%s layout: tiles of %dx%d elements; both at least 1", what, l.MB, l.NB)
	}
	if l.Owners == nil {
		if l.P < 1 || l.Q < 1 {
			return fmt.Errorf("%s layout: grid of %dx%d ranks; both at least 1", what, l.P, l.Q)
		}
		if l.P*l.Q > ranks {
			return fmt.Errorf("%s layout: a %dx%d grid needs %d ranks, the job has %d", what, l.P, l.Q, l.P*l.Q, ranks)
		}
		return nil
	}
	rows, cols := l.tiles(m, n)
	if len(l.Owners) != rows*cols {
		return fmt.Errorf("%s layout: the map %s gives %d owners, but a %dx%d matrix in %dx%d tiles has %d x %d = %d tiles", what, l.Name, len(l.Owners), m, n, l.MB, l.NB, rows, cols, rows*cols)
	}
	for k, o := range l.Owners {
		if o < 0 || int(o) >= ranks {
			return fmt.Errorf("%s layout: the map %s gives tile (%d, %d) to rank %d, but the job has ranks 0..%d", what, l.Name, k/cols, k%cols, o, ranks-1)
		}
	}
	return nil
}

// ParseMap reads an irregular layout's tile-to-owner map: one line per
// tile row, the owning rank of each tile of the row separated by spaces
// or commas; blank lines and text after # are ignored. Every row must
// have as many tiles as the first. Errors name source:line.
func ParseMap(source string, data []byte) (owners []int32, rows, cols int, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' })
		if len(fields) == 0 {
			continue
		}
		if rows > 0 && len(fields) != cols {
			return nil, 0, 0, fmt.Errorf("%s:%d: %d tiles in this row, %d in the rows before; every row of the map names one owner per tile column", source, line, len(fields), cols)
		}
		for _, f := range fields {
			v, err := strconv.ParseInt(f, 10, 32)
			if err != nil || v < 0 {
				return nil, 0, 0, fmt.Errorf("%s:%d: owner %q: give a rank, a whole number from 0", source, line, f)
			}
			owners = append(owners, int32(v))
		}
		cols = len(fields)
		rows++
	}
	if err := sc.Err(); err != nil {
		return nil, 0, 0, fmt.Errorf("%s:%d: %v", source, line+1, err)
	}
	if rows == 0 {
		return nil, 0, 0, fmt.Errorf("%s: no tiles; give one line per tile row, the owner of each tile separated by spaces", source)
	}
	return owners, rows, cols, nil
}
