package sweep

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/collsim/collsim/configs"
)

// key is what identifies a row: its point, the sweep's point count and
// hash (the leading columns).
type key struct {
	point, points int
	sweep         string
}

// rowKey reads a row's key from its line without decoding the rest: the
// leading columns are numbers and a hex hash, never quoted, and every row
// is one line (see oneLine), so merging a million rows is a matter of
// reading lines.
func rowKey(format string, line []byte) (key, error) {
	var fields [][]byte
	if format == CSV {
		fields = bytes.SplitN(line, []byte{','}, 4)
	} else {
		rest, ok := bytes.CutPrefix(line, []byte(`{"point":`))
		if ok {
			var points, sweep []byte
			var p []byte
			p, rest, _ = bytes.Cut(rest, []byte(`,"points":`))
			points, rest, _ = bytes.Cut(rest, []byte(`,"sweep":"`))
			sweep, _, ok = bytes.Cut(rest, []byte(`"`))
			fields = [][]byte{p, points, sweep, nil}
		}
		if !ok {
			fields = nil
		}
	}
	if len(fields) < 4 {
		if len(bytes.TrimSpace(line)) == 0 {
			// It was told "not a row", which did not say why (a new
			// user's trial).
			return key{}, errors.New("a blank line, which no sweep writes; remove it")
		}
		return key{}, errors.New("not a row of collsim sweep output (it starts with point, points and sweep)")
	}
	p, err1 := strconv.Atoi(string(fields[0]))
	n, err2 := strconv.Atoi(string(fields[1]))
	if err1 != nil || err2 != nil || p < 0 || p >= n || len(fields[2]) == 0 {
		return key{}, errors.New("not a row of collsim sweep output (point, points and sweep are not a point of a sweep)")
	}
	return key{point: p, points: n, sweep: string(fields[2])}, nil
}

// checkRow says whether line is a whole row: for CSV, cols fields, quoted
// as CSV quotes them; for JSON Lines, one JSON object (keys, if not nil,
// the columns it must hold in order). Rows cut or edited by hand are
// refused, not carried into an output that then cannot be read.
func checkRow(format string, line []byte, cols int, keys []string) error {
	if format != CSV {
		if !json.Valid(line) {
			return errors.New("not a JSON object (a row edited or cut?)")
		}
		if keys != nil {
			if got := jsonKeys(line); !slices.Equal(got, keys) {
				return fmt.Errorf("its keys are not this sweep's columns (%d keys, %d columns)", len(got), len(keys))
			}
		}
		return nil
	}
	fields, quoted, start := 1, false, true
	body := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case quoted && c == '"' && i+1 < len(body) && body[i+1] == '"':
			i++
		case quoted && c == '"':
			quoted = false
			if i+1 < len(body) && body[i+1] != ',' {
				return fmt.Errorf("a quoted field goes on after its closing quote, at byte %d", i+1)
			}
		case quoted:
		case c == '"' && start:
			quoted = true
		case c == '"':
			return fmt.Errorf("a quote inside an unquoted field, at byte %d", i+1)
		case c == ',':
			fields++
			start = true
			continue
		}
		start = false
	}
	if quoted {
		return errors.New("a quoted field never ends")
	}
	if fields != cols {
		return fmt.Errorf("%d fields, the header %d (a row edited or cut?)", fields, cols)
	}
	return nil
}

// jsonKeys are a JSON object's keys in the order written.
func jsonKeys(line []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			return keys
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// FormatOf is the format of an output file by its name: .jsonl (or
// .ndjson) is JSON Lines, anything else CSV.
func FormatOf(name string) string {
	if ext := strings.ToLower(filepath.Ext(name)); ext == ".jsonl" || ext == ".ndjson" {
		return JSONL
	}
	return CSV
}

// part is one input of a merge, read a row at a time.
type part struct {
	name   string
	r      *bufio.Reader
	lineNo int
	line   []byte
	key    key
	cols   int // CSV: the header's fields
}

// next reads the part's next row; false at its end.
func (p *part) next(format string) (bool, error) {
	line, err := p.r.ReadBytes('\n')
	if len(line) == 0 && err == io.EOF {
		return false, nil
	}
	if err != nil && err != io.EOF {
		return false, fmt.Errorf("%s: %w", p.name, err)
	}
	p.lineNo++
	if !bytes.HasSuffix(line, []byte{'\n'}) {
		return false, fmt.Errorf("%s:%d: the last row is cut short (a sweep killed while writing it?); run the sweep again with --resume to finish it", p.name, p.lineNo)
	}
	k, err := rowKey(format, line)
	if err == nil {
		err = checkRow(format, line, p.cols, nil)
	}
	if err != nil {
		return false, fmt.Errorf("%s:%d: %w", p.name, p.lineNo, err)
	}
	if p.line != nil && k.point <= p.key.point {
		return false, fmt.Errorf("%s:%d: point %d after point %d; a sweep writes its points in order (was the file edited?)", p.name, p.lineNo, k.point, p.key.point)
	}
	p.line, p.key = line, k
	return true, nil
}

type parts []*part

func (h parts) Len() int           { return len(h) }
func (h parts) Less(i, j int) bool { return h[i].key.point < h[j].key.point }
func (h parts) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *parts) Push(x any)        { *h = append(*h, x.(*part)) }
func (h *parts) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

// Merge joins sweep outputs (the shards of one sweep, in one format) into
// w: one header and every point's row, in point order, as one run of the
// whole sweep writes them. It refuses parts of different sweeps, a point
// given twice and a sweep with points missing.
func Merge(w io.Writer, names []string) error {
	if len(names) == 0 {
		return errors.New("give the sweep outputs to merge")
	}
	format := FormatOf(names[0])
	var h parts
	var header []byte
	var first key
	var firstName string
	for _, name := range names {
		if FormatOf(name) != format {
			return fmt.Errorf("%s is %s and %s is %s; merge parts of one format", names[0], format, name, FormatOf(name))
		}
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		p := &part{name: name, r: bufio.NewReaderSize(configs.BoundedTable(f, "a sweep's output"), 1<<20)}
		if format == CSV {
			line, err := p.r.ReadBytes('\n')
			if err != nil && err != io.EOF {
				return fmt.Errorf("%s: %w", name, err)
			}
			p.lineNo++
			switch {
			case len(line) == 0:
				return fmt.Errorf("%s: empty; a sweep's CSV starts with its header", name)
			case !bytes.HasPrefix(line, []byte("point,points,sweep,")):
				return fmt.Errorf("%s:1: not the header of collsim sweep output", name)
			case header == nil:
				header = line
				p.cols = bytes.Count(line, []byte{','}) + 1
			case !bytes.Equal(line, header):
				return fmt.Errorf("%s:1: its columns differ from %s's; merge parts of one sweep", name, names[0])
			default:
				p.cols = bytes.Count(line, []byte{','}) + 1
			}
		}
		ok, err := p.next(format)
		if err != nil {
			return err
		}
		if !ok {
			continue // a shard with no points (more shards than points)
		}
		if first.sweep == "" {
			first, firstName = p.key, name
		} else if p.key.sweep != first.sweep || p.key.points != first.points {
			return fmt.Errorf("%s:%d: a part of sweep %s (%d points), not of %s's sweep %s (%d points); merge the parts of one sweep", name, p.lineNo, p.key.sweep, p.key.points, firstName, first.sweep, first.points)
		}
		h = append(h, p)
	}
	if len(h) == 0 {
		return errors.New("the parts hold no rows")
	}
	heap.Init(&h)
	out := bufio.NewWriterSize(w, 1<<20)
	out.Write(header)
	want := 0
	var gaps [][2]int // points in no part: from, to (exclusive)
	for h.Len() > 0 {
		p := h[0]
		switch k := p.key; {
		case k.sweep != first.sweep || k.points != first.points:
			return fmt.Errorf("%s:%d: a row of sweep %s (%d points), not of %s (%d points)", p.name, p.lineNo, k.sweep, k.points, first.sweep, first.points)
		case k.point < want:
			return fmt.Errorf("%s:%d: point %d is also in another part; merge each shard once", p.name, p.lineNo, k.point)
		case k.point > want:
			gaps = append(gaps, [2]int{want, k.point})
			want = k.point
		}
		out.Write(p.line)
		want++
		ok, err := p.next(format)
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if want < first.points {
		gaps = append(gaps, [2]int{want, first.points})
	}
	if len(gaps) > 0 {
		return missing(gaps, first.points)
	}
	return out.Flush()
}

// missing is the error of a merge without the points of gaps.
func missing(gaps [][2]int, points int) error {
	n := 0
	var shown []string
	for _, g := range gaps {
		n += g[1] - g[0]
		if len(shown) < 5 {
			if g[1]-g[0] == 1 {
				shown = append(shown, strconv.Itoa(g[0]))
			} else {
				shown = append(shown, fmt.Sprintf("%d..%d", g[0], g[1]-1))
			}
		}
	}
	more := ""
	if len(gaps) > len(shown) {
		more = ", ..."
	}
	return fmt.Errorf("%d of the %d points are in no part (%s%s): is a shard missing or unfinished? (finish it with --resume)", n, points, strings.Join(shown, ", "), more)
}
