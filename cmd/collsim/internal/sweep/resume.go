package sweep

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/collsim/collsim/configs"
)

// resume reads the rows an earlier run of s wrote to the file name, for
// --resume: the points they hold are not run again. A row cut short by a
// killed run is removed from the file (its point runs again). It refuses
// a file of another sweep or other columns, and rows outside the plan's
// shard.
func (s *Spec) resume(name, format string, pl *Plan) (map[int]bool, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(configs.BoundedTable(f, "a sweep's output"))
	done := map[int]bool{}
	seen := map[int]int{} // point -> line
	var good int64        // bytes of whole rows
	lineNo := 0
	for {
		line, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(line) == 0 {
			break
		}
		lineNo++
		if !bytes.HasSuffix(line, []byte{'\n'}) {
			break // cut short: truncated below
		}
		if bytes.HasSuffix(line, []byte("\r\n")) {
			// (It was "its columns are not this sweep's": a new user's
			// trial.)
			return nil, fmt.Errorf("%s:%d: its lines end in CR LF (saved by a Windows editor?), and a resumed sweep appends LF lines; convert it (dos2unix %s) or give another -o", name, lineNo, name)
		}
		if format == CSV && lineNo == 1 && !bytes.HasPrefix(line, []byte("{")) {
			w := &writer{format: CSV, cols: s.Columns()}
			var want bytes.Buffer
			w.w = &want
			if err := w.header(); err != nil {
				return nil, err
			}
			if !bytes.Equal(line, want.Bytes()) {
				return nil, fmt.Errorf("%s:1: its columns are not this sweep's; give another -o, or remove the file to start again", name)
			}
			good += int64(len(line))
			continue
		}
		if lineNo == 1 && (format == CSV) != !bytes.HasPrefix(line, []byte("{")) {
			return nil, fmt.Errorf("%s:1: it holds %s, not %s; give --format or a file name that says which (.csv, .jsonl)", name, otherFormat(format), format)
		}
		k, err := rowKey(format, line)
		if err == nil {
			var keys []string
			if format != CSV {
				keys = s.Columns()
			}
			err = checkRow(format, line, len(s.Columns()), keys)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w; remove the row (or the file) to resume", name, lineNo, err)
		}
		if k.sweep != s.Hash || k.points != s.Points() {
			return nil, fmt.Errorf("%s:%d: a row of sweep %s (%d points); %s is sweep %s (%d points) now: it or a machine or noise-trace file it names changed, so the rows would not match it. Give another -o, or remove the file to start again", name, lineNo, k.sweep, k.points, s.File, s.Hash, s.Points())
		}
		if !pl.InShard(k.point) {
			return nil, fmt.Errorf("%s:%d: point %d is not in shard %d/%d; resume with the --shard the file was written with", name, lineNo, k.point, pl.Shard, pl.Shards)
		}
		if at, twice := seen[k.point]; twice {
			return nil, fmt.Errorf("%s:%d: point %d again (line %d has it); remove one of the two rows to resume", name, lineNo, k.point, at)
		}
		if err := s.checkAxes(format, line, k.point); err != nil {
			return nil, fmt.Errorf("%s:%d: %w; remove the row (its point then runs again) to resume", name, lineNo, err)
		}
		seen[k.point] = lineNo
		done[k.point] = true
		good += int64(len(line))
	}
	if format == CSV && good == 0 {
		return nil, fmt.Errorf("%s: no header; remove the file to start again", name)
	}
	return done, f.Truncate(good)
}

func otherFormat(format string) string {
	if format == CSV {
		return "JSON Lines"
	}
	return "CSV"
}

// checkAxes says whether a row of point p holds p's axis values, as this
// sweep writes them: a row edited by hand (another size, another
// algorithm) would otherwise stand for a point it did not measure.
func (s *Spec) checkAxes(format string, line []byte, p int) error {
	var want bytes.Buffer
	w := &writer{w: &want, format: format, cols: s.Columns()}
	if err := w.write(s.row(outcome{point: p})); err != nil {
		return err
	}
	n := len(leading) + len(s.Axes)
	got, err := leadingCells(format, line, n)
	if err != nil {
		return err
	}
	wantCells, err := leadingCells(format, want.Bytes(), n)
	if err != nil {
		return err
	}
	for i, key := range s.axisKeys() {
		if g, w := got[len(leading)+i], wantCells[len(leading)+i]; g != w {
			return fmt.Errorf("point %d has %s %s, but the row says %s", p, key, w, g)
		}
	}
	return nil
}

// leadingCells are the first n cells of a row, as written: CSV fields, or
// JSON values in the object's order.
func leadingCells(format string, line []byte, n int) ([]string, error) {
	if format == CSV {
		r := csv.NewReader(bytes.NewReader(line))
		r.FieldsPerRecord = -1
		fields, err := r.Read()
		if err != nil || len(fields) < n {
			return nil, fmt.Errorf("not a row of %d columns or more", n)
		}
		return fields[:n], nil
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var cells []string
	for len(cells) < n && dec.More() {
		if _, err := dec.Token(); err != nil { // the key
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		cells = append(cells, string(v))
	}
	if len(cells) < n {
		return nil, fmt.Errorf("not a row of %d columns or more", n)
	}
	return cells, nil
}

// sortRows puts the rows of the sweep output name in point order, if they
// are not: it writes them to a file beside it and renames that over it.
func sortRows(name, format string) error {
	data, err := configs.ReadTable(name, "a sweep's output")
	if err != nil {
		return err
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	var head [][]byte
	if format == CSV && len(lines) > 0 {
		head, lines = lines[:1], lines[1:]
	}
	points := make([]int, len(lines))
	for i, l := range lines {
		k, err := rowKey(format, l)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, i+1+len(head), err)
		}
		points[i] = k.point
	}
	if slices.IsSorted(points) {
		return nil
	}
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(points[a], points[b]) })
	var out bytes.Buffer
	for _, h := range head {
		out.Write(h)
	}
	for _, i := range order {
		out.Write(lines[i])
	}
	tmp := name + ".sorting"
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
