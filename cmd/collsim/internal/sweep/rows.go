package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/collsim/collsim"
)

// Formats of the output.
const (
	CSV   = "csv"
	JSONL = "jsonl"
)

// leading are the first columns of every row: the point's index, the
// sweep's point count and its hash (merge checks all three).
var leading = []string{"point", "points", "sweep"}

// trailing are the last: the point's wall time and its error, if any.
var trailing = []string{"wall_s", "error"}

// resultFields are the result's scalar fields (collsim run --json's), in
// the struct's order: the row's middle columns.
var resultFields = func() []reflect.StructField {
	var out []reflect.StructField
	t := reflect.TypeFor[collsim.Result]()
	for i := range t.NumField() {
		f := t.Field(i)
		name := jsonName(f)
		k := f.Type.Kind()
		if k == reflect.Pointer {
			k = f.Type.Elem().Kind()
		}
		if name == "" || name == "wall_s" || name == "wall_total_s" || k == reflect.Slice || k == reflect.Struct || name == "partitions" {
			continue
		}
		out = append(out, f)
	}
	return out
}()

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// Columns are the output's columns: leading, the axes (as the sweep file
// names them), the result's fields, and trailing. A result field that an
// axis already names is written as "result_" + its name (an axis's
// algo=ompi beside the algorithm the library chose, machine=file.yaml
// beside the machine's name).
func (s *Spec) Columns() []string {
	cols := slices.Clone(leading)
	cols = append(cols, s.axisKeys()...)
	for _, f := range resultFields {
		name := jsonName(f)
		if slices.Contains(cols, name) || slices.Contains(trailing, name) {
			name = "result_" + name
		}
		cols = append(cols, name)
	}
	return append(cols, trailing...)
}

// row is one point's values, in Columns' order: nil, string, bool, int64,
// uint64 or float64.
func (s *Spec) row(o outcome) []any {
	vals := []any{int64(o.point), int64(s.Points()), s.Hash}
	for _, v := range s.AxisValues(o.point) {
		vals = append(vals, typed(v))
	}
	var r reflect.Value
	if o.result != nil {
		r = reflect.ValueOf(o.result).Elem()
	}
	for _, f := range resultFields {
		if !r.IsValid() {
			vals = append(vals, nil)
			continue
		}
		v := r.FieldByIndex(f.Index)
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				vals = append(vals, nil)
				continue
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.String:
			vals = append(vals, v.String())
		case reflect.Bool:
			vals = append(vals, v.Bool())
		case reflect.Int, reflect.Int32, reflect.Int64:
			vals = append(vals, v.Int())
		case reflect.Uint, reflect.Uint32, reflect.Uint64:
			vals = append(vals, v.Uint())
		case reflect.Float64, reflect.Float32:
			vals = append(vals, v.Float())
		default:
			panic("sweep: result field of kind " + v.Kind().String())
		}
	}
	vals = append(vals, o.wall.Seconds())
	if o.err != nil {
		vals = append(vals, oneLine(o.err.Error()))
	} else {
		vals = append(vals, nil)
	}
	return vals
}

// oneLine keeps an error on one line, so that every row is one line of the
// file (merge and --resume read rows as lines).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// text is a value as a CSV field: numbers as Go's shortest exact form, so
// that a value reads back as the same float.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	panic(fmt.Sprintf("sweep: value %T", v))
}

// writer writes rows in one format.
type writer struct {
	w      io.Writer
	format string
	cols   []string
	buf    bytes.Buffer
	csv    *csv.Writer // onto buf, made once (it has a 4 KiB buffer of its own)
}

// header writes the CSV header (JSON Lines have none).
func (w *writer) header() error {
	if w.format != CSV {
		return nil
	}
	return w.line(func(c *csv.Writer) error { return c.Write(w.cols) })
}

func (w *writer) line(write func(*csv.Writer) error) error {
	w.buf.Reset()
	if w.csv == nil {
		w.csv = csv.NewWriter(&w.buf)
	}
	if err := write(w.csv); err != nil {
		return err
	}
	w.csv.Flush()
	if err := w.csv.Error(); err != nil {
		return err
	}
	_, err := w.w.Write(w.buf.Bytes())
	return err
}

// write writes one row.
func (w *writer) write(vals []any) error {
	if w.format == CSV {
		fields := make([]string, len(vals))
		for i, v := range vals {
			fields[i] = text(v)
		}
		return w.line(func(c *csv.Writer) error { return c.Write(fields) })
	}
	w.buf.Reset()
	w.buf.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		k, _ := json.Marshal(w.cols[i])
		w.buf.Write(k)
		w.buf.WriteByte(':')
		if f, ok := v.(float64); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
			w.buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64)) // as the CSV, not json's exponent form
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		w.buf.Write(b)
	}
	w.buf.WriteString("}\n")
	_, err := w.w.Write(w.buf.Bytes())
	return err
}

// AxisColumns are the axes of a sweep output's columns (between the
// leading columns and the result's, which start with the collective, as
// "result_collective" where an axis took its name), or nil for another
// table.
func AxisColumns(cols []string) []string {
	if len(cols) < len(leading) || !slices.Equal(cols[:len(leading)], leading) {
		return nil
	}
	first := jsonName(resultFields[0])
	end := slices.Index(cols, "result_"+first)
	if end < 0 {
		end = slices.Index(cols, first)
	}
	if end < len(leading) {
		return nil
	}
	return slices.Clone(cols[len(leading):end])
}
