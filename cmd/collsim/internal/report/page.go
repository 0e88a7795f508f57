// Package report writes self-contained HTML reports: `collsim report` of a
// results table, and the --html of every study.
package report

import (
	"bytes"
	"html/template"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
)

// Page is one self-contained HTML file: no scripts, styles, fonts or
// pictures from anywhere else (it opens offline and can be mailed).
type Page struct {
	Title    string
	Commands []string // the command lines that reproduce it
	Sections []Section
}

// Section is a heading and its content.
type Section struct {
	Heading string
	Notes   []string
	Body    template.HTML
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
pre, code { font-family: ui-monospace, monospace; font-size: 0.9em; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: left; white-space: nowrap; }
th { background: #f0f0f0; cursor: pointer; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { max-height: 32em; overflow: auto; }
.note { color: #555; }
.figure svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Commands}}<p>Reproduce with:</p>
<pre>{{range .Commands}}{{.}}
{{end}}</pre>{{end}}
{{range .Sections}}<h2>{{.Heading}}</h2>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{.Body}}
{{end}}
<script>
// Click a column's header to sort its table by it (numbers as numbers).
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var body = th.closest("table").tBodies[0];
    var rows = Array.from(body.rows);
    var down = th.dataset.sorted !== "up";
    rows.sort(function (a, b) {
      var x = a.cells[col].textContent, y = b.cells[col].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
      return down ? c : -c;
    });
    th.dataset.sorted = down ? "up" : "down";
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
</script>
</body>
</html>
`))

// Write writes the page.
func (p *Page) Write(w io.Writer) error { return page.Execute(w, p) }

// WriteFile writes the page into the file name.
func (p *Page) WriteFile(name string) error {
	out, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := p.Write(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

var xmlProlog = regexp.MustCompile(`(?s)^\s*<\?xml.*?\?>\s*(<!DOCTYPE[^>]*>\s*)?`)

// InlineSVG is an SVG document as an element of a page.
func InlineSVG(svg []byte) template.HTML {
	return template.HTML(`<div class="figure">` + string(xmlProlog.ReplaceAll(svg, nil)) + `</div>`)
}

// Figure is a plot as an element of a page.
func Figure(f *plotutil.Figure) (template.HTML, error) {
	var b bytes.Buffer
	if err := f.Render(&b, "svg"); err != nil {
		return "", err
	}
	return InlineSVG(b.Bytes()), nil
}

// Table is a table of text; columns numeric names those right-aligned. A
// header of empty names is left out (a table of facts). Text that is not
// UTF-8 (a results file's bytes) is shown with U+FFFD, as the page is
// UTF-8.
func Table(header []string, rows [][]string, numeric func(col int) bool) template.HTML {
	var b bytes.Buffer
	b.WriteString(`<div class="scroll"><table class="sortable">`)
	if strings.Join(header, "") != "" {
		b.WriteString("<thead><tr>")
		for _, h := range header {
			b.WriteString("<th>" + text(h) + "</th>")
		}
		b.WriteString("</tr></thead>")
	}
	b.WriteString("<tbody>\n")
	for _, r := range rows {
		b.WriteString("<tr>")
		for i, v := range r {
			if numeric != nil && numeric(i) {
				b.WriteString(`<td class="num">`)
			} else {
				b.WriteString("<td>")
			}
			b.WriteString(text(v) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>")
	return template.HTML(b.String())
}

// Pre is text as preformatted.
func Pre(s string) template.HTML { return template.HTML("<pre>" + text(s) + "</pre>") }

// text is s escaped for HTML, as valid UTF-8.
func text(s string) string { return template.HTMLEscapeString(strings.ToValidUTF8(s, "\uFFFD")) }
