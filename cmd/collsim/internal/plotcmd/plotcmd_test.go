package plotcmd

import (
	"strings"
	"testing"
)

// A swept setting whose values carry units is drawn in them (a new user's
// trial: link.bandwidth of 100Gbit/s was drawn as "2e+10" with no unit,
// and a series of "10GB/s" had no column name in its legend), and --where
// keeps one library's rows where a line was the mean of two. By hand:
// 100 and 200 Gbit/s are 12.5 and 25 GB/s; ompi's rows only.
func TestUnitsAndWhere(t *testing.T) {
	table, err := ReadTable("r.csv", strings.NewReader(`link.bandwidth,host.reduce_bandwidth,algo,time_s
100Gbit/s,10GB/s,ompi,0.004
200Gbit/s,10GB/s,ompi,0.002
100Gbit/s,10GB/s,mpich,0.010
200Gbit/s,10GB/s,mpich,0.009
`))
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{X: "link.bandwidth", Y: "time_s", Series: "host.reduce_bandwidth", Where: []string{"algo=ompi"}}
	fig, _, err := o.Figure(table)
	if err != nil {
		t.Fatal(err)
	}
	p := fig.Panels[0]
	if p.XLabel != "link.bandwidth (GB/s)" || p.YLabel != "time (s)" {
		t.Errorf("labels %q, %q", p.XLabel, p.YLabel)
	}
	if len(p.Lines) != 1 || p.Lines[0].Name != "host.reduce_bandwidth 10GB/s" {
		t.Fatalf("lines %+v", p.Lines)
	}
	l := p.Lines[0]
	if len(l.X) != 2 || l.X[0] != 12.5 || l.X[1] != 25 || l.Y[0] != 0.004 || l.Y[1] != 0.002 {
		t.Errorf("points x %v y %v; want 12.5, 25 GB/s and ompi's 0.004, 0.002 s", l.X, l.Y)
	}
	for _, bad := range []string{"algo", "algo=none", "nosuch=1"} {
		o.Where = []string{bad}
		if _, _, err := o.Figure(table); err == nil {
			t.Errorf("--where %s: accepted", bad)
		}
	}
}
